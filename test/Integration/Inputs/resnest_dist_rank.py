"""One rank of test/Integration/train_dist_resnest.py, launched by mpirun.

    resnest_dist_rank.py LIBRARY NAME DATA OUT

Trains the tiny ResNeSt the driver compiled (LIBRARY, model NAME) on this
rank's share of each global batch of DATA (an npz the driver wrote: the
initial weights, the digit images, the batches' indices), then rank 0
writes OUT: the held-out accuracy of its model and the bytes it sent a
step.
"""
import json
import sys

import numpy as np
from grove_dist import Comm
from grove_testing import Model


def main():
    library, name, data_path, out = sys.argv[1:5]
    data = np.load(data_path)
    model = Model("", name=name, library=library)
    comm = Comm(model.lib, timeout=120)
    comm.attach(model)
    for key in data.files:
        if key.startswith("w_"):
            model.set_weight(key[2:], data[key])
    x, y, order = data["x_train"], data["y_train"], data["order"]
    for step in range(order.shape[0]):
        idx = order[step, comm.rank]
        model.call("train_step", x[idx], y[idx])
    payload, collectives, _ = comm.stats()
    if comm.rank == 0:
        logits, = model.call("forward", data["x_test"])
        accuracy = float((logits.argmax(1) == data["y_test"]).mean())
        with open(out, "w") as f:
            json.dump({"accuracy": accuracy,
                       "bytes_per_step": payload / order.shape[0]}, f)
    comm.barrier()
    del model
    comm.destroy()


if __name__ == "__main__":
    main()
