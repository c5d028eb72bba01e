#!/usr/bin/env bash
# A/B of kernel define sets on one rb-bench figure, alternated: ROUNDS rounds of
# scripts/gpu-sweep.sh (every set once per round, in turn; the first round compiles every
# set's kernels side by side before it times them: SWEEP_PREWARM), then each set's runs and
# median. On the lent GPU with the binaries carried (scripts/gpu-pack.sh).
# Usage: ROUNDS=5 bash scripts/gpu-ab.sh NAME SET...   (NAME: the rb-bench figure, also its
# filter; SETs as gpu-sweep.sh takes them: RB_GPU_KERNEL_DEFINES's words, "" the built-in
# defaults, a word env:X=Y set in the environment instead)
# Output: the runs in $OUT/sweep.log (gpu-sweep.sh's lines), the summary in $OUT/ab.txt.
set -uo pipefail
name=$1
shift
OUT=${OUT:-/tmp/out}
export OUT
mkdir -p "$OUT"
rm -f "$OUT/sweep.log"
for ((r = 1; r <= ${ROUNDS:-5}; r++)); do
  SWEEP_PREWARM=$((r == 1)) bash scripts/gpu-sweep.sh "^$name\$" "$name" "$@" > /dev/null
done
python3 - "$OUT/sweep.log" "$name" "$@" <<'PY' | tee "$OUT/ab.txt"
import statistics, sys
log, name, sets = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = {}
for line in open(log):
    head, _, st = line.rstrip("\n").partition(" [")
    parts = head.split()
    if len(parts) == 2 and parts[0] == name and parts[1] != "none":
        runs.setdefault(st[:-1], []).append(float(parts[1]))
for st in sets:
    v = runs.get(st, [])
    med = f"{statistics.median(v):8.1f}" if v else "    none"
    print(f"median {med} us  runs {' '.join(f'{x:.1f}' for x in v)}  [{st}]")
PY
