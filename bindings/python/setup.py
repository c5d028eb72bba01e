"""Build step of the `rocm_backend` Python package.

`pip install ./bindings/python` (from a checkout of the repository) runs `cargo build
--release --lib` in the repository root and ships target/release/librocm_backend.so inside
the package, so the installed package needs neither the checkout nor Rust afterwards.

Environment: CARGO (the cargo to run, default "cargo"); RB_CARGO_PROFILE ("release", the
default, or "dev": the profile to build and bundle); RB_BUNDLE_LIBRARY (bundle this .so
instead of building one).
"""

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def repo_root():
    for d in [HERE, *HERE.parents]:
        cargo = d / "Cargo.toml"
        if cargo.is_file() and 'name = "rocm-backend"' in cargo.read_text():
            return d
    raise SystemExit(
        "rocm_backend: cannot find the rocm-backend repository (Cargo.toml) above "
        f"{HERE}; install from a checkout: pip install ./bindings/python, or set "
        "RB_BUNDLE_LIBRARY to a built librocm_backend.so"
    )


class BuildWithCargo(build_py):
    """Builds the Rust library and copies it into the package."""

    def run(self):
        super().run()
        lib = os.environ.get("RB_BUNDLE_LIBRARY")
        if lib:
            lib = Path(lib)
        else:
            root = repo_root()
            cargo = os.environ.get("CARGO", "cargo")
            profile = os.environ.get("RB_CARGO_PROFILE", "release")
            if profile not in ("release", "dev"):
                raise SystemExit(f"rocm_backend: RB_CARGO_PROFILE={profile!r}: release or dev")
            flags = ["--release"] if profile == "release" else []
            subprocess.run([cargo, "build", *flags, "--lib"], cwd=root, check=True)
            out = "release" if profile == "release" else "debug"
            lib = root / "target" / out / "librocm_backend.so"
        if not lib.is_file():
            raise SystemExit(f"rocm_backend: {lib} was not built")
        dest = Path(self.build_lib) / "rocm_backend"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lib, dest / "librocm_backend.so")


class BinaryDistribution(Distribution):
    """The wheel holds a native library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithCargo}, distclass=BinaryDistribution)
