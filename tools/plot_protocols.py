#!/usr/bin/env python3
"""Render the protocol comparison of docs/validation.md (section 8).

Usage: plot_protocols.py STUDY_DIR OUT_DIR [--table]

STUDY_DIR is a `fabricsim sweep` output folder of
topologies/studies/link-protocols.yaml (or link-protocols-quick.yaml).
Writes OUT_DIR/link_protocols.png: per channel (independent BER 1e-9, 1e-7,
1e-5, the burst channel) and protocol the mean over seeds of goodput, P99
latency, retransmitted bytes and reverse-channel bytes. With --table, also
prints the Markdown table of docs/validation.md. Every value comes from the
simulator's results.csv; nothing here is typed in.
"""
import csv
import sys
from collections import OrderedDict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

METRICS = [("goodput_gbps", "goodput (Gb/s)", False), ("p99_latency_ns", "P99 one-way latency (ns)", True),
           ("retransmitted_bytes", "retransmitted bytes", True), ("reverse_bytes", "reverse-channel bytes", True)]


def channel_label(r):
    return "burst (G-E)" if r["channel"] == "gilbert-elliott" else "BER " + r["wire_ber"].replace("e-0", "e-")


def load(d):
    with open(Path(d) / "results.csv") as f:
        rows = list(csv.DictReader(f))
    chans, protos = OrderedDict(), OrderedDict()
    means = {}
    for r in rows:
        c, p = channel_label(r), r["protocol"]
        chans[c] = None
        protos[p] = None
        means.setdefault((c, p), []).append(r)
    out = {}
    for k, rs in means.items():
        out[k] = {m: sum(float(x[m]) for x in rs if x[m] != "") / max(1, sum(1 for x in rs if x[m] != ""))
                  for m, _, _ in METRICS}
        out[k]["seeds"] = len(rs)
    return list(chans), list(protos), out


def plot(d, out):
    chans, protos, v = load(d)
    fig, axes = plt.subplots(2, 2, figsize=(13, 8))
    w = 0.8 / len(protos)
    for ax, (m, label, log) in zip(axes.flat, METRICS):
        for i, p in enumerate(protos):
            xs = [j + (i - (len(protos) - 1) / 2) * w for j in range(len(chans))]
            ys = [v[(c, p)][m] if (c, p) in v else 0 for c in chans]
            floor = 10.0 if m == "p99_latency_ns" else 1e3
            ax.bar(xs, [max(y, floor) if log else y for y in ys], w, label=p)
            for x, y in zip(xs, ys):
                if log and y == 0:
                    ax.text(x, floor * 1.3, "0", ha="center", fontsize=7)
        ax.set_xticks(range(len(chans)))
        ax.set_xticklabels(chans)
        ax.set_ylabel(label)
        if log:
            ax.set_yscale("log")
            ax.set_ylim(bottom=10.0 if m == "p99_latency_ns" else 1e3)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    axes.flat[0].set_ylim(0, 420)
    fig.suptitle("UALink replay vs RIFL: one 400 Gb/s wire, 20 ns, saturating 640-B units, same error streams")
    fig.tight_layout()
    fig.savefig(Path(out) / "link_protocols.png", dpi=110)


def table(d):
    chans, protos, v = load(d)
    print("| channel | protocol | goodput Gb/s | P99 ns | retransmitted KB | reverse KB |")
    print("|---|---|---|---|---|---|")
    for c in chans:
        for p in protos:
            if (c, p) not in v:
                continue
            x = v[(c, p)]
            print(f"| {c} | {p} | {x['goodput_gbps']:.1f} | {x['p99_latency_ns']:.1f} | "
                  f"{x['retransmitted_bytes'] / 1e3:.1f} | {x['reverse_bytes'] / 1e3:.1f} |")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    plot(sys.argv[1], sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[3] == "--table":
        table(sys.argv[1])
