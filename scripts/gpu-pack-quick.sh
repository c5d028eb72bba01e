#!/usr/bin/env bash
# A quicker scripts/gpu-pack.sh for focused GPU runs: the library, rb-bench and the named
# test binaries only (default: device_suite graph), into .dev/gpu-quick (carry that path;
# run its binaries as scripts/gpu-run.sh does: unpack bin.tar.xz, LD_LIBRARY_PATH=bin).
# Usage: bash scripts/gpu-pack-quick.sh [test-name ...]
set -euo pipefail
cd "$(dirname "$0")/.."
tests=("${@:-device_suite graph}")
read -ra tests <<< "${tests[*]}"
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo '/.dev/' >> .git/info/exclude
out=.dev/gpu-quick
rm -rf "$out" && mkdir -p "$out/bin"
cargo build --release --lib --bin rb-bench
args=()
for t in "${tests[@]}"; do args+=(--test "$t"); done
cargo test --release --no-run "${args[@]}" --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"], m["executable"])
' | while read -r name exe; do cp "$exe" "$out/bin/$name"; done
cp target/release/rb-bench target/release/librocm_backend.so "$out/bin/"
strip "$out"/bin/* 2>/dev/null || true
tar -C "$out" -cJf "$out/bin.tar.xz" bin && rm -rf "$out/bin"
du -sh "$out"
