#!/usr/bin/env bash
# Builds the release test and bench executables here (the GPU machine has no Rust) and
# copies them, the library and the anchor scripts (../shared/bench/*.py, benches/*.py) into
# .dev/gpu (ignored by git through .git/info/exclude), which the device tool carries:
# `carry: [".dev/gpu"]`, then run
# `bash scripts/gpu-run.sh` there (it unpacks bin.tar.xz). Usage: bash scripts/gpu-pack.sh
# [TEST ...]: with test names (e.g. device_suite graph), only those test binaries, into
# .dev/gpu-quick (carry that; unpack and run its binaries as gpu-run.sh does), for focused
# runs: a few minutes less to build here.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .git/info && touch .git/info/exclude
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >> .git/info/exclude
out=.dev/gpu
only=()
if (($#)); then
  out=.dev/gpu-quick
  for t in "$@"; do only+=(--test "$t"); done
fi
rm -rf "$out" && mkdir -p "$out/bin" "$out/bench"
cargo build --release --lib --bin rb-bench
cargo test --release --no-run "${only[@]}" --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"], m["executable"])
' | while read -r name exe; do cp "$exe" "$out/bin/$name"; done
cp target/release/rb-bench target/release/librocm_backend.so "$out/bin/"
cp ../shared/bench/*.py "$out/bench/" 2>/dev/null || true
cp benches/*.py "$out/bench/"  # the repo's own anchors (torch_anchors_half.py)
strip "$out"/bin/* 2>/dev/null || true
# Test binaries that never touch a GPU stay here (gpu-run.sh skips them anyway).
for n in header generated layering registry amd_loader amd_conformance_coverage; do
  rm -f "$out/bin/$n"
done
# The device tool carries 64 MiB at most: ship the binaries compressed (gpu-run.sh unpacks).
tar -C "$out" -cJf "$out/bin.tar.xz" bin && rm -rf "$out/bin"
du -sh "$out"
