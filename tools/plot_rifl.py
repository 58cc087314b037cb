#!/usr/bin/env python3
"""Render the RIFL figures of docs/validation.md (section 7).

Usage: plot_rifl.py BER_SWEEP_DIR FRAME_EFFICIENCY_DIR OUT_DIR

BER_SWEEP_DIR is a `fabricsim sweep` output folder of
topologies/studies/rifl-ber-sweep-quick.yaml (or rifl-ber-sweep.yaml; its
results.csv then lacks the analytic column and the point folders are read
for it), FRAME_EFFICIENCY_DIR one of rifl-frame-efficiency.yaml. Writes
OUT_DIR/rifl_ber_sweep.png and OUT_DIR/rifl_frame_efficiency.png. Nothing
here is typed in from a paper: every value comes from the simulator's files.
"""
import csv
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


def rows(d):
    with open(Path(d) / "results.csv") as f:
        return list(csv.DictReader(f))


def analytic_from_points(d):
    """ber -> analytic_bandwidth_ratio from the points' result.json files."""
    out = {}
    for p in sorted((Path(d) / "points").glob("*/s*/result.json")):
        row = json.loads(p.read_text())["row"]
        out[row["ber"]] = row["analytic_bandwidth_ratio"]
    return out


def ber_sweep(d, out):
    r = rows(d)
    ber = [float(x["ber"]) for x in r]
    sim = [float(x["bandwidth_ratio"]) for x in r]
    if "analytic_bandwidth_ratio" in r[0]:
        ana = [float(x["analytic_bandwidth_ratio"]) for x in r]
    else:
        a = analytic_from_points(d)
        ana = [a[x["ber"]] for x in r]
    fig, (a1, a3, a2) = plt.subplots(1, 3, figsize=(16, 4.2))
    a1.semilogx(ber, sim, "o-", label="simulated")
    a1.semilogx(ber, ana, "--", label="analytic (renewal model)")
    a1.set_xlabel("bit error rate (both directions)")
    a1.set_ylabel("bandwidth ratio (vs error free)")
    a1.set_title("RIFL, 4 x 28 Gb/s, 10 m, 256-bit frames")
    a1.grid(True, which="both", alpha=0.3)
    a1.legend()
    # gap = (analytic - simulated) / simulated where something was lost
    pts = [(b, 100.0 * (a - s) / s) for b, s, a in zip(ber, sim, ana) if s < 0.999]
    a3.semilogx([b for b, _ in pts], [g for _, g in pts], "o-")
    a3.axhspan(-2, 2, color="green", alpha=0.12, label="+-2 %")
    a3.axhline(0, color="black", lw=0.8)
    a3.set_xlabel("bit error rate (both directions)")
    a3.set_ylabel("analytic - simulated (% of simulated)")
    a3.set_title("gap (points with a loss > 0.1 %)")
    a3.grid(True, which="both", alpha=0.3)
    a3.legend()
    for key, label in [("mean_latency_ns", "mean"), ("p99_latency_ns", "P99"), ("p999_latency_ns", "P99.9")]:
        a2.loglog(ber, [float(x[key]) / 1e3 for x in r], "o-", label=label)
    a2.set_xlabel("bit error rate (both directions)")
    a2.set_ylabel("one-way packet latency (us)")
    a2.grid(True, which="both", alpha=0.3)
    a2.legend()
    fig.tight_layout()
    fig.savefig(Path(out) / "rifl_ber_sweep.png", dpi=110)


def frame_efficiency(d, out):
    r = rows(d)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2))
    for fb in sorted({x["frame_bits"] for x in r}, key=int):
        pts = sorted([x for x in r if x["frame_bits"] == fb], key=lambda x: float(x["payload_bytes"]))
        p = [float(x["payload_bytes"]) for x in pts]
        a1.semilogx(p, [float(x["bandwidth_efficiency"]) for x in pts], "o-", label=f"{fb}-bit frames")
        a2.semilogx(p, [float(x["mean_latency_ns"]) for x in pts], "o-", label=f"{fb}-bit frames")
    a1.set_xlabel("payload (B)")
    a1.set_ylabel("bandwidth efficiency (payload / wire)")
    a2.set_xlabel("payload (B)")
    a2.set_ylabel("mean one-way latency (ns)")
    for a in (a1, a2):
        a.grid(True, which="both", alpha=0.3)
        a.legend()
    fig.tight_layout()
    fig.savefig(Path(out) / "rifl_frame_efficiency.png", dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    Path(sys.argv[3]).mkdir(parents=True, exist_ok=True)
    try:
        ber_sweep(sys.argv[1], sys.argv[3])
        frame_efficiency(sys.argv[2], sys.argv[3])
    except (FileNotFoundError, KeyError, ValueError) as e:
        sys.exit(f"error: {e!r}: are {sys.argv[1]} and {sys.argv[2]} the output folders of a RIFL BER sweep "
                 f"and of rifl-frame-efficiency?\n{__doc__}")
