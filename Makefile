# rocm-backend: the two commands a new user needs are `make demo` and `make test`.
#
#   make demo                  build the release library, build and run examples/demo.c
#   make test                  every test: Rust, C (+ ASan/UBSan), CMake consumer, Python
#   make install PREFIX=DIR    lib/, include/, lib/cmake/RocmBackend/, lib/pkgconfig/
#   make header                regenerate include/rocm_backend.h from src/ffi (commit it)
#   make python                build the library and pip-install bindings/python into .venv
#   make clean                 remove build outputs (target/, build/, .venv/ stay unless
#                              you run `make distclean`)
#
# Needs Rust (cargo), a C compiler and Python 3; no root. `make test` makes .venv itself and
# pip-installs cmake (only when none is on PATH), pytest, numpy, onnx and (optional)
# onnxruntime there when missing.

SHELL := /bin/bash
.DEFAULT_GOAL := demo

CARGO   ?= cargo
CC      ?= cc
CXX     ?= c++
PYTHON  ?= python3
PREFIX  ?= /usr/local
VERSION := $(shell sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)

# PROFILE picks the cargo profile of the library that demo, install, python and the C,
# CMake and Python tests use. `make test` runs those tests with TEST_PROFILE (dev: the
# library `cargo test` has just built, so it is compiled once).
PROFILE      ?= release
TEST_PROFILE ?= dev
# The dev library is built by `cargo test --no-run` (a no-op after `cargo test`): a plain
# `cargo build --lib` resolves features without the dev-dependencies and would rebuild the
# build dependencies (cbindgen) and the crate a second time. cargo test leaves the cdylib
# and staticlib in target/debug/deps (it only copies what `cargo build` asks for up to
# target/debug), so we copy them up ourselves.
ifeq ($(PROFILE),release)
  LIB_BUILD := $(CARGO) build --release --lib
  REL       := target/release
else ifeq ($(PROFILE),dev)
  LIB_BUILD := $(CARGO) test --no-run && \
               cp -p target/debug/deps/librocm_backend.so target/debug/deps/librocm_backend.a target/debug/
  REL       := target/debug
else
  $(error PROFILE must be release or dev, not $(PROFILE))
endif
SO      := $(REL)/librocm_backend.so
ARCHIVE := $(REL)/librocm_backend.a
BUILD   := build
VENV    := .venv
VPY     := $(VENV)/bin/python
P        = $(abspath $(DESTDIR)$(PREFIX))
space   := $() $()

# Native libraries a Rust staticlib needs on Linux, as printed by
# `cargo rustc --release --lib --crate-type staticlib -- --print native-static-libs`.
RB_NATIVE_STATIC_LIBS ?= gcc_s util rt pthread m dl c
NATIVE_LDLIBS := $(addprefix -l,$(RB_NATIVE_STATIC_LIBS))

WARN     := -Wall -Wextra -Werror
CFLAGS_T := -std=c99 -O1 -g $(WARN) -Iinclude
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

.PHONY: all lib demo test test-rust test-c test-cmake test-python header python install \
        venv clean distclean generate

all: lib

# The library (cdylib + staticlib + rlib) of PROFILE; cargo decides whether anything changed.
lib:
	$(LIB_BUILD)

$(BUILD):
	@mkdir -p $(BUILD)

demo: lib | $(BUILD)
	$(CC) -std=c99 -O2 $(WARN) -Iinclude examples/demo.c -o $(BUILD)/demo \
	    -L$(REL) -lrocm_backend -Wl,-rpath,$(CURDIR)/$(REL) -lm
	./$(BUILD)/demo

header:
	RB_BLESS=1 $(CARGO) test --test header

# ---------------------------------------------------------------------------------------
# Tests

test:
	@$(MAKE) --no-print-directory test-rust
	@$(MAKE) --no-print-directory PROFILE=$(TEST_PROFILE) test-c test-cmake test-python
	@echo
	@echo "make test: all suites passed (rust, c, c+asan/ubsan, cmake consumer, python)"

test-rust: | $(BUILD)
	@echo "== Rust tests (cargo test, dev profile) =="
	$(CARGO) test 2>&1 | tee $(BUILD)/.cargo-test.log | grep -E '^(test result|running [0-9]|    Finished|     Running|   Doc-tests|.*FAILED|.*panicked)' ; \
	    rc=$${PIPESTATUS[0]}; if [ $$rc -ne 0 ]; then cat $(BUILD)/.cargo-test.log; fi; exit $$rc

test-c: lib | $(BUILD)
	@echo "== C tests =="
	$(CC) -std=c99 $(WARN) -pedantic -Iinclude -c tests/c/header_c99.c -o $(BUILD)/header_c99.o
	@if command -v $(CXX) >/dev/null 2>&1; then \
	    echo "$(CXX) -std=c++17 $(WARN) -pedantic -Iinclude -c tests/c/header_cxx17.cpp"; \
	    $(CXX) -std=c++17 $(WARN) -pedantic -Iinclude -c tests/c/header_cxx17.cpp -o $(BUILD)/header_cxx17.o; \
	    echo "$(CXX) -std=c++17 $(WARN) -pedantic -Iinclude -x c++ -fsyntax-only include/rocm_backend.hpp"; \
	    $(CXX) -std=c++17 $(WARN) -pedantic -Iinclude -x c++ -fsyntax-only include/rocm_backend.hpp; \
	    echo "header: compiles as C99 and C++17; rocm_backend.hpp as C++17"; \
	else echo "header: compiles as C99; C++17 check skipped ($(CXX) not found)"; fi
	$(CC) $(CFLAGS_T) tests/c/abi.c -o $(BUILD)/abi -L$(REL) -lrocm_backend -Wl,-rpath,$(CURDIR)/$(REL) -lm
	$(CC) $(CFLAGS_T) tests/c/misuse.c -o $(BUILD)/misuse -L$(REL) -lrocm_backend -Wl,-rpath,$(CURDIR)/$(REL)
	./$(BUILD)/abi
	./$(BUILD)/misuse
	@echo "-- the same, built with $(SANITIZE) against the static library --"
	$(CC) $(CFLAGS_T) $(SANITIZE) tests/c/abi.c -o $(BUILD)/abi_asan $(ARCHIVE) $(NATIVE_LDLIBS)
	$(CC) $(CFLAGS_T) $(SANITIZE) tests/c/misuse.c -o $(BUILD)/misuse_asan $(ARCHIVE) $(NATIVE_LDLIBS)
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ./$(BUILD)/abi_asan
	MISUSE_QUIET=1 ASAN_OPTIONS=allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ./$(BUILD)/misuse_asan

test-cmake: lib venv
	@echo "== CMake package: install into a fresh prefix, build tests/cmake_consumer =="
	CARGO="$(CARGO)" CC="$(CC)" VENV="$(VENV)" MAKE="$(MAKE)" PROFILE="$(PROFILE)" \
	    bash tests/cmake_consumer/run.sh

test-python: lib venv | $(BUILD)
	@echo "== Python package: pip install ./bindings/python, then pytest =="
	RB_BUNDLE_LIBRARY=$(CURDIR)/$(SO) $(VPY) -m pip install -q --no-build-isolation --no-deps \
	    --force-reinstall ./bindings/python
	cd $(BUILD) && ../$(VPY) -m pytest -p no:cacheprovider ../bindings/python/tests
	@echo "== the op tests again, every call recorded into a graph and run at O0, O1 and O3 =="
	cd $(BUILD) && for m in O0 O1 O3; do RB_TEST_EXEC_MODE=$$m ../$(VPY) -m pytest -q -p no:cacheprovider \
	    ../bindings/python/tests/test_ops.py ../bindings/python/tests/test_rocm_backend.py || exit 1; done

# .venv with pytest, numpy, setuptools/wheel (to build our package), onnx (read by the ONNX
# import tests), onnxruntime (optional: the ONNX tests compare with it where it installs --
# 14 cases that are skipped without it -- and benches/resnet_onnx.py times it) and, when
# there is no cmake on PATH, cmake: all from PyPI, installed only when missing.
venv:
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	@$(VPY) -c 'import numpy, pytest, setuptools, wheel' 2>/dev/null || \
	    $(VPY) -m pip install -q --disable-pip-version-check numpy pytest 'setuptools>=64' wheel
	@$(VPY) -c 'import onnx' 2>/dev/null || \
	    $(VPY) -m pip install -q --disable-pip-version-check onnx
	@$(VPY) -c 'import onnxruntime' 2>/dev/null || \
	    $(VPY) -m pip install -q --disable-pip-version-check onnxruntime || \
	    echo "onnxruntime did not install (optional): the ONNX tests use the NumPy references"
	@command -v cmake >/dev/null 2>&1 || test -x $(VENV)/bin/cmake || \
	    $(VPY) -m pip install -q --disable-pip-version-check cmake

python: lib venv
	RB_BUNDLE_LIBRARY=$(CURDIR)/$(SO) $(VPY) -m pip install -q --no-build-isolation --no-deps \
	    --force-reinstall ./bindings/python
	@echo "rocm_backend installed into $(VENV): $(VPY) -c 'import rocm_backend as rb; print(rb.device_info())'"

# ---------------------------------------------------------------------------------------
# Install: relocatable (the CMake config and the .pc file find the prefix from their own
# location), so PREFIX may be any directory and the tree may be moved afterwards.

install: lib
	@test -n "$(PREFIX)" || { echo "PREFIX is empty"; exit 1; }
	install -d $(P)/lib/cmake/RocmBackend $(P)/lib/pkgconfig $(P)/include
	install -m 755 $(SO) $(P)/lib/librocm_backend.so
	install -m 644 $(ARCHIVE) $(P)/lib/librocm_backend.a
	install -m 644 include/rocm_backend.h $(P)/include/rocm_backend.h
	install -m 644 include/rocm_backend.hpp $(P)/include/rocm_backend.hpp
	sed -e 's|@RB_VERSION@|$(VERSION)|g' -e 's|@RB_NATIVE_STATIC_LIBS@|$(subst $(space),;,$(strip $(RB_NATIVE_STATIC_LIBS)))|g' \
	    cmake/RocmBackendConfig.cmake.in > $(P)/lib/cmake/RocmBackend/RocmBackendConfig.cmake
	sed -e 's|@RB_VERSION@|$(VERSION)|g' \
	    cmake/RocmBackendConfigVersion.cmake.in > $(P)/lib/cmake/RocmBackend/RocmBackendConfigVersion.cmake
	sed -e 's|@RB_VERSION@|$(VERSION)|g' -e 's|@RB_NATIVE_STATIC_LIBS_PC@|$(NATIVE_LDLIBS)|g' \
	    cmake/rocm_backend.pc.in > $(P)/lib/pkgconfig/rocm_backend.pc
	@echo "installed rocm-backend $(VERSION) into $(P)"

clean:
	rm -rf $(BUILD) bindings/python/build bindings/python/*.egg-info
	find bindings -name __pycache__ -type d -prune -exec rm -rf {} +
	$(CARGO) clean --release -p rocm-backend

distclean: clean
	rm -rf $(VENV) target

# The AMD checks (hipcc, ROCm header conformance, loader without a GPU, the kernels under the
# CPU emulation): make amd-checks
-include mk/amd.mk

# Regenerate the sources the op table implies (src/ffi/eager, src/ops/registry.rs,
# src/runtime/dispatch.rs, bindings/python/rocm_backend/_ops_table.py) and the header.
generate:
	RB_GENERATE=1 $(CARGO) build --lib
	RB_BLESS=1 $(CARGO) test --test header
