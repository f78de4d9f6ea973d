"""One rank of test/Integration/distributed_agreement.py, under mpirun.

    agreement_rank.py WORKDIR

Reads WORKDIR/plan.json (per rank: the library to load, the batches to
feed, whether to call the application's all-reduce), makes each call and
writes WORKDIR/rank<r>.json: each call's status, message and seconds, the
weights at the end.
"""
import json
import os
import sys
import time

import numpy as np
from grove_dist import Comm
from grove_testing import GroveError, Model


def timed(fn):
    start = time.monotonic()
    try:
        fn()
        status, message = 0, ""
    except GroveError as e:
        status, message = e.status, e.message
    return {"status": status, "message": message,
            "seconds": time.monotonic() - start}


def main():
    workdir = sys.argv[1]
    with open(os.path.join(workdir, "plan.json")) as f:
        plan = json.load(f)
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    mine = plan["ranks"][rank]
    model = Model("", name=mine["module"], workdir=workdir,
                  library=mine["library"])
    comm = Comm(model.lib, timeout=plan["timeout"])
    if "agree" in mine:
        os.environ["GROVE_COMM_AGREE"] = mine["agree"]
    comm.attach(model)
    weights = np.load(os.path.join(workdir, mine["weights"]))
    for name in weights.files:
        model.set_weight(name, weights[name])
    data = np.load(os.path.join(workdir, "batches.npz"))
    calls = []
    for step, rows in enumerate(mine["rows"]):
        x = data["x%d" % step][rank][:rows]
        y = data["y%d" % step][rank][:rows].copy()
        if step in mine.get("bad_label_at", []):
            y[0] = 12
        calls.append(timed(lambda: model.call("train_step", x, y)))
    for count in mine.get("app_all_reduce", []):
        values = np.arange(count, dtype=np.float32) + rank
        calls.append(timed(lambda: comm.all_reduce(values)))
        calls[-1]["values"] = values.tolist()
    out = {"calls": calls,
           "weights": {n: model.get_weight(n).tolist() for n in weights.files}}
    with open(os.path.join(workdir, "rank%d.json" % rank), "w") as f:
        json.dump(out, f)
    comm.destroy()


if __name__ == "__main__":
    main()
