#!/usr/bin/env bash
# Runs on the lent GPU machine, in the repository root, with .dev/gpu carried (see
# scripts/gpu-pack.sh): every Rust test binary (device suite: cuda:: and cpu:: bodies),
# then rb-bench and the PyTorch anchors in the same command. Logs and JSON go to $OUT.
# Usage: bash scripts/gpu-run.sh [test|bench|all] [rb-bench filter]
set -uo pipefail
what=${1:-all}
filter=${2:-.}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
bin=.dev/gpu/bin
export LD_LIBRARY_PATH=$PWD/$bin:${LD_LIBRARY_PATH:-}
export RB_CACHE_DIR=/tmp/rb-cache
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
if [[ $what == test || $what == all ]]; then
  for t in "$bin"/*; do
    n=$(basename "$t")
    # header/generated/layering read the sources at their build-time path; amd_* need ROCm.
    case $n in rb-bench|*.so|header|generated|layering|amd_*) continue ;; esac
    echo "== $n" | tee -a "$OUT/tests.log"
    timeout 300 "$t" 2>&1 | tail -n 40 >> "$OUT/tests.log"
    grep -E "test result|passed|FAILED|failed" "$OUT/tests.log" | tail -n 2
  done
fi
if [[ $what == test || $what == all || $what == py ]]; then
  # The Python op tests on the GPU, eager and through the executor (O1, O3).
  if python3 -c 'import numpy, pytest' 2>/dev/null; then
    for m in eager O1 O3; do
      echo "== pytest cuda $m" | tee -a "$OUT/pytest.log"
      env $([[ $m != eager ]] && echo RB_TEST_EXEC_MODE=$m) RB_TEST_DEVICE=cuda \
        RB_LIBRARY=$PWD/$bin/librocm_backend.so PYTHONPATH=$PWD/bindings/python \
        timeout 240 python3 -m pytest -q -p no:cacheprovider bindings/python/tests/test_ops.py \
        bindings/python/tests/test_graph.py 2>&1 | tail -n 25 >> "$OUT/pytest.log"
      tail -n 1 "$OUT/pytest.log"
    done
    # DLPack with PyTorch and CuPy on the GPU (each test skips, with the reason, when torch,
    # cupy or CUDA is missing: -rs lists those reasons).
    echo "== pytest cuda dlpack" | tee -a "$OUT/pytest.log"
    RB_TEST_DEVICE=cuda RB_LIBRARY=$PWD/$bin/librocm_backend.so PYTHONPATH=$PWD/bindings/python \
      timeout 240 python3 -m pytest -q -rs -p no:cacheprovider bindings/python/tests/test_dlpack.py \
      2>&1 | tail -n 25 >> "$OUT/pytest.log"
    tail -n 1 "$OUT/pytest.log"
  fi
fi
if [[ $what == bench || $what == all ]]; then
  "$bin/rb-bench" --device cuda --filter "$filter" --json "$OUT/ours.json" 2>&1 | tee "$OUT/bench.log"
  (cd .dev/gpu/bench && OUT=$OUT timeout 240 python3 torch_anchors.py > "$OUT/anchor.log" 2>&1)
  # A short traced run (its figures are not the ones to quote: profiling adds events).
  "$bin/rb-bench" --device cuda --filter 'gemm_float32_1024|add_f32_16M|mlp_fwd_b32$' --iters 3 \
    --trace "$OUT/trace.json" > "$OUT/trace-run.log" 2>&1 && head -c 1500 "$OUT/trace.json"
  ls "$OUT"
fi
