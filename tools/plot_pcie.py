#!/usr/bin/env python3
"""Render the PCIe host figures of docs/validation.md (section 5).

Usage: plot_pcie.py TRANSPORTS_DIR SELECTION_DIR OUT_DIR

TRANSPORTS_DIR and SELECTION_DIR are `fabricsim sweep` output folders of
topologies/studies/frank2-transports.yaml and frank2-selection.yaml. Writes
OUT_DIR/pcie_calibration.png (GPUs 0-3 beside the report's clean-fabric
points, host-bridge.md section 5), OUT_DIR/pcie_transports.png (p50, mean,
p99 and max per transport and group at 80 KiB) and OUT_DIR/pcie_selection.png
(decode-round time per selection policy and group). The report's numbers are
shown for comparison only; nothing in the simulator reads them.
"""
import csv
import sys
from pathlib import Path

try:
    import matplotlib
except ImportError:
    sys.exit("error: matplotlib is not installed for " + sys.executable +
             " (Debian: apt-get install python3-matplotlib, then run the script with /usr/bin/python3)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# host-bridge.md section 5: (transport, size bytes) -> report mean us (GPUs 0-3).
REPORT = {
    ("read_ring", 81920): 4.2,
    ("pull", 81920): 10.8,
    ("write_all", 81920): 10.1,
    ("full", 81920): 12.4,
    ("pull", 16384): 8.2,
    ("full_phased", 16384): 8.3,
    ("full", 16384): 9.2,
}
GROUPS = ["0,1,2,3", "0,4,8,12", "1,5,9,13", "12,13,14,15"]


def rows(d):
    with open(Path(d) / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def calibration(t, out):
    r = {(x["transport"], int(x["size_bytes"])): float(x["mean_us"]) for x in t if x["group"] == "0,1,2,3"}
    keys = [k for k in REPORT if k in r]
    labels = [f"{k[0]}\n{k[1] // 1024} KiB" for k in keys]
    fig, ax = plt.subplots(figsize=(10, 3.8))
    xs = range(len(keys))
    ax.bar([x - 0.2 for x in xs], [REPORT[k] for k in keys], 0.4, label="report (frank2, GPUs 0-3)")
    ax.bar([x + 0.2 for x in xs], [r[k] for k in keys], 0.4, label="fabricsim")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("mean time per operation (us)")
    ax.legend()
    ax.set_title("Clean-fabric calibration points (start barrier included)")
    fig.tight_layout()
    fig.savefig(Path(out) / "pcie_calibration.png", dpi=110)


def transports(t, out, size=81920):
    groups = [g for g in GROUPS if any(x["group"] == g for x in t)]
    names = []
    for x in t:
        if x["transport"] not in names:
            names.append(x["transport"])
    fig, axes = plt.subplots(len(groups), 1, figsize=(13, 2.8 * len(groups)), sharex=True, sharey=True)
    if len(groups) == 1:
        axes = [axes]
    for ax, g in zip(axes, groups):
        sel = {x["transport"]: x for x in t if x["group"] == g and int(x["size_bytes"]) == size}
        xs = range(len(names))
        for i, (key, lab) in enumerate([("p50_us", "p50"), ("mean_us", "mean"), ("p99_us", "p99"), ("max_us", "max")]):
            ax.bar([x + (i - 1.5) * 0.2 for x in xs], [float(sel[n][key]) if n in sel else 0 for n in names], 0.2,
                   label=lab)
        ax.set_yscale("log")
        ax.set_ylabel("us")
        ax.set_title(f"GPUs {g}, {size // 1024} KiB per GPU", fontsize=9)
    axes[0].legend(ncol=4, fontsize=8)
    axes[-1].set_xticks(list(range(len(names))))
    axes[-1].set_xticklabels(names, rotation=30, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(Path(out) / "pcie_transports.png", dpi=110)


def selection(s, out):
    groups = [g for g in GROUPS if any(x["group"] == g for x in s)]
    sels = []
    for x in s:
        if x["selection"] not in sels:
            sels.append(x["selection"])
    fig, ax = plt.subplots(figsize=(10, 3.8))
    w = 0.8 / max(1, len(sels))
    for i, name in enumerate(sels):
        vals = []
        for g in groups:
            v = [float(x["mean_us"]) for x in s if x["group"] == g and x["selection"] == name]
            vals.append(sum(v) / len(v) if v else 0)
        ax.bar([j + (i - (len(sels) - 1) / 2) * w for j in range(len(groups))], vals, w, label=name)
    ax.set_xticks(list(range(len(groups))))
    ax.set_xticklabels([f"GPUs {g}" for g in groups])
    ax.set_ylabel("decode round, mean (us)")
    ax.legend(fontsize=8)
    ax.set_title("Decode round (8 x (20 us + AllReduce 80 KiB)) under each selection")
    fig.tight_layout()
    fig.savefig(Path(out) / "pcie_selection.png", dpi=110)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    Path(sys.argv[3]).mkdir(parents=True, exist_ok=True)
    try:
        t = rows(sys.argv[1])
        calibration(t, sys.argv[3])
        transports(t, sys.argv[3])
        selection(rows(sys.argv[2]), sys.argv[3])
    except (FileNotFoundError, KeyError, ValueError) as e:
        sys.exit(f"error: {e!r}: are {sys.argv[1]} and {sys.argv[2]} the output folders of frank2-transports "
                 f"and frank2-selection?\n{__doc__}")


if __name__ == "__main__":
    main()
