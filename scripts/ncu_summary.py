"""Summarises `ncu --csv --page raw --print-units base` output (scripts/gpu-ncu.sh).

Usage: python3 ncu_summary.py RAW.csv [LAST_N]

Prints, per kernel name, the launches, total and mean time (us) and the achieved DRAM
bandwidth; with LAST_N, the last N launches one by one (one replay of a recorded step) and
their sum.
"""

import csv
import sys
from collections import defaultdict


def main():
    path = sys.argv[1]
    last = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    # Row 0: header, row 1: units, then one row per launch.
    head = rows[0]
    col = {n: i for i, n in enumerate(head)}
    body = [r for r in rows[2:] if len(r) == len(head)]

    def num(r, name):
        try:
            return float(r[col[name]].replace(",", ""))
        except (KeyError, ValueError):
            return 0.0

    kern = []
    for r in body:
        name = r[col["Kernel Name"]]
        ns = num(r, "gpu__time_duration.sum")
        by = num(r, "dram__bytes_read.sum") + num(r, "dram__bytes_write.sum")
        grid = r[col["launch__grid_size"]] if "launch__grid_size" in col else ""
        block = r[col["launch__block_size"]] if "launch__block_size" in col else ""
        kern.append((name[:90], ns / 1e3, by, grid, block))
    agg = defaultdict(lambda: [0, 0.0, 0.0])
    for name, us, by, _, _ in kern:
        a = agg[name]
        a[0] += 1
        a[1] += us
        a[2] += by
    print(f"{len(kern)} launches, {sum(k[1] for k in kern):.1f} us in all")
    print(f"{'kernel':90} {'n':>5} {'total us':>10} {'mean us':>9} {'GB/s':>7}")
    for name, (n, us, by) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
        print(f"{name:90} {n:5d} {us:10.1f} {us / n:9.2f} {by / (us * 1e3) if us else 0:7.0f}")
    if last:
        tail = kern[-last:]
        print(f"\nlast {len(tail)} launches: {sum(k[1] for k in tail):.1f} us of kernel time")
        for name, us, by, grid, block in tail:
            print(f"  {us:8.2f} us {by / (us * 1e3) if us else 0:6.0f} GB/s grid {grid:>6} block {block:>4}  {name}")


if __name__ == "__main__":
    main()
