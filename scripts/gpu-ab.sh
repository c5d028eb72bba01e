#!/usr/bin/env bash
# A/B of kernel define sets on one rb-bench figure, alternated: every set's kernels compiled
# first (side by side, untimed), then ROUNDS rounds that each run every set once in turn,
# then each set's runs and median. On the lent GPU with the binaries carried
# (scripts/gpu-pack.sh; scripts/gpu-bin.sh finds them).
# Usage: ROUNDS=5 bash scripts/gpu-ab.sh NAME SET...   (NAME: the rb-bench figure, also its
# filter; a SET is RB_GPU_KERNEL_DEFINES's words, "" the built-in defaults; a word env:X=Y
# goes to the environment instead, as in scripts/gpu-sweep.sh)
# Output: one line per run in $OUT/ab-runs.txt, the summary in $OUT/ab.txt.
set -uo pipefail
name=$1
shift
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source scripts/gpu-bin.sh
envs() { for w in $1; do [[ $w == env:* ]] && printf '%s ' "${w#env:}"; done; }
defs() { for w in $1; do [[ $w == env:* ]] || printf '%s ' "$w"; done; }
run() {
  env $(envs "$1") RB_GPU_KERNEL_DEFINES="$(defs "$1")" timeout "${2:-90}" "$bin/rb-bench" --device cuda \
    --filter "^$name\$" "${@:3}" 2>&1 | awk -v n="$name" '$1 == n && $3 == "us" { print $2 }'
}
for set in "$@"; do run "$set" "${PREWARM_TIMEOUT:-300}" --iters 1 --warmup 0 > /dev/null & done
wait
: > "$OUT/ab-runs.txt"
for ((r = 1; r <= ${ROUNDS:-5}; r++)); do
  for set in "$@"; do
    echo "$r $(run "$set" 90) [$set]" | tee -a "$OUT/ab-runs.txt"
  done
done
python3 - "$OUT/ab-runs.txt" "$@" <<'EOF' | tee "$OUT/ab.txt"
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r, rest = line.split(" ", 1)
    us, st = rest.split(" [", 1)
    if us.strip() and us.strip() != "[":
        runs.setdefault(st.rstrip("]\n"), []).append(float(us))
for st in sys.argv[2:]:
    v = runs.get(st, [])
    med = f"{statistics.median(v):8.1f}" if v else "    none"
    print(f"median {med} us  runs {' '.join(f'{x:.1f}' for x in v)}  [{st}]")
EOF
