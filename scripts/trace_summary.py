"""Sums a rb-bench --trace file (Chrome trace JSON) by span name: count, total and mean us,
largest first. Usage: python3 scripts/trace_summary.py trace.json [--top N] [--cat CAT]"""
import collections, json, sys

path = sys.argv[1]
top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 30
cat = sys.argv[sys.argv.index("--cat") + 1] if "--cat" in sys.argv else None
d = json.load(open(path))
ev = d["traceEvents"] if isinstance(d, dict) else d
agg = collections.defaultdict(lambda: [0, 0.0])
for e in ev:
    if e.get("ph") != "X" or (cat and e.get("cat") != cat):
        continue
    a = agg[(e.get("cat", ""), e["name"])]
    a[0] += 1
    a[1] += float(e.get("dur", 0))
print(f"{'cat':10s} {'name':40s} {'n':>6s} {'total us':>12s} {'mean us':>10s}")
for (c, n), (k, t) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:top]:
    print(f"{c:10s} {n[:40]:40s} {k:6d} {t:12.1f} {t / k:10.2f}")
