#!/usr/bin/env bash
# Per-kernel device times of rb-bench names under Nsight Compute, on the lent GPU (where ncu
# reads the counters: the Firecracker machines, see the device tool's KINDS.md). Every kernel
# launch (kernel nodes of a replayed device graph too) is profiled alone, with the caches and
# clocks left as they are, so the sum over one step is the step's kernel time without launch
# gaps. Run in the repository root with .dev/gpu carried (scripts/gpu-pack.sh).
# Usage: bash scripts/gpu-ncu.sh LABEL 'RB_BENCH_FILTER' [LAST_N]
#   LAST_N: also list the last N launches one by one (one replay of a recorded step).
# Writes $OUT/ncu_LABEL.csv (raw) and $OUT/ncu_LABEL.txt (summary).
set -uo pipefail
label=$1
filter=$2
last=${3:-0}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source scripts/gpu-bin.sh
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size
rep=/tmp/ncu_$label
timeout "${NCU_TIMEOUT:-300}" "$ncu" --clock-control none --cache-control none --metrics "$metrics" \
  -f -o "$rep" "$bin/rb-bench" --device cuda --filter "$filter" --iters 1 --warmup 0 \
  > "$OUT/ncu_$label.log" 2>&1
tail -n 5 "$OUT/ncu_$label.log"
"$ncu" -i "$rep.ncu-rep" --csv --page raw --print-units base > "$OUT/ncu_$label.csv" 2>/dev/null
python3 scripts/ncu_summary.py "$OUT/ncu_$label.csv" "$last" | tee "$OUT/ncu_$label.txt" | head -n 80
