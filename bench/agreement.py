"""What the ranks' agreement before each call costs (docs/distributed.md,
"Agreement").

Compiles the digits MLP (models/mlp_train, 64-128-10, Adam) data-parallel
(dense, and CSER, whose step sends least) and runs its train step on 4
ranks under mpirun, 32 digits a rank, recording a trace on every rank,
once agreeing before every call (the default) and once before each
entry's first call only (GROVE_COMM_AGREE=first): the difference of the
calls' medians is what the agreement adds; its own span, longer, also
holds the wait for the slowest rank that the first collective would
otherwise wait. Runs over shared memory, and, as root, over
scripts/netns.sh's links shaped to 1 Gbit/s. Prints a table and writes the marked "agreement" section of
docs/perf.md.

    [sudo] .venv/bin/python bench/agreement.py [--quick]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NETNS = ROOT / "scripts" / "netns.sh"
RANKS, ROWS = 4, 32
METHODS = {"dense": ["--data-parallel"],
           "CSER": ["--data-parallel", "--compressor=grbs",
                    "--compress-error=reset", "--compress-ratio=64",
                    "--period-ratio=8", "--sync-period=8"]}


def build(workdir, method, flags):
    from grove_testing import Model
    where = os.path.join(workdir, method)
    os.makedirs(where)
    Model(str(ROOT / "models" / "mlp_train" / "mlp_train.mlir"),
          name="mlp_train", workdir=where, grovec_flags=flags)
    return os.path.join(where, "libmlp_train.so")


def run(library, steps, link, mode):
    from grove_dist import launch_command, netns_mpirun
    os.environ["GROVE_COMM_AGREE"] = mode
    argv = [sys.executable, str(ROOT / "bench" / "dist" /
                                "agreement_rank.py"), library, "mlp_train",
            str(steps), str(ROWS), os.path.dirname(library)]
    if link == "shared memory":
        code, out, _ = launch_command(argv, RANKS, 600)
    else:
        cmd, env = netns_mpirun(argv, RANKS, ["GROVE_LIB",
                                              "GROVE_COMM_AGREE"])
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                              timeout=600)
        code, out = proc.returncode, proc.stdout + proc.stderr
    if code:
        raise RuntimeError(out)
    line = next(l for l in out.splitlines() if l.startswith("{"))
    return json.loads(line)


def main():
    sys.path.insert(0, str(ROOT / "bench"))
    from timing import quick_args, use_build
    opts = quick_args(__doc__)
    use_build()
    steps = 30 if opts.quick else 500
    repeats = 1 if opts.quick else 5
    workdir = tempfile.mkdtemp(prefix="grove-agreement-")
    libraries = {m: build(workdir, m, f) for m, f in METHODS.items()}
    links = ["shared memory"]
    if os.geteuid() == 0 and not opts.quick:
        links.append("1 Gbit/s")
    else:
        print("bench/agreement.py: the 1 Gbit/s rows need root "
              "(network namespaces, tc); skipped")
    rows = []
    for link in links:
        try:
            if link != "shared memory":
                subprocess.run([str(NETNS), "up", str(RANKS), "1gbit",
                                "125kb"], check=True, capture_output=True)
            for method, library in libraries.items():
                # Launches vary more than the agreement costs: alternate
                # the two, take the median launch of each.
                times = {"every": [], "first": []}
                for _ in range(repeats):
                    for mode in times:
                        times[mode].append(
                            run(library, steps, link, mode)["call_us"])
                every = statistics.median(times["every"])
                first = statistics.median(times["first"])
                rows.append((link, method, every, first))
                print(f"{link:14s} {method:6s} call agreeing every call "
                      f"{every:8.1f} us, on the first call only "
                      f"{first:8.1f} us", flush=True)
        finally:
            if link != "shared memory":
                subprocess.run([str(NETNS), "down"], capture_output=True)
    section = report(rows, steps)
    print("\n" + section)
    if not opts.quick:
        sys.path.insert(0, str(ROOT / "bench"))
        from timing import write_perf_section
        write_perf_section(ROOT / "docs" / "perf.md", "agreement", section)


def report(rows, steps):
    lines = ["<!-- agreement: written by bench/agreement.py -->",
             "## Agreement before each call", "",
             f"`bench/agreement.py`: the digits MLP (64-128-10, Adam) "
             f"compiled data-parallel, {RANKS} ranks under mpirun on this "
             f"machine's {os.cpu_count()} cores, {ROWS} digits a rank, "
             f"{steps} calls after 20 warm-up ones, traced on every rank; "
             "the median call of rank 0, then the median of 5 launches, "
             "alternating the two modes. The agreement is the one 88-byte "
             "all-gather of fingerprints each call starts before it runs, "
             "ahead of the call's own collectives (docs/distributed.md). "
             "The call is timed agreeing before every call (the default) "
             "and before each entry's first call only "
             "(`GROVE_COMM_AGREE=first`); their difference is what agreeing "
             "adds. It is a few round trips whatever the model, and this "
             "small model's calls, whose first collective comes after a "
             "backward of about a hundred microseconds, hide the least of "
             "it: the worst case.", "",
             "| link | method | call, agreeing every call | first call "
             "only | added |",
             "| --- | --- | --- | --- | --- |"]
    for link, method, every, first in rows:
        added = every - first
        lines.append(f"| {link} | {method} | {every:.0f} µs | "
                     f"{first:.0f} µs | {added:+.0f} µs "
                     f"({added / first:+.0%}) |")
    lines.append("<!-- /agreement -->")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
