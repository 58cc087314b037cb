#!/usr/bin/env python3
"""Render the protocol comparison of docs/validation.md (section 8).

Usage: plot_protocols.py STUDY_DIR OUT_DIR [--table]

STUDY_DIR is a `fabricsim sweep` output folder of
topologies/studies/link-protocols.yaml (or link-protocols-quick.yaml).
Writes OUT_DIR/link_protocols.png from the link leg's rows (those with a
goodput): per channel (independent BER 1e-9, 1e-7, 1e-5, the burst channel)
and protocol the mean over seeds of goodput, P99 latency, retransmitted bytes
and reverse-channel bytes; and, if the study has the collective leg (rows
with a completion time), OUT_DIR/link_protocols_ring8.png: the ring
AllReduce's completion time per channel and protocol. With --table, also
prints the Markdown tables of docs/validation.md (section 8 and 8.1). Every
value comes from the simulator's results.csv; nothing here is typed in.
"""
import csv
import sys
from collections import OrderedDict
from pathlib import Path

try:
    import matplotlib
except ImportError:
    sys.exit("error: matplotlib is not installed for " + sys.executable +
             " (Debian: apt-get install python3-matplotlib, then run the script with /usr/bin/python3)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

METRICS = [("goodput_gbps", "goodput (Gb/s)", False), ("p99_latency_ns", "P99 one-way latency (ns)", True),
           ("retransmitted_bytes", "retransmitted bytes", True), ("reverse_bytes", "reverse-channel bytes", True)]


def channel_label(r):
    return "burst (G-E)" if r["channel"] == "gilbert-elliott" else "BER " + r["wire_ber"].replace("e-0", "e-")


RING_METRICS = [("time_us", "AllReduce time (us)", True), ("busbw_GBps", "bus bandwidth (GB/s)", False),
                ("replayed_flits", "replayed", True)]


def load(d, metrics=METRICS):
    """Means over seeds per (channel, protocol) of the rows of the leg whose first metric is set."""
    with open(Path(d) / "results.csv") as f:
        rows = [r for r in csv.DictReader(f) if r.get(metrics[0][0], "") != ""]
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
                  for m, _, _ in metrics}
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


def plot_ring(d, out):
    chans, protos, v = load(d, RING_METRICS)
    if not v:
        return False
    fig, ax = plt.subplots(figsize=(11, 4.5))
    w = 0.8 / len(protos)
    for i, p in enumerate(protos):
        xs = [j + (i - (len(protos) - 1) / 2) * w for j in range(len(chans))]
        ax.bar(xs, [v[(c, p)]["time_us"] if (c, p) in v else 0 for c in chans], w, label=p)
    ax.set_xticks(range(len(chans)))
    ax.set_xticklabels(chans)
    ax.set_yscale("log")
    ax.set_ylabel("AllReduce 8 MiB completion time (us)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("ring8 AllReduce of 8 MiB per rank over UALink replay vs RIFL links (mean over seeds)")
    fig.tight_layout()
    fig.savefig(Path(out) / "link_protocols_ring8.png", dpi=110)
    return True


def table_ring(d):
    chans, protos, v = load(d, RING_METRICS)
    if not v:
        return
    print()
    print("| channel | protocol | time us | busbw GB/s | replayed |")
    print("|---|---|---|---|---|")
    for c in chans:
        for p in protos:
            if (c, p) in v:
                x = v[(c, p)]
                print(f"| {c} | {p} | {x['time_us']:.1f} | {x['busbw_GBps']:.2f} | {x['replayed_flits']:.0f} |")


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
    Path(sys.argv[2]).mkdir(parents=True, exist_ok=True)
    try:
        plot(sys.argv[1], sys.argv[2])
        plot_ring(sys.argv[1], sys.argv[2])
        if len(sys.argv) == 4 and sys.argv[3] == "--table":
            table(sys.argv[1])
            table_ring(sys.argv[1])
    except (FileNotFoundError, KeyError, ValueError) as e:
        sys.exit(f"error: {e!r}: is {sys.argv[1]} the output folder of a link-protocols study?\n{__doc__}")
