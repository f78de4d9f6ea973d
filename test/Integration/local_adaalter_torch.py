# REQUIRES: mpi
# RUN: %python %s
# Grove's Local AdaAlter against bench/dist/lm_rank.py's PyTorch
# transcription of the authors' (`lm_rank.py torch adaalter`, the
# cross-check of bench/dist_lm.py): the LSTM language model of
# models/lstm_lm, small (vocabulary 64, embeddings and LSTM of 16, 4
# sequences of 8 tokens a rank a step), on 2 ranks under mpirun, each rank
# holding both: Grove's compiled train step (--data-parallel,
# grove.adaalter {period = 4, sync_warmup_steps = 8}, lr 0.02, epsilon
# 1e-7, the global norm clipped to 1) and lm_rank.torch_trainer (DDP on
# gloo over the loopback, its post-local-SGD hook averaging the gradients
# during the warm-up; AdaAlter written out, the denominators frozen
# between averages, the params and accumulators averaged), from
# lm_rank.init's weights (checked: PyTorch's copy must be exact; its
# decoder once kept PyTorch's own initialisation), each rank on its own
# random sequences. After every step each rank compares its params, accumulators
# and denominators, Grove against PyTorch, as max |a - b| / max |a| per
# tensor:
#  * lock-step: after each comparison PyTorch's params and state are set
#    to Grove's, so each step is compared from one state: every step of
#    every phase (warm-up, local, average) within 1e-5 (measured: 5e-7);
#  * free-running: the two run apart for 68 steps (8 synchronous, then 15
#    periods) and end within 1e-3 of scale (measured: up to 3e-5; AdaAlter's
#    first steps, lr g / sqrt(epsilon), magnify float32 rounding).
# About 10 s on 2 cores. By hand, `--table` prints each step's worst
# difference and the options set the sizes and the schedule, e.g. the
# benchmark's model, corpus and warm-up (about 90 s on 2 cores; float32
# rounding of the larger LSTM reaches 1e-4 of an accumulator's scale in
# one step, 1e-3 over its 66 free steps):
#   .venv/bin/python test/Integration/local_adaalter_torch.py --ranks 4 \
#     --vocab 8192 --embed 128 --hidden 128 --length 32 --warmup 50 \
#     --steps 66 --corpus build/data/bert --lock-tol 2e-4
import argparse
import os
import socket
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
for d in ("bin", "lib"):
    if os.path.isdir(os.path.join(ROOT, "build", d)):
        os.environ.setdefault("GROVE_" + d.upper(),
                              os.path.join(ROOT, "build", d))
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
sys.path.insert(0, os.path.join(ROOT, "bench", "dist"))
sys.path.insert(0, os.path.join(ROOT, "models", "lstm_lm"))
import lm_rank  # noqa: E402

NAMES = ["embed.weight", "lstm.W", "lstm.U", "lstm.b", "decoder.weight",
         "decoder.bias"]
# lm_rank's LM keeps lstm.W and lstm.U transposed (nn.LSTM's weight_ih_l0,
# weight_hh_l0); its params come in NAMES' order.
TRANSPOSED = {"lstm.W", "lstm.U"}
SLOTS = ["param", "accumulator", "denominator"]


def options(argv):
    p = argparse.ArgumentParser(description="Grove's Local AdaAlter "
                                "against lm_rank.py's PyTorch one")
    for name, default in (("ranks", 2), ("vocab", 64), ("embed", 16),
                          ("hidden", 16), ("batch", 4), ("length", 8),
                          ("steps", 68), ("warmup", 8), ("period", 4)):
        p.add_argument("--" + name, type=int, default=default)
    for name, default in (("lr", 0.02), ("epsilon", 1e-7), ("clip", 1.0)):
        p.add_argument("--" + name, type=float, default=default)
    # At the benchmark's sizes (an LSTM of 128 over 32 tokens, 8192
    # logits) the float32 gradients of the two differ by up to 3e-5 of an
    # update's scale and a step's accumulators by up to 1e-4 (any step of
    # any phase, the update's size the same within 2e-6): --lock-tol 2e-4.
    p.add_argument("--lock-tol", type=float, default=1e-5)
    p.add_argument("--free-tol", type=float, default=1e-3)
    p.add_argument("--corpus", help="a directory with the BERT corpus's "
                   "train.bin (models/bert/make_corpus.py; --vocab 8192): "
                   "its windows instead of random tokens")
    p.add_argument("--modes", default="lock,free",
                   help="which comparisons to run")
    p.add_argument("--table", action="store_true",
                   help="print each step's worst difference")
    return p.parse_args(argv)


def phase(t, o):
    """The phase of step t (1-based)."""
    if t <= o.warmup:
        return "warm-up"
    return "average" if (t - o.warmup) % o.period == 0 else "local"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(mode, workdir, port):
    """One rank: Grove's and PyTorch's steps side by side; PyTorch's
    process group meets at 127.0.0.1:port."""
    from grove_dist import Comm
    from grove_testing import Model
    import torch
    inputs = np.load(os.path.join(workdir, "inputs.npz"))
    o = options(list(inputs["argv"]))
    model = Model("", name="lm_local", workdir=workdir,
                  library=os.path.join(workdir, "liblm_local.so"))
    comm = Comm(model.lib, timeout=300)
    comm.attach(model)
    rank, size = comm.rank, comm.size
    weights = lm_rank.init(int(inputs["seed"]), o.vocab, o.embed, o.hidden)
    for k, v in weights.items():
        model.set_weight(k, v)
    os.environ["GROVE_GLOO_IFNAME"] = "lo"
    os.environ["GROVE_GLOO_INIT"] = f"tcp://127.0.0.1:{port}"
    step, _, done = lm_rank.torch_trainer(
        weights, o.lr, o.clip, o.epsilon, o.period, o.warmup, rank, size,
        o.vocab, o.embed, o.hidden, faithful=True)
    # The trainer's state, from its step's closure: params, accumulators
    # and frozen denominators, each a list in NAMES' order.
    cells = dict(zip(step.__code__.co_freevars,
                     (c.cell_contents for c in step.__closure__)))
    torch_state = [cells["params"], cells["acc"], cells["den"]]
    assert len(cells["params"]) == len(NAMES)
    forest = lm_rank.chains(o.batch, o.length)

    def compare(align):
        """Each tensor's max |grove - torch| / max |grove|, slot by slot;
        with `align`, PyTorch's tensor is then set to Grove's."""
        out = np.zeros((len(SLOTS), len(NAMES)))
        for j, slot in enumerate(SLOTS):
            for i, n in enumerate(NAMES):
                g = model.get_weight(
                    n if slot == "param" else f"{n}.adaalter.{slot}")
                tt = torch_state[j][i]
                t = tt.detach().numpy()
                t = t.T if n in TRANSPOSED else t
                scale = max(float(np.abs(g).max()), 1e-30)
                out[j, i] = float(np.abs(g.astype(np.float64) - t).max()
                                  ) / scale
                if align:
                    with torch.no_grad():
                        tt.copy_(torch.from_numpy(np.ascontiguousarray(
                            g.T if n in TRANSPOSED else g)))
        return out

    # Both start from init()'s weights: what differs before the first step
    # is reported (and fails the test), then set to Grove's.
    initial = compare(align=True)[0]
    diffs = np.zeros((o.steps, len(SLOTS), len(NAMES)))
    for s in range(o.steps):
        x, y = inputs["tokens"][s, rank], inputs["targets"][s, rank]
        model.call("train_step", *forest, x, y)
        step(forest, x, y)
        diffs[s] = compare(align=mode == "lock")
    np.save(os.path.join(workdir, f"{mode}{rank}.npy"), diffs)
    np.save(os.path.join(workdir, f"initial{rank}.npy"), initial)
    comm.barrier()
    model = None  # its context goes before the communicator
    comm.destroy()
    done()  # PyTorch's barrier, then os._exit(0)


def report(mode, diffs, o):
    """Per phase: the worst difference (over ranks, tensors and steps) of
    each slot; with --table, each step's worst."""
    worst = diffs.max(axis=0)  # (steps, slots, names)
    print(f"{mode}: max |grove - torch| / max |grove| over {o.ranks} ranks")
    for p in ("warm-up", "local", "average"):
        rows = [s for s in range(o.steps) if phase(s + 1, o) == p]
        if rows:
            print(f"  {p:8s} " + ", ".join(
                f"{slot} {worst[rows, j].max():.1e}"
                for j, slot in enumerate(SLOTS)))
    if o.table:
        for s in range(o.steps):
            j, i = np.unravel_index(np.argmax(worst[s]), worst[s].shape)
            print(f"    step {s + 1:3d} {phase(s + 1, o):8s} "
                  f"{worst[s].max():.2e} ({NAMES[i]} {SLOTS[j]})")
    return worst


def sequences(o, R):
    """Each step's and rank's tokens and targets."""
    shape = (o.steps, o.ranks)
    if not o.corpus:
        t = R.integers(0, o.vocab, shape + (o.batch * o.length + 1,))
        return t[..., :-1].astype(np.int32), t[..., 1:].astype(np.int32)
    train = np.fromfile(os.path.join(o.corpus, "train.bin"), "<u2") \
        .astype(np.int32)
    assert train.max() < o.vocab, "the corpus needs --vocab 8192"
    starts = R.integers(0, len(train) - o.length - 1, shape + (o.batch,))
    pairs = [[lm_rank.windows(train, starts[s, r], o.length)
              for r in range(o.ranks)] for s in range(o.steps)]
    return (np.array([[x for x, _ in row] for row in pairs]),
            np.array([[y for _, y in row] for row in pairs]))


def main():
    import generate
    from grove_dist import launch
    from grove_testing import Model, rng
    argv = sys.argv[1:]
    o = options(argv)
    R = rng()
    workdir = tempfile.mkdtemp(prefix="grove-adaalter-torch-")
    text = generate.module(o.vocab, o.embed, o.hidden, lr=o.lr,
                           period=o.period, warmup=o.warmup, clip=o.clip,
                           epsilon=o.epsilon, name="lm_local")
    Model(text, name="lm_local", workdir=workdir,
          grovec_flags=["--data-parallel"])
    tokens, targets = sequences(o, R)
    np.savez(os.path.join(workdir, "inputs.npz"), argv=np.array(argv, str),
             seed=int(R.integers(1 << 30)), tokens=tokens, targets=targets)
    worst = {}
    for mode in o.modes.split(","):
        # The port is drawn just before its launch, so that no connection
        # of an earlier launch holds it.
        code, out, _ = launch(__file__, ["rank", mode, workdir,
                                         str(free_port())], o.ranks, 600)
        assert code == 0, out
        diffs = np.stack([np.load(os.path.join(workdir, f"{mode}{r}.npy"))
                          for r in range(o.ranks)])
        worst[mode] = report(mode, diffs, o)
    initial = np.load(os.path.join(workdir, "initial0.npy"))
    apart = ", ".join(f"{n} ({d:.1e} of scale)"
                      for n, d in zip(NAMES, initial) if d > 0)
    assert not apart, f"lm_rank's PyTorch model does not start from " \
        f"init()'s weights: {apart}"

    lock = worst["lock"].max() if "lock" in worst else float("nan")
    assert not lock > o.lock_tol, f"a step differs by {lock:.2e} of scale"
    free = worst["free"][-1].max() if "free" in worst else float("nan")
    assert not free > o.free_tol, f"the free runs end {free:.2e} apart"
    print(f"Local AdaAlter (H = {o.period} after {o.warmup} synchronous "
          f"steps), {o.ranks} ranks: Grove and PyTorch agree step by step "
          f"within {lock:.1e} of scale, after {o.steps} free steps within "
          f"{free:.1e}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["rank"]:
        rank_main(*sys.argv[2:5])
    else:
        main()
