"""One rank of bench/agreement.py: times STEPS calls of a compiled
data-parallel train step under a trace and prints, on rank 0, one line of
JSON: the median duration of the ranks' agreement before each call and of
the whole call, in microseconds.

    agreement_rank.py LIBRARY MODULE STEPS ROWS TRACE_DIR   (under mpirun)
"""
import ctypes
import json
import os
import statistics
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))


def main():
    from grove_dist import Comm
    from grove_testing import Model
    library, module, steps, rows, trace_dir = sys.argv[1:6]
    steps, rows = int(steps), int(rows)
    model = Model("", name=module, workdir=trace_dir, library=library)
    comm = Comm(model.lib, timeout=60)
    comm.attach(model)
    g = np.random.default_rng(0)
    # models/mlp_train: the digits MLP, 64-128-10.
    for name, shape in {"fc1.weight": (128, 64), "fc1.bias": (128,),
                        "fc2.weight": (10, 128), "fc2.bias": (10,)}.items():
        model.set_weight(name, (g.standard_normal(shape) * 0.05)
                         .astype(np.float32))
    x = g.standard_normal((rows, 64)).astype(np.float32)
    y = g.integers(0, 10, rows).astype(np.int32)
    for _ in range(20):
        model.call("train_step", x, y)
    path = os.path.join(trace_dir, f"trace{comm.rank}.json")
    model.lib.grove_trace_start.argtypes = [ctypes.c_char_p]
    model.lib.grove_trace_start(path.encode())
    for _ in range(steps):
        model.call("train_step", x, y)
    model.lib.grove_trace_stop()
    with open(path) as f:
        spans = json.load(f)["traceEvents"]
    agree = [s["dur"] for s in spans if s.get("name") == "agreement"]
    calls = [s["dur"] for s in spans
             if s.get("cat") == "entry" and s.get("name") == "train_step"]
    comm.barrier()
    if comm.rank == 0:
        print(json.dumps({"agreement_us": statistics.median(agree)
                          if agree else 0.0,
                          "call_us": statistics.median(calls),
                          "calls": len(calls)}), flush=True)
    comm.destroy()


if __name__ == "__main__":
    main()
