#!/usr/bin/env python3
"""Print the markdown tables of docs/validation.md section 5 from sweep outputs.

Usage: pcie_tables.py TRANSPORTS_DIR [SELECTION_DIR]

TRANSPORTS_DIR: `fabricsim sweep` output of frank2-transports.yaml (or the
quick subset); SELECTION_DIR: of frank2-selection.yaml. The report's clean
figures (host-bridge.md section 5) are printed beside ours for comparison.
"""
import csv
import sys
from pathlib import Path

REPORT = {("read_ring", 81920): 4.2, ("pull", 81920): 10.8, ("write_all", 81920): 10.1, ("full", 81920): 12.4,
          ("pull", 16384): 8.2, ("full_phased", 16384): 8.3, ("full", 16384): 9.2}


def rows(d):
    with open(Path(d) / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def main():
    t = rows(sys.argv[1])
    clean = {(x["transport"], int(x["size_bytes"])): x for x in t if x["group"] == "0,1,2,3"}
    print("| transport | size | report mean (us) | ours mean (us) | ours max (us) | ours / report |")
    print("|---|---|---|---|---|---|")
    for k, v in REPORT.items():
        if k in clean:
            m = float(clean[k]["mean_us"])
            print(f"| {k[0]} | {k[1] // 1024} KiB | {v} | {m:.2f} | {float(clean[k]['max_us']):.2f} | {m / v - 1:+.1%} |")
    print()
    sizes = sorted({int(x["size_bytes"]) for x in t})
    groups = []
    for x in t:
        if x["group"] not in groups:
            groups.append(x["group"])
    for size in sizes:
        print(f"**{size // 1024} KiB per GPU** (mean / p50 / p99 / max in us, ops over 1 ms)\n")
        print("| transport | " + " | ".join(f"GPUs {g}" for g in groups) + " |")
        print("|---|" + "---|" * len(groups))
        names = []
        for x in t:
            if x["transport"] not in names:
                names.append(x["transport"])
        for n in names:
            cells = []
            for g in groups:
                r = [x for x in t if x["group"] == g and x["transport"] == n and int(x["size_bytes"]) == size]
                if not r:
                    cells.append("")
                    continue
                r = r[0]
                cells.append(f"{float(r['mean_us']):.1f} / {float(r['p50_us']):.1f} / {float(r['p99_us']):.1f} / "
                             f"{float(r['max_us']):.0f}, {r['ops_over_1ms']}")
            print(f"| {n} | " + " | ".join(cells) + " |")
        print()
    if len(sys.argv) > 2:
        s = rows(sys.argv[2])
        print("| group | selection | seed | picks | round mean (us) | p50 | p99 | max | rounds over 1 ms |")
        print("|---|---|---|---|---|---|---|---|---|")
        for x in s:
            print(f"| {x['group']} | {x['selection']} | {x['seed']} | {x['picks']} | {float(x['mean_us']):.1f} | "
                  f"{float(x['p50_us']):.1f} | {float(x['p99_us']):.1f} | {float(x['max_us']):.0f} | {x['ops_over_1ms']} |")


if __name__ == "__main__":
    main()
