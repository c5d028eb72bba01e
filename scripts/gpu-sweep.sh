#!/usr/bin/env bash
# Runs rb-bench on FILTER once per set of built-in kernel defines (RB_GPU_KERNEL_DEFINES, see
# src/device/gpu/jit.rs: the kernels' #ifndef knobs such as RB_GEMV_GRP_U, read by the host
# too) and names the set under which NAME ran fastest. On the lent GPU, with .dev/gpu or .dev/gpu-quick (or BIN)
# carried (scripts/gpu-pack.sh; scripts/gpu-bin.sh finds and unpacks them).
# Usage: bash scripts/gpu-sweep.sh FILTER NAME SET...   (an empty SET: the built-in defaults)
# A word env:NAME=VALUE of a SET is set in the environment instead (e.g. env:RB_GRAPH_SKIP=rope+store).
# Environment: BIN (the binaries' folder; default: gpu-bin.sh's), SWEEP_TIMEOUT (seconds per set,
# 90), SWEEP_PREWARM.
# Prints and appends to $OUT/sweep.log "NAME us [SET]" per set, then "best: us [SET]"; the
# best set alone goes to $OUT/best-defines.txt.
set -uo pipefail
filter=$1 name=$2
shift 2
OUT=${OUT:-/tmp/out}
source scripts/gpu-bin.sh
mkdir -p "$OUT"
best_us='' best_set=''
envs() { for w in $1; do [[ $w == env:* ]] && printf '%s ' "${w#env:}"; done; }
defs() { for w in $1; do [[ $w == env:* ]] || printf '%s ' "$w"; done; }
# SWEEP_PREWARM=1: every set's kernels compiled first, the sets' processes side by side (the
# NVRTC compiles of a new define set take a minute or more; their timings are discarded), so
# the timed runs below find them in the cache (RB_CACHE_DIR) and the timeout bounds the run.
if [[ ${SWEEP_PREWARM:-0} == 1 ]]; then
  for set in "$@"; do
    env $(envs "$set") RB_GPU_KERNEL_DEFINES="$(defs "$set")" timeout "${PREWARM_TIMEOUT:-300}" "$bin/rb-bench" --device cuda \
      --filter "$filter" --iters 1 --warmup 0 > /dev/null 2>&1 &
  done
  wait
fi
for set in "$@"; do
  us=$(env $(envs "$set") RB_GPU_KERNEL_DEFINES="$(defs "$set")" timeout "${SWEEP_TIMEOUT:-90}" "$bin/rb-bench" --device cuda \
    --filter "$filter" 2>&1 | tee -a "$OUT/sweep-full.log" | awk -v n="$name" '$1 == n && $3 == "us" { print $2 }')
  echo "$name ${us:-none} [$set]" | tee -a "$OUT/sweep.log"
  if [[ -n $us ]] && { [[ -z $best_us ]] || awk -v a="$us" -v b="$best_us" 'BEGIN { exit !(a < b) }'; }; then
    best_us=$us best_set=$set
  fi
done
echo "best: ${best_us:-none} [$best_set]" | tee -a "$OUT/sweep.log"
printf '%s\n' "$best_set" > "$OUT/best-defines.txt"
