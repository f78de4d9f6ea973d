"""The network cost model against every fixed choice, over link rates
(docs/distributed.md "The network cost model", docs/perf.md "cost-model").

The wide digits MLP of bench/dist_train.py (4.5 MB of gradients a step) in
1 MiB buckets (the last layer's gradients and fc2's bias, the 4 MB
1024x1024 weight, the first layer's), on 4 ranks in network namespaces
(scripts/netns.sh) whose links tc shapes to 0.1, 1 and 10 Gbit/s, and at 100 (unshaped: the 2
cores' TCP is the limit). Every fixed choice, the same for all buckets:
dense, bf16 + error feedback, top-k + error feedback at 1/4, 1/16, 1/64 and
1/256; and the cost model's (`--compressor=bf16,topk --compress-ratio=auto
--compress-error=feedback`), compiled for each link with the bandwidth
measured on it: the runtime's all-reduce of 4 MiB over the 4 ranks, as bus
bandwidth 2(n-1)/n S / t (what nccl-tests reports), which is what a
person tuning a job would give it. Each bucket's choice is read from the
compiler's remarks.

Measured: each program's step time on each link (the mean of steps 6 to
STEPS, the median of REPEAT launches) and bytes on each rank's link a step
(veth counters); and once, unshaped, the steps each program needs to reach
and hold 95% held-out accuracy (checked every 5 steps): Grove's training
is deterministic, so a program takes the same steps on any link, and its
time to quality on a link is those steps times its step time there. Needs
root. Writes the marked "cost-model" section of docs/perf.md.

    sudo .venv/bin/python bench/cost_model.py [--quick]
    .venv/bin/python bench/cost_model.py --report RESULTS_JSON  # re-render
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from dist_train import (RANKS, adam, median_launch, prepare,  # noqa: E402
                        shaped_links, source)
from dist_lm import link_bytes  # noqa: E402
from timing import quick_args, write_perf_section  # noqa: E402

LINKS = (0.1, 1, 10, 100)
UNSHAPED = 100
LR, TARGET, EVERY, HELD_STEPS = 1e-3, 0.95, 5, 200
BUCKET = 1 << 20
EF = "--compress-error=feedback"
FIXED = [("dense", []), ("bf16 + EF", ["--compressor=bf16", EF])] + [
    (f"top-k 1/{r} + EF", ["--compressor=topk", f"--compress-ratio={r}", EF])
    for r in (4, 16, 64, 256)]
AUTO = "cost model"
# The choices read as they name fixed programs: remark text -> label.
CHOICE = {"dense": "dense", "bf16 1/2": "bf16 + EF"}


def auto_flags(gbps):
    return ["--compressor=bf16,topk", "--compress-ratio=auto", EF,
            f"--network-gbps={gbps:.3g}", f"--world-size={RANKS}",
            "--cost-batch-size=32", "--compute-gflops=5"]


def compile_program(Model, workdir, name, flags):
    """The library of the wide MLP compiled with `flags`, and the compile
    log (ratio=auto's remarks)."""
    model = Model(source(name, adam(LR)), name=name, workdir=workdir,
                  grovec_flags=["--data-parallel", "--cpu=native",
                                f"--bucket-bytes={BUCKET}", *flags])
    return os.path.join(workdir, f"lib{name}.so"), model.compile_log


def choices(log):
    """Each bucket's choice, from grove-insert-collectives' remarks."""
    found = re.findall(r"bucket (\d+) .*?; sends (it dense|\S+ 1/\d+)", log)
    return [("dense" if how == "it dense" else how) for _, how in
            sorted(found, key=lambda f: int(f[0]))]


def bus_gbps():
    """The bus bandwidth of the runtime's all-reduce of 4 MiB over the
    ranks, in Gbit/s."""
    from grove_dist import netns_mpirun
    size = 4 << 20
    cmd, env = netns_mpirun([sys.executable, str(ROOT / "bench" / "dist" /
                                                 "allreduce_rank.py"),
                             str(size), "5"], RANKS, ["GROVE_LIB"])
    out = subprocess.run(cmd, capture_output=True, text=True, env=env,
                         timeout=300, start_new_session=True, check=True)
    seconds = float(out.stdout.split()[-1])
    return 2 * (RANKS - 1) / RANKS * size / seconds * 8 / 1e9


def timed(library, name, steps, repeat):
    """Step time (median of `repeat` launches) and bytes a step on a
    rank's link."""
    before = link_bytes()
    r = median_launch(["grove", library, name,
                       f"{steps},{steps},{TARGET},0,{LR}"], repeat)
    sent = [b - a for a, b in zip(before, link_bytes())]
    r["wire"] = statistics.mean(sent) / (steps * repeat)
    return r


def main():
    opts = quick_args(__doc__, lambda ap: ap.add_argument(
        "--report", metavar="RESULTS_JSON",
        help="write the section from a run's results.json"))
    if opts.report:
        with open(opts.report) as f:
            section = report(json.load(f))
        print(section)
        write_perf_section(ROOT / "docs" / "perf.md", "cost-model", section)
        return
    Model = prepare("cost_model.py")
    steps, repeat, links = (15, 1, (1, 10)) if opts.quick else (30, 3, LINKS)
    held_steps = 60 if opts.quick else HELD_STEPS
    workdir = tempfile.mkdtemp(prefix="grove-cost-model-")
    fixed = {label: compile_program(Model, workdir, f"f{i}", flags)[0]
             for i, (label, flags) in enumerate(FIXED)}
    rows, picks = [], {}
    for gbps in links:
        with shaped_links(gbps):
            bus = bus_gbps()
            library, log = compile_program(Model, workdir,
                                           f"a{str(gbps).replace('.', '_')}",
                                           auto_flags(bus))
            picks[gbps] = {"bus": bus, "choices": choices(log),
                           "library": library}
            for label, lib in list(fixed.items()) + [(AUTO, library)]:
                r = timed(lib, Path(lib).stem[3:], steps, repeat)
                rows.append({"gbps": gbps, "label": label, **r})
                print(f"{gbps:5g} Gbps {label:18s} step "
                      f"{r['step'] * 1e3:7.1f} ms, "
                      f"{r['wire'] / 1e6:6.2f} MB a step", flush=True)
            print(f"{gbps:5g} Gbps: bus bandwidth {bus:.2f} Gbit/s; the cost "
                  f"model sends {', '.join(picks[gbps]['choices'])}",
                  flush=True)
    held = convergence(fixed, picks, held_steps)
    results = {"rows": rows, "picks": picks, "held": held, "steps": steps,
               "repeat": repeat, "held_steps": held_steps}
    with open(os.path.join(workdir, "results.json"), "w") as f:
        json.dump(results, f)
    print(f"results: {workdir}/results.json")
    section = report(results)
    print("\n" + section)
    if not opts.quick:
        write_perf_section(ROOT / "docs" / "perf.md", "cost-model", section)


def uniform(choice_list):
    """The fixed program a list of bucket choices is, if it is one."""
    labels = {CHOICE.get(c, f"top-k {c.split()[-1]} + EF")
              for c in choice_list}
    return labels.pop() if len(labels) == 1 else None


def convergence(fixed, picks, steps):
    """Steps to reach and hold the target of each fixed program and each
    link's cost-model program that is not one of them, unshaped."""
    held = {}
    with shaped_links(UNSHAPED):
        programs = list(fixed.items()) + [
            (f"{AUTO} at {gbps:g}", p["library"]) for gbps, p in picks.items()
            if uniform(p["choices"]) not in fixed]
        for label, lib in programs:
            r = median_launch(["grove", lib, Path(lib).stem[3:],
                               f"{steps},{EVERY},{TARGET},0,{LR}"], 1)
            held[label] = {k: r.get(k) for k in ("reached", "held",
                                                 "accuracy")}
            print(f"{label:24s} {TARGET:.0%} held from step {r.get('held')}"
                  f", final {r.get('accuracy', 0):.4f}", flush=True)
    return held


def held_of(held, picks, gbps, label):
    """Steps to the target of `label` on link `gbps` (the cost model's:
    the fixed program it is, or its own run)."""
    if label != AUTO:
        return held.get(label, {})
    same = uniform(picks[gbps]["choices"])
    return held.get(same) or held.get(f"{AUTO} at {gbps:g}", {})


def report(results):
    picks = {float(k): v for k, v in results["picks"].items()}
    lines = ["<!-- cost-model: written by bench/cost_model.py -->",
             "## The network cost model against every fixed choice", "",
             f"{RANKS} ranks in network namespaces, links shaped by tc "
             f"({UNSHAPED} Gbit/s: unshaped in effect); the wide digits MLP "
             "(4.5 MB of gradients) in 1 MiB buckets (3: the last layer's "
             "gradients and fc2's bias, the 1024x1024 weight, the first "
             "layer's), 32 digits "
             f"a rank a step, Adam lr {LR:g}. Step: the mean of steps 6 to "
             f"{results['steps']}, the median of {results['repeat']} "
             "launches; wire: bytes a step on a rank's link (veth "
             f"counters). Held: the first check after which {TARGET:.0%} "
             "held-out accuracy is kept (every "
             f"{EVERY} steps, {results['held_steps']} steps, unshaped: the "
             "arithmetic is the same on every link); time: held x step. "
             "The cost model is given the bus bandwidth measured on the "
             "link.", "",
             "| link | bus bandwidth | program | buckets send | step | wire "
             "a step | held from | time to held | vs best fixed |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    goals = []
    for gbps in sorted(picks):
        group = [r for r in results["rows"] if float(r["gbps"]) == gbps]
        times = {}
        for r in group:
            h = held_of(results["held"], picks, gbps, r["label"]).get("held")
            times[r["label"]] = r["step"] * h if h else None
        best = min(((t, l) for l, t in times.items() if t and l != AUTO),
                   default=(None, None))
        for r in group:
            label, t = r["label"], times[r["label"]]
            sends = ", ".join(picks[gbps]["choices"]) if label == AUTO \
                else "-"
            h = held_of(results["held"], picks, gbps, label).get("held")
            vs = f"{t / best[0]:.2f}x" if t and best[0] else "-"
            lines.append(
                f"| {gbps:g} Gbps | {picks[gbps]['bus']:.2f} Gbit/s | "
                f"{label} | {sends} | {r['step'] * 1e3:.1f} ms | "
                f"{r['wire'] / 1e6:.2f} MB | {h or 'not held'} | "
                f"{f'{t:.2f} s' if t else '-'} | {vs} |")
        goals.append(goal_line(gbps, picks[gbps]["choices"], times, best))
    lines += ["", *goals, falling(picks), "<!-- /cost-model -->"]
    return "\n".join(lines)


def goal_line(gbps, choice_list, times, best):
    """The cost model's time to held against the best fixed choice's. A
    choice that is one fixed program for every bucket compiles to that
    program's collectives and arithmetic (only the options it records
    differ), so its time is that program's; its own launches, which
    measure the same code again, are given beside it."""
    own = times.get(AUTO)
    same = uniform(choice_list)
    auto = times.get(same) if same else own
    ratio = auto / best[0] if auto and best[0] else None
    text = f"* {gbps:g} Gbps: the cost model sends {', '.join(choice_list)}"
    if same:
        text += f", the program of {same}"
    if ratio is None:
        text += "; its time to held is not measured (not held)"
    else:
        text += (f"; its time to held is {ratio:.2f}x the best fixed "
                 f"choice's ({best[1]})")
        if same and own:
            text += (f" ({own / best[0]:.2f}x by its own launches, the "
                     "spread of launches of one program here)")
    if gbps == 10:
        light = all(c in ("dense", "bf16 1/2") for c in choice_list)
        met = light and ratio is not None and ratio <= 1.03
        text += (". Goal (no compression or 16-bit, within 3%): "
                 f"{'met' if met else 'not met'}")
    return text + "."


def falling(picks):
    """Whether the most compression the model picks falls as links speed
    up ("is the network the bottleneck": the needed ratio falls)."""
    def most(choice_list):
        return max(int(c.split("/")[-1]) if "/" in c else 1
                   for c in choice_list)
    ladder = [(gbps, most(picks[gbps]["choices"])) for gbps in sorted(picks)]
    monotone = all(a[1] >= b[1] for a, b in zip(ladder, ladder[1:]))
    return ("* The largest ratio picked, by link: " +
            ", ".join(f"{g:g} Gbps 1/{m}" for g, m in ladder) +
            (": it falls as the link gets faster." if monotone else
             ": it does not fall monotonically."))


if __name__ == "__main__":
    main()
