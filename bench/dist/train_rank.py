"""One rank of bench/dist_train.py: trains the wide digits MLP with a
compiled data-parallel train step (grove) or with PyTorch DDP on gloo
(torch, optionally with the PowerSGD comm hook), on this rank's share of
each global batch, for STEPS steps; rank 0 evaluates every EVAL steps and
prints one line of JSON: the mean step time, the step at which the
held-out accuracy first reached TARGET and the one from which it stayed
there, and the final accuracy.

    train_rank.py grove LIBRARY NAME SPEC   (under mpirun)
    train_rank.py torch none|powersgd SPEC
SPEC: steps,eval,target,seed,lr[,batch,hidden_layers,bucket_mb]: the
digits a rank a step (32), the 1024x1024 layers (1: the wide MLP), DDP's
bucket cap (25 MB; bench/overlap.py varies the last three).
"""
import json
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
sys.path.insert(0, os.path.join(ROOT, "models", "mlp"))
HIDDEN = 1024


def dims(hidden_layers):
    """(name, out, in) of each linear layer."""
    d = [64] + [HIDDEN] * (hidden_layers + 1) + [10]
    return [(f"fc{i + 1}", d[i + 1], d[i]) for i in range(len(d) - 1)]


def init(seed, hidden_layers):
    g = np.random.default_rng(seed)

    def layer(o, i):
        b = 1 / np.sqrt(i)
        return (g.uniform(-b, b, (o, i)).astype(np.float32),
                g.uniform(-b, b, o).astype(np.float32))
    w = {}
    for name, o, i in dims(hidden_layers):
        w[name + ".weight"], w[name + ".bias"] = layer(o, i)
    return w


def main():
    kind = sys.argv[1]
    spec = sys.argv[-1].split(",")
    steps, every, target, seed, lr = spec[:5]
    batch, layers, bucket_mb = (spec[5:] + ["32", "1", "25"][len(spec) - 5:])
    steps, every, seed = int(steps), int(every), int(seed)
    target, lr = float(target), float(lr)
    batch, layers, bucket_mb = int(batch), int(layers), int(bucket_mb)
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    from train import load_split
    x_tr, x_te, y_tr, y_te = load_split()
    x_tr, x_te = x_tr.astype(np.float32), x_te.astype(np.float32)
    y_tr = y_tr.astype(np.int32)
    order = np.random.default_rng(seed + 7).integers(
        0, len(x_tr), (steps, size, batch))
    weights = init(seed, layers)
    if kind == "grove":
        step, evaluate, done, waited = grove_trainer(sys.argv[2], sys.argv[3],
                                                     weights)
    else:
        step, evaluate, done = torch_trainer(sys.argv[2], weights, lr, rank,
                                             size, layers, bucket_mb)
        waited = None
    times, checks, acc, blocked = [], [], 0.0, None
    for s in range(steps):
        if s == 5 and waited:
            blocked = waited()
        idx = order[s, rank]
        t0 = time.perf_counter()
        step(x_tr[idx], y_tr[idx])
        times.append(time.perf_counter() - t0)
        if rank == 0 and ((s + 1) % every == 0 or s + 1 == steps):
            acc = evaluate(x_te, y_te)
            checks.append((s + 1, acc))
    if rank == 0:
        # The mean, not the median: CSER's and Local AdaAlter's periodic
        # synchronisations are a minority of the steps, and a median would
        # leave their cost out.
        result = {"step": statistics.mean(times[5:]), "accuracy": acc,
                  **reached(checks, target)}
        if blocked is not None:
            # Seconds a step the caller blocked in collectives (rank 0's
            # evaluations do not call any).
            result["blocked"] = (waited() - blocked) / (steps - 5)
        print(json.dumps(result), flush=True)
    done()


def reached(checks, target):
    """The step of the first check at the target ("reached", as MLPerf's
    time to quality counts), and of the first after which every check
    stays at it ("held": a model that touches the target and falls back
    has not kept it); None where there is none."""
    first = next((s for s, a in checks if a >= target), None)
    held = None
    for s, a in reversed(checks):
        if a < target:
            break
        held = s
    return {"reached": first, "held": held}


def attached(library, name, weights):
    """The compiled model `name` at `library`, attached to a communicator
    of the job's ranks, with `weights` set: (model, comm). The rank
    scripts of bench/dist share it."""
    from grove_dist import Comm
    from grove_testing import Model
    model = Model("", name=name, workdir=os.path.dirname(library),
                  library=library)
    comm = Comm(model.lib, timeout=300)
    comm.attach(model)
    for k, v in weights.items():
        model.set_weight(k, v)
    return model, comm


def grove_trainer(library, name, weights):
    model, comm = attached(library, name, weights)

    def step(x, y):
        model.call("train_step", x, y)

    def evaluate(x, y):
        z, = model.call("forward", x)
        return float((z.argmax(1) == y).mean())

    def done():
        comm.barrier()
        comm.destroy()

    def waited():
        return comm.stats()[2]
    return step, evaluate, done, waited


def gloo_group(rank, size):
    """torch.distributed's gloo group of the job's ranks, one thread each,
    over rank's veth (scripts/netns.sh) unless GROVE_GLOO_IFNAME and
    GROVE_GLOO_INIT name another link (the tests use the loopback). The
    rank scripts of bench/dist share it."""
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    os.environ["GLOO_SOCKET_IFNAME"] = os.environ.get(
        "GROVE_GLOO_IFNAME", f"gv{rank}a")
    dist.init_process_group("gloo", init_method=os.environ.get(
        "GROVE_GLOO_INIT", "tcp://10.77.0.1:29577"), rank=rank,
        world_size=size)


def torch_trainer(hook, weights, lr, rank, size, layers, bucket_mb):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    gloo_group(rank, size)
    modules = []
    for name, o, i in dims(layers):
        modules += [torch.nn.Linear(i, o), torch.nn.ReLU()]
    net = torch.nn.Sequential(*modules[:-1])
    with torch.no_grad():
        for k, (name, _, _) in enumerate(dims(layers)):
            net[2 * k].weight.copy_(
                torch.from_numpy(weights[name + ".weight"]))
            net[2 * k].bias.copy_(torch.from_numpy(weights[name + ".bias"]))
    # The PowerSGD hook waits on gloo futures inside gloo's callbacks: with
    # two buckets in flight both worker threads block and the step
    # deadlocks (PyTorch 1.13). One bucket for the whole model avoids it:
    # the first bucket's cap is a module global the Reducer reads.
    if hook == "powersgd":
        dist._DEFAULT_FIRST_BUCKET_BYTES = 64 << 20
    model = DDP(net, bucket_cap_mb=64 if hook == "powersgd" else bucket_mb)
    if hook == "powersgd":
        from torch.distributed.algorithms.ddp_comm_hooks import \
            powerSGD_hook as psgd
        state = psgd.PowerSGDState(process_group=None,
                                   matrix_approximation_rank=4,
                                   start_powerSGD_iter=2)
        model.register_comm_hook(state, psgd.powerSGD_hook)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad()
        loss_fn(model(torch.from_numpy(x)), torch.from_numpy(y).long()) \
            .backward()
        opt.step()

    def evaluate(x, y):
        with torch.no_grad():
            z = net(torch.from_numpy(x)).numpy()
        return float((z.argmax(1) == y).mean())

    return step, evaluate, torch_done


def torch_done():
    """Ends a PyTorch rank. PyTorch 1.13's gloo teardown aborts or spins
    now and then ("terminate called without an active exception"): wait
    for every rank, then leave without it."""
    import torch.distributed as dist
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
