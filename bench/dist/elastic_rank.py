"""One rank of bench/elastic_recovery.py, under mpirun: trains the digits
MLP (bench/elastic.py's model, the rate from grove.elastic_lr) from the
job's last checkpoint, if any, to TOTAL steps, checkpointing every EVERY
steps, and appends each step's (step, world, rate, loss, time) to LOG (rank
0). It ends with 0 when done; with 3 when the supervisor asked it to stop
(a STOP file seen at a checkpoint: the world may grow); with 75 when a
peer failed (GROVE_ERROR_PEER), as soon as it does. KILL=step makes the
last rank kill itself at that step (the fault the bench injects). At each
checkpoint rank 0 waits (at most ACK_WAIT seconds) for the supervisor to
acknowledge it, so the supervisor's decisions about that checkpoint (stop:
the world grows) do not depend on it being scheduled in time.

    elastic_rank.py LIBRARY NAME WORKDIR TOTAL EVERY SEED
"""
import json
import os
import signal
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
sys.path.insert(0, os.path.join(ROOT, "models", "mlp"))
BATCH = 32
ACK_WAIT = 10.0


def await_ack(workdir, step):
    """Tells the supervisor rank 0 is at the checkpoint of `step` and waits
    for its acknowledgement (at most ACK_WAIT seconds)."""
    tmp = os.path.join(workdir, "at_checkpoint.tmp")
    with open(tmp, "w") as f:
        f.write(str(step))
    os.replace(tmp, os.path.join(workdir, "at_checkpoint"))
    ack = os.path.join(workdir, "ack")
    deadline = time.monotonic() + ACK_WAIT
    while time.monotonic() < deadline:
        try:
            with open(ack) as f:
                if f.read().strip() == str(step):
                    return
        except OSError:
            pass
        time.sleep(0.001)


def main():
    from grove_dist import Comm
    from grove_testing import GroveError, Model
    from train import load_split
    library, name, workdir, total, every, seed = sys.argv[1:7]
    total, every, seed = int(total), int(every), int(seed)
    model = Model("", name=name, workdir=workdir, library=library)
    comm = Comm(model.lib, timeout=float(os.environ.get("TIMEOUT", "5")))
    comm.attach(model)
    rank, size = comm.rank, comm.size
    meta = os.path.join(workdir, "checkpoint.json")
    start = 0
    if os.path.exists(meta):
        with open(meta) as f:
            start = json.load(f)["step"]
        model.load_weights(os.path.join(workdir, "checkpoint.safetensors"))
    else:
        w = np.load(os.path.join(workdir, "initial.npz"))
        for k in w.files:
            model.set_weight(k, w[k])
    x_tr, _, y_tr, _ = load_split()
    x_tr, y_tr = x_tr.astype(np.float32), y_tr.astype(np.int32)
    kill = int(os.environ.get("KILL", "-1"))
    log = open(os.path.join(workdir, "log.jsonl"), "a") if rank == 0 else None
    for step in range(start, total):
        if step == kill and rank == size - 1:
            with open(os.path.join(workdir, "killed.json"), "w") as f:
                json.dump({"step": step, "time": time.time()}, f)
            os.kill(os.getpid(), signal.SIGKILL)
        # The global batch of this step, split over this world's ranks.
        g = np.random.default_rng([seed, step])
        idx = g.integers(0, len(x_tr), (size, BATCH))[rank]
        try:
            loss, lr = model.call("train_step", x_tr[idx], y_tr[idx],
                                  num_outputs=2)
        except GroveError as e:
            print(f"rank {rank}: step {step}: {e}", flush=True)
            os._exit(75)
        if log:
            log.write(json.dumps({"step": step + 1, "world": size,
                                  "lr": float(lr), "loss": float(loss),
                                  "time": time.time()}) + "\n")
            log.flush()
        if (step + 1) % every == 0 or step + 1 == total:
            if rank == 0:
                # Weights first (atomic), then the step that names them.
                model.save_weights(os.path.join(workdir,
                                                "checkpoint.safetensors"))
                with open(meta + ".tmp", "w") as f:
                    json.dump({"step": step + 1}, f)
                os.replace(meta + ".tmp", meta)
                await_ack(workdir, step + 1)
            stop = np.array([os.path.exists(os.path.join(workdir, "STOP"))
                             and rank == 0], np.float32)
            try:
                comm.all_reduce(stop)
            except GroveError as e:
                print(f"rank {rank}: at the checkpoint: {e}", flush=True)
                os._exit(75)
            if stop[0] > 0 and step + 1 < total:
                comm.destroy()
                sys.exit(3)
    comm.barrier()
    comm.destroy()


if __name__ == "__main__":
    main()
