# REQUIRES: mpi, netns
# RUN: %python %s
# The emulated network of scripts/netns.sh (docs/distributed.md): 2 ranks
# in their own network namespaces, each link shaped to 1 Gbit/s, run an
# all-reduce of 4 MiB under mpirun over Open MPI's TCP transport; it must
# take at least the ring bound (the shaping works: the ranks did not use
# shared memory or an unshaped path) and at most 3x it, and after `down`
# nothing the script made is left.
import os
import re
import subprocess
import sys

from grove_dist import netns_mpirun

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NETNS = os.path.join(ROOT, "scripts", "netns.sh")
SIZE, RANKS, GBPS = 4 << 20, 2, 1

subprocess.run([NETNS, "up", str(RANKS), "1gbit", "125kb"], check=True)
try:
    cmd, env = netns_mpirun(
        [sys.executable, os.path.join(ROOT, "bench", "dist",
                                      "allreduce_rank.py"), str(SIZE), "3"],
        RANKS, ["GROVE_LIB", "PYTHONPATH"])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seconds = float(re.search(r"allreduce \d+ ([0-9.]+)", proc.stdout)
                    .group(1))
finally:
    subprocess.run([NETNS, "down"], check=True)
bound = 2 * (RANKS - 1) / RANKS * SIZE / (GBPS * 1e9 / 8)
print(f"all-reduce of {SIZE} bytes over 2 ranks at 1 Gbit/s: "
      f"{seconds * 1e3:.1f} ms, ring bound {bound * 1e3:.1f} ms")
assert 0.95 * bound <= seconds <= 3 * bound, (seconds, bound)
left = subprocess.run(["ip", "netns", "list"], capture_output=True,
                      text=True).stdout
assert "grove-r" not in left, left
assert subprocess.run(["ip", "link", "show", "grovebr0"],
                      capture_output=True).returncode != 0
