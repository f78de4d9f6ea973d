"""Overlapping the gradients' all-reduces with the backward: Grove with and
without grove-overlap-collectives, and PyTorch DDP (which always overlaps),
on 4 ranks over the emulated network (docs/distributed.md, "Overlap").

A deep digits MLP (64-1024x5-10: four 1024x1024 layers, 17 MB of
gradients a step), 512 digits a rank a step, Adam, gradients in 4 MiB
buckets (one 1024x1024 layer's weight each; DDP's bucket_cap_mb 4), links
shaped to 1 and 10 Gbit/s (scripts/netns.sh). The backward computes the
last layer's gradient first: each bucket's all-reduce can move while the
layers below are differentiated. Prints and writes (docs/perf.md,
"overlap") the mean step time (the median of three launches) and its
ratio to Grove's blocking step. Needs root.

    sudo .venv/bin/python bench/overlap.py [--quick]
"""
import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import dist_train  # noqa: E402

LAYERS, BATCH, BUCKET_MB = 4, 512, 4
BLOCKING = "Grove, blocking all-reduces"
METHODS = [
    (BLOCKING, ["--overlap-collectives=false"]),
    ("Grove, overlapped (grove-overlap-collectives)", []),
]
DDP = "PyTorch DDP (gloo, overlaps by design)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--links", default="1,10", help="Gbit/s, comma-separated")
    opts = ap.parse_args()
    Model = dist_train.prepare("overlap.py")
    steps, repeat = (12, 1) if opts.quick else (30, 3)
    # Step times only: the held-out check runs once, at the end.
    spec = f"{steps},{steps},2.0,0,{dist_train.LR},{BATCH},{LAYERS},{BUCKET_MB}"
    workdir = tempfile.mkdtemp(prefix="grove-overlap-")
    runs = []
    for i, (label, flags) in enumerate(METHODS):
        name = f"ov{i}"
        Model(dist_train.source(name, dist_train.ADAM, LAYERS), name=name,
              workdir=workdir,
              grovec_flags=["--data-parallel", "--cpu=native",
                            f"--bucket-bytes={BUCKET_MB << 20}", *flags])
        runs.append((label, ["grove", os.path.join(workdir, f"lib{name}.so"),
                             name, spec]))
    runs.append((DDP, ["torch", "none", spec]))
    rows = []
    for gbps in map(int, opts.links.split(",")):
        with dist_train.shaped_links(gbps):
            for label, argv in runs:
                r = dist_train.median_launch(argv, repeat)
                rows.append((gbps, label, r["step"], r.get("blocked")))
                print(f"{gbps:3d} Gbps {label:48s} {r['step'] * 1e3:8.1f} ms",
                      flush=True)
    section = report(rows, steps, repeat)
    print("\n" + section)
    if not opts.quick:
        from timing import write_perf_section
        write_perf_section(ROOT / "docs" / "perf.md", "overlap", section)


def report(rows, steps, repeat):
    lines = ["<!-- overlap: written by bench/overlap.py -->",
             "## Overlapping all-reduces with the backward", "",
             f"{dist_train.RANKS} ranks in network namespaces (scripts/"
             f"netns.sh), links shaped by tc; the digits MLP with {LAYERS} "
             f"1024x1024 layers, {BATCH} digits a rank a step, Adam, "
             f"gradients in {BUCKET_MB} MiB buckets; the mean step time "
             f"(steps 6 to {steps}), the median of {repeat} launches, and "
             "its ratio to "
             "Grove's blocking step (higher is faster); for Grove, the time "
             "a step rank 0's caller blocked in collectives "
             "(grove_comm_get_stats).", "",
             "| link | method | step | vs blocking | blocked in collectives |",
             "| --- | --- | --- | --- | --- |"]
    for gbps in sorted({r[0] for r in rows}):
        base = next(s for g, l, s, _ in rows if g == gbps and l == BLOCKING)
        for g, label, step, blocked in rows:
            if g == gbps:
                lines.append(
                    f"| {gbps} Gbps | {label} | {step * 1e3:.1f} ms | "
                    f"{base / step:.2f}x | "
                    + (f"{blocked * 1e3:.1f} ms" if blocked is not None
                       else "-") + " |")
    lines.append("<!-- /overlap -->")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
