#!/usr/bin/env python3
"""Render the validation figures of docs/validation.md.

Usage: plot_validation.py PRIMARY_DIR SENSITIVITY_DIR RING_DIR OUT_DIR

PRIMARY_DIR, SENSITIVITY_DIR and RING_DIR are `fabricsim sweep` output folders
of topologies/studies/preface-primary.yaml, preface-sensitivity.yaml and
ring-allreduce.yaml. Writes OUT_DIR/primary_vs_paper.png,
OUT_DIR/sensitivity.png and OUT_DIR/ring_allreduce.png. The published numbers
below (the paper's Table 5 and its reported ring reductions, link-layer.md §7
and issue text) are shown for comparison only; nothing in the simulator reads
them.
"""
import json
import sys
from pathlib import Path

try:
    import matplotlib
except ImportError:
    sys.exit("error: matplotlib is not installed for " + sys.executable +
             " (Debian: apt-get install python3-matplotlib, then run the script with /usr/bin/python3)")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

POLICIES = ["fixed-strong", "post-decode", "predictive-fec", "preface"]
# Paper Table 5: goodput Gb/s, P99 us, replayed flits, FEC KB (read as KiB, see docs/validation.md)
PAPER = {
    "fixed-strong": (298.32, 31.56, 1864.1, 458.4),
    "post-decode": (293.11, 34.94, 2620.7, 99.2),
    "predictive-fec": (300.88, 30.50, 2312.4, 244.4),
    "preface": (329.71, 15.54, 1375.2, 226.6),
}
METRICS = [("goodput_gbps", "goodput (Gb/s)", 1.0), ("p99_us", "P99 latency (us)", 1.0),
           ("replayed_flits", "replayed flits", 1.0), ("fec_bytes", "FEC (KiB)", 1 / 1024)]


def primary(d, out):
    s = json.loads((Path(d) / "summary.json").read_text())
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    for i, (key, label, scale) in enumerate(METRICS):
        ax = axes[i]
        ours = [s["groups"][p]["metrics"][key]["mean"] * scale for p in POLICIES]
        err = [s["groups"][p]["metrics"][key]["half_width"] * scale for p in POLICIES]
        paper = [PAPER[p][i] for p in POLICIES]
        x = range(len(POLICIES))
        ax.bar([v - 0.2 for v in x], paper, 0.4, label="paper (Table 5)", color="#bbbbbb")
        ax.bar([v + 0.2 for v in x], ours, 0.4, yerr=err, capsize=3, label="fabricsim (95 % CI)", color="#3b6ea5")
        ax.set_xticks(list(x))
        ax.set_xticklabels(POLICIES, rotation=20, fontsize=8)
        ax.set_title(label)
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle("Primary link experiment, 30 seeds (101-130) x 10,000 flits")
    fig.tight_layout()
    fig.savefig(Path(out) / "primary_vs_paper.png", dpi=110)


def sensitivity(d, out):
    s = json.loads((Path(d) / "summary.json").read_text())
    names, g_fs, p_fs, g_pf = [], [], [], []
    for v in s["cells"]:
        pd = {(x["a"], x["b"]): x["metrics"] for x in v["paired_deltas"]}
        names.append(v["variant"])
        g_fs.append(pd[("preface", "fixed-strong")]["goodput_gbps"])
        p_fs.append(pd[("preface", "fixed-strong")]["p99_us"])
        g_pf.append(pd[("preface", "predictive-fec")]["goodput_gbps"])
    fig, axes = plt.subplots(1, 3, figsize=(16, 5), sharey=True)
    for ax, data, title, paper in [
        (axes[0], g_fs, "preface vs fixed-strong: goodput (%)", 10.52),
        (axes[1], p_fs, "preface vs fixed-strong: P99 (%)", -50.75),
        (axes[2], g_pf, "preface vs predictive-fec: goodput (%)", 100 * (329.71 / 300.88 - 1)),
    ]:
        y = range(len(names))
        vals = [m["rel_pct"] for m in data]
        lo = [m["rel_pct"] - m["rel_ci95_lo_pct"] for m in data]
        hi = [m["rel_ci95_hi_pct"] - m["rel_pct"] for m in data]
        ax.barh(list(y), vals, xerr=[lo, hi], capsize=2, color="#3b6ea5")
        ax.axvline(paper, color="#c0392b", ls="--", label=f"paper {paper:+.1f} %")
        ax.axvline(0, color="black", lw=0.8)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
    axes[0].set_yticks(list(range(len(names))))
    axes[0].set_yticklabels(names, fontsize=8)
    axes[0].invert_yaxis()
    fig.suptitle("Paired gains (mean over seeds 101-130, 95 % CI) under each modelling choice")
    fig.tight_layout()
    fig.savefig(Path(out) / "sensitivity.png", dpi=110)


# Paper: preface's relative completion-time reductions over the baselines.
PAPER_RING = {"1MiB": (16, 27), "8MiB": (13, 22)}


def ring(d, out):
    s = json.loads((Path(d) / "summary.json").read_text())
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
    for ax, size in zip(axes, ["1MiB", "8MiB"]):
        cells = [c for c in s["cells"] if c["variant"].split(";")[0] == size and c["groups"]]
        x = range(len(cells))
        for k, (base, color) in enumerate([("fixed-strong", "#3b6ea5"), ("post-decode", "#e08e2b")]):
            vals, lo, hi = [], [], []
            for c in cells:
                m = {(p["a"], p["b"]): p["metrics"] for p in c["paired_deltas"]}[("preface", base)]["time_us"]
                vals.append(-m["rel_pct"])
                lo.append(m["rel_ci95_hi_pct"] - m["rel_pct"])
                hi.append(m["rel_pct"] - m["rel_ci95_lo_pct"])
            ax.bar([v + (k - 0.5) * 0.35 for v in x], vals, 0.35, yerr=[lo, hi], capsize=3, color=color,
                   label=f"vs {base}")
        plo, phi = PAPER_RING[size]
        ax.axhspan(plo, phi, color="#c0392b", alpha=0.15, label=f"paper {plo}-{phi} %")
        ax.set_xticks(list(x))
        ax.set_xticklabels([f"{c['ranks']} ranks (n={c['groups']['preface']['n']})" for c in cells])
        ax.set_title(f"ring AllReduce {size} per rank")
        ax.set_ylabel("preface completion-time reduction (%)")
        ax.legend(fontsize=8)
    fig.suptitle("Synchronous ring AllReduce: preface vs baselines (paired seeds, 95 % CI)")
    fig.tight_layout()
    fig.savefig(Path(out) / "ring_allreduce.png", dpi=110)


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    Path(sys.argv[4]).mkdir(parents=True, exist_ok=True)
    try:
        primary(sys.argv[1], sys.argv[4])
        sensitivity(sys.argv[2], sys.argv[4])
        ring(sys.argv[3], sys.argv[4])
    except (FileNotFoundError, KeyError, ValueError, TypeError) as e:
        sys.exit(f"error: {e!r}: are {sys.argv[1]}, {sys.argv[2]} and {sys.argv[3]} the output folders of "
                 f"preface-primary, preface-sensitivity and ring-allreduce?\n{__doc__}")


if __name__ == "__main__":
    main()
