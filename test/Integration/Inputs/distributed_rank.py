"""One rank of test/Integration/distributed.py, launched by mpirun.

    distributed_rank.py SCENARIO WORKDIR

Loads the library the driver compiled (WORKDIR/lib<model>.so), attaches a
communicator over the job, runs the scenario's steps on this rank's share of
the inputs the driver wrote (WORKDIR/inputs.npz) and writes what it saw to
WORKDIR/rank<r>.npz: the params and state after the steps, the losses, the
communicator's byte counts, or the error a fault scenario expects.
"""
import os
import signal
import sys
import time

import numpy as np
from grove_dist import Comm
from grove_testing import GroveError, Model


def main():
    scenario, workdir = sys.argv[1], sys.argv[2]
    inputs = np.load(os.path.join(workdir, "inputs.npz"))
    model_name = str(inputs["model"])
    model = Model("", name=model_name, workdir=workdir,
                  library=os.path.join(workdir, "lib%s.so" % model_name))
    comm = Comm(model.lib, timeout=float(inputs["timeout"]))
    comm.attach(model)
    rank, size = comm.rank, comm.size
    for name in inputs["weight_names"]:
        model.set_weight(str(name), inputs["w_" + str(name)])
    if "load" in inputs:
        model.load_weights(str(inputs["load"]))
    outputs = int(inputs["num_outputs"]) if "num_outputs" in inputs else 1
    out = {"size": size}
    steps = int(inputs["steps"])
    losses = []
    for step in range(steps):
        args = [inputs["in%d" % i][step][rank] for i in range(int(inputs["num_inputs"]))]
        if scenario in ("kill", "stall") and rank == size - 1 and step == 3:
            # Mid-training, before this rank's collectives of the step.
            with open(os.path.join(workdir, "victim.pid"), "w") as f:
                f.write(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL if scenario == "kill"
                    else signal.SIGSTOP)
        start = time.monotonic()
        try:
            losses.append(model.call("train_step", *args,
                                     num_outputs=outputs))
        except GroveError as e:
            out.update(error_status=e.status, error=str(e), step=step,
                       seconds=time.monotonic() - start)
            break
    out["losses"] = np.array(losses)
    if "save" in inputs and rank == 0:
        model.save_weights(str(inputs["save"]))
    for name in inputs["read_names"]:
        out["p_" + str(name)] = model.get_weight(str(name))
    out["payload"], out["collectives"], _ = comm.stats()
    if "error" not in out:
        np.savez(os.path.join(workdir, "rank%d.npz" % rank), **out)
    if "error" in out:
        # A failed communicator fails the next call at once, and destroying
        # it does not wait for the peers.
        start = time.monotonic()
        try:
            model.call("train_step", *args, num_outputs=outputs)
            out["again"] = "the next call succeeded"
        except GroveError as e:
            out["again"] = str(e)
        comm.destroy()
        out["again_seconds"] = time.monotonic() - start
        np.savez(os.path.join(workdir, "rank%d.npz" % rank), **out)
        # The driver ends a stopped peer once every survivor has reported.
        os._exit(0)
    comm.barrier()
    del model
    comm.destroy()


if __name__ == "__main__":
    main()
