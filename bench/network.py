"""Data-parallel collectives over an emulated network (docs/distributed.md).

Builds the testbed of scripts/netns.sh (4 ranks in network namespaces, each
link shaped by tc to 1 and then 10 Gbit/s), runs the ranks under mpirun
over those links (Open MPI's TCP transport, not shared memory) and measures
the runtime's all-reduce of buckets of 1, 4 and 25 MiB against the link:
a ring all-reduce must move 2(n-1)/n of the bucket through each rank's
link, so its best time is 2(n-1)/n S / B. Tears the testbed down at the
end, also on failure. Needs root (network namespaces, tc). Writes the
marked "network" section of docs/perf.md.

    sudo .venv/bin/python bench/network.py [--quick]
"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NETNS = ROOT / "scripts" / "netns.sh"
RANKS = 4
SIZES = [1 << 20, 4 << 20, 25 << 20]


def mpirun(argv, ranks, timeout):
    from grove_dist import netns_mpirun
    cmd, env = netns_mpirun(argv, ranks, ["GROVE_LIB"])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=timeout)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)}:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def allreduce(size, repeat):
    out = mpirun([sys.executable, str(ROOT / "bench" / "dist" /
                                      "allreduce_rank.py"), str(size),
                  str(repeat)], RANKS, 600)
    return float(re.search(r"allreduce \d+ ([0-9.]+)", out).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    opts = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/network.py: needs root for network namespaces and tc "
                 "(nothing measured)")
    os.environ.setdefault("GROVE_LIB", str(ROOT / "build" / "lib"))
    sys.path.insert(0, str(ROOT / "test" / "lib"))
    rows = []
    try:
        # 100 Gbit/s is no limit here: what the machine's CPUs and TCP
        # stack reach, the ceiling of the shaped runs.
        for gbps in (1, 10, 100):
            # A millisecond of the rate in tbf's bucket.
            subprocess.run([str(NETNS), "up", str(RANKS), f"{gbps}gbit",
                            f"{125 * gbps}kb"], check=True,
                           capture_output=True)
            for size in SIZES[:1] if opts.quick else SIZES:
                seconds = allreduce(size, 3 if opts.quick else 7)
                ideal = 2 * (RANKS - 1) / RANKS * size / (gbps * 1e9 / 8)
                rows.append((gbps, size, seconds, ideal))
                print(f"{gbps:3d} Gbps, {size >> 20:3d} MiB bucket: "
                      f"{seconds * 1e3:8.2f} ms, ring bound "
                      f"{ideal * 1e3:8.2f} ms: {ideal / seconds:.0%} of the "
                      "link", flush=True)
    finally:
        subprocess.run([str(NETNS), "down"], capture_output=True)
    section = report(rows)
    print("\n" + section)
    if not opts.quick:
        sys.path.insert(0, str(ROOT / "bench"))
        from timing import write_perf_section
        write_perf_section(ROOT / "docs" / "perf.md", "network", section)


def report(rows):
    lines = ["<!-- network: written by bench/network.py -->",
             "## All-reduce over an emulated network", "",
             f"{RANKS} ranks in network namespaces (scripts/netns.sh), each "
             "link shaped by tc tbf (a bucket of 1 ms of the rate), under "
             "mpirun over Open MPI's TCP transport; the runtime's "
             "`grove_comm_all_reduce` of one f32 bucket, median of 7 after a "
             "warm-up. The ring bound is 2(n-1)/n · S / B, what each rank's "
             "link must carry. The 100 Gbps rows limit nothing: they are what "
             f"{RANKS} ranks on this machine's {os.cpu_count()} cores reach "
             "through the kernel's TCP (copies and the reduction's "
             "arithmetic), the ceiling of the shaped rows.", "",
             "| link | bucket | time | ring bound | share of the link | "
             "share of the machine's ceiling |",
             "| --- | --- | --- | --- | --- | --- |"]
    ceiling = {size: seconds for gbps, size, seconds, _ in rows
               if gbps == 100}
    for gbps, size, seconds, ideal in rows:
        top = ceiling.get(size)
        lines.append(f"| {gbps} Gbps | {size >> 20} MiB | "
                     f"{seconds * 1e3:.1f} ms | {ideal * 1e3:.1f} ms | "
                     f"{ideal / seconds:.0%} | "
                     + (f"{max(ideal, top) / seconds:.0%} |" if top
                        else "- |"))
    lines.append("<!-- /network -->")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
