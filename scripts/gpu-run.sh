#!/usr/bin/env bash
# Runs on the lent GPU machine, in the repository root, with .dev/gpu carried (see
# scripts/gpu-pack.sh): every Rust test binary (device suite: cuda:: and cpu:: bodies),
# then rb-bench and the PyTorch anchors in the same command. Logs and JSON go to $OUT.
# Usage: bash scripts/gpu-run.sh [test|bench|comm|all] [rb-bench filter]
#        bash scripts/gpu-run.sh ab FILTER VAR=VALUE [ROUNDS]: rb-bench on FILTER with and
#   without the setting, alternated ROUNDS times (default 2), logs in $OUT/ab.log (an A/B of
#   one build, e.g. `ab 'copy_d2d|llama' RB_GPU_LAST_BLOCK=0`).
#   comm: the collectives (issue 16): the comm test binary with its one-rank NCCL test, the
#   Python collectives and data-parallel tests on the CPU, the example on the GPU(s), and,
#   with >= 2 GPUs, rb-bench's allreduce_* beside ../shared/bench/allreduce_anchor.py.
set -uo pipefail
what=${1:-all}
filter=${2:-.}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
# The binaries, loader path and kernel cache (scripts/gpu-bin.sh). The compiled-kernel cache
# of an earlier call, when carried (`carry: [".dev/gpu", ".dev/rb-cache"]`), saves NVRTC about
# two minutes for the built-in sources on a fresh machine; a stale entry is only a miss (the
# key holds the source, arch and options). The cache goes back as one file, $OUT/rb-cache.tgz
# (the device tool returns few files): unpack it here with `mkdir -p .dev/rb-cache && tar -C
# .dev/rb-cache --strip-components=1 -xzf rb-cache.tgz`.
source scripts/gpu-bin.sh
trap 'tar -C "$(dirname "$RB_CACHE_DIR")" -czf "$OUT/rb-cache.tgz" "$(basename "$RB_CACHE_DIR")" 2>/dev/null' EXIT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
# NCCL: PyTorch's wheels ship it outside the loader's path (nvidia-nccl-cu*); point the
# library at that copy unless RB_NCCL_LIBRARY says otherwise.
if [[ -z ${RB_NCCL_LIBRARY:-} ]]; then
  nccl=$(python3 -c 'import glob, os, nvidia.nccl as n; print(sorted(glob.glob(os.path.join(list(n.__path__)[0], "lib", "libnccl.so*")))[0])' 2>/dev/null)
  [[ -n $nccl ]] && export RB_NCCL_LIBRARY=$nccl && echo "RB_NCCL_LIBRARY=$nccl"
fi
ngpu=$(nvidia-smi -L | wc -l)
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
  # The Python op tests on the GPU, eager and through the executor (O1, O3); the ONNX import
  # tests (onnx and onnxruntime installed there: compared with ONNX Runtime too).
  if python3 -c 'import numpy, pytest' 2>/dev/null; then
    for m in eager O1 O3; do
      echo "== pytest cuda $m" | tee -a "$OUT/pytest.log"
      env $([[ $m != eager ]] && echo RB_TEST_EXEC_MODE=$m) RB_TEST_DEVICE=cuda \
        RB_LIBRARY=$PWD/$bin/librocm_backend.so PYTHONPATH=$PWD/bindings/python \
        timeout 240 python3 -m pytest -q -p no:cacheprovider bindings/python/tests/test_ops.py \
        bindings/python/tests/test_graph.py bindings/python/tests/test_onnx.py 2>&1 \
        | tail -n 25 >> "$OUT/pytest.log"
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
  # The tuning cache across processes: a cold process searches and writes the file, a warm
  # one reads it and searches nothing.
  for run in cold warm; do
    echo "== tuning cache, $run process" | tee -a "$OUT/tuning.log"
    RB_TUNING_CACHE=/tmp/rb-tuning.txt "$bin/rb-bench" --device cuda --filter '^conv' \
      --iters 3 --warmup 1 2>&1 | tee -a "$OUT/tuning.log" | grep -E "tuning cache|conv"
  done
  cp /tmp/rb-tuning.txt "$OUT/tuning-file.txt" 2>/dev/null
  # The PyTorch anchors in the same command: the shared ones and the repo's (benches/),
  # each writing $OUT/<script>.json for compare.py.
  for a in torch_anchors torch_anchors_extra torch_anchors_half torch_anchors_graph torch_anchors_dnn; do
    script=.dev/gpu/bench/$a.py
    [[ -f $script ]] || script=benches/$a.py
    [[ -f $script ]] || continue
    script=$(cd "$(dirname "$script")" && pwd)/$a.py
    (cd .dev/gpu/bench 2>/dev/null || cd benches; OUT=$OUT timeout 240 python3 "$script" > "$OUT/$a.log" 2>&1)
    if [[ -f $OUT/$a.json && -f .dev/gpu/bench/compare.py ]]; then
      python3 .dev/gpu/bench/compare.py "$OUT/ours.json" "$OUT/$a.json" | tee "$OUT/compare_$a.txt"
    fi
  done
  # A short traced run (its figures are not the ones to quote: profiling adds events).
  "$bin/rb-bench" --device cuda --filter 'add_f32_64M|mlp_fwd_b32_eager$' --iters 3 \
    --trace "$OUT/trace.json" > "$OUT/trace-run.log" 2>&1 && head -c 1500 "$OUT/trace.json"
  ls "$OUT"
fi
if [[ $what == ab ]]; then
  setting=${3:?ab needs VAR=VALUE}
  for ((i = 1; i <= ${4:-2}; i++)); do
    for env_ in "RB_AB_DEFAULT=1" "$setting"; do
      echo "== ab round $i: $env_" | tee -a "$OUT/ab.log"
      env "$env_" "$bin/rb-bench" --device cuda --filter "$filter" 2>&1 | tee -a "$OUT/ab.log"
    done
  done
fi
if [[ $what == comm || $what == all ]]; then
  echo "== comm ($ngpu GPUs)" | tee -a "$OUT/comm.log"
  timeout 300 "$bin/comm" --nocapture 2>&1 | tee -a "$OUT/comm.log" | grep -E "comm:|test result|FAILED|panicked"
  # every collective and dtype across the GPUs (an ignored test: it needs two or more)
  (( ngpu >= 2 )) && timeout 300 "$bin/comm" --ignored --nocapture 2>&1 | tee -a "$OUT/comm.log" |
    grep -E "comm:|test result|FAILED|panicked"
  if python3 -c 'import numpy, pytest' 2>/dev/null; then
    RB_LIBRARY=$PWD/$bin/librocm_backend.so PYTHONPATH=$PWD/bindings/python timeout 240 \
      python3 -m pytest -q -p no:cacheprovider bindings/python/tests/test_comm.py 2>&1 | tail -n 3 | tee -a "$OUT/comm.log"
    RB_TEST_DEVICE=cuda RB_LIBRARY=$PWD/$bin/librocm_backend.so PYTHONPATH=$PWD/bindings/python timeout 240 \
      python3 -m pytest -q -p no:cacheprovider -rs bindings/python/tests/test_comm.py -k one_rank 2>&1 | tail -n 3 | tee -a "$OUT/comm.log"
    for r in 1 $(( ngpu >= 2 ? ngpu : 1 )); do
      RB_LIBRARY=$PWD/$bin/librocm_backend.so PYTHONPATH=$PWD/bindings/python timeout 240 \
        python3 bindings/python/examples/data_parallel.py --device cuda --ranks "$r" --steps 20 \
        --sizes 4096,4096,4096,4096,4096 --batch 512 --bucket-mb 25 2>&1 | tail -n 2 | tee -a "$OUT/comm.log"
    done
  fi
  if (( ngpu >= 2 )); then
    "$bin/rb-bench" --device cuda --filter '^allreduce' --json "$OUT/ours_allreduce.json" 2>&1 | tee -a "$OUT/comm.log"
    if [[ -f .dev/gpu/bench/allreduce_anchor.py ]]; then
      (cd .dev/gpu/bench && OUT=$OUT timeout 300 python3 allreduce_anchor.py > "$OUT/allreduce_anchor.log" 2>&1)
      [[ -f $OUT/allreduce_anchor.json && -f .dev/gpu/bench/compare.py ]] &&
        python3 .dev/gpu/bench/compare.py "$OUT/ours_allreduce.json" "$OUT/allreduce_anchor.json" | tee "$OUT/compare_allreduce.txt"
    fi
  else
    "$bin/rb-bench" --device cuda --filter '^allreduce' 2>&1 | tee -a "$OUT/comm.log"
  fi
fi
