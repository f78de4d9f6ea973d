# RUN: %python %s
# Checkpoints of a compiled train step: one safetensors file holds the
# weights, the optimizer's moments and its step counter; a run resumed from
# it in a fresh context takes bit-identical steps to the uninterrupted run.
# A checkpoint of another optimizer or of other shapes is refused with a
# message, and the context keeps its state.
import os
import tempfile

import numpy as np
from grove_testing import GroveError, Model, rng

from optimizers import SHAPES, source

r = rng()
work = tempfile.mkdtemp(prefix="grove-checkpoint-")
adam = source("ck_adam", "grove.adam", "{lr = 0.01 : f64}", "f32")
sgd = source("ck_sgd", "grove.sgd", "{lr = 0.1 : f64, momentum = 0.9 : f64}",
             "f32")
a = Model(adam, name="ck_adam")
b = a.another_context()
other = Model(sgd, name="ck_sgd")

init = {p: (r.standard_normal(s) * 0.5).astype(np.float32)
        for p, s in SHAPES.items()}
batches = [(r.standard_normal((6, 8)).astype(np.float32),
            r.integers(0, 4, 6).astype(np.int32)) for _ in range(6)]
for m in (a, b, other):
    for p, v in init.items():
        m.set_weight(p, v)

# Uninterrupted: six steps in `a`.
straight = [a.call("train_step", x, y)[0] for x, y in batches]

# Three steps in `b`, a checkpoint, three more in a fresh context.
for x, y in batches[:3]:
    b.call("train_step", x, y)
path = os.path.join(work, "step3.safetensors")
b.save_weights(path)
c = b
c.reopen()  # a fresh context: state at its initialisers, weights unset
c.load_weights(path)
resumed = [c.call("train_step", x, y)[0] for x, y in batches[3:]]
assert np.array_equal(np.array(straight[3:]), np.array(resumed)), \
    f"resumed losses differ: {straight[3:]} vs {resumed}"
names = list(SHAPES) + [f"{p}.adam.{s}" for p in SHAPES for s in "mv"] + [
    "adam.step"]
for n in names:
    assert np.array_equal(a.get_weight(n), c.get_weight(n)), n
assert c.get_weight("adam.step") == 6
print(f"checkpoint: resumed 3 + 3 steps bit-identical to 6 ({len(names)} "
      "tensors: weights, moments, step)")

# Another optimizer's checkpoint: its state names are not the model's.
other.call("train_step", *batches[0])
wrong = os.path.join(work, "sgd.safetensors")
other.save_weights(wrong)
before = {n: c.get_weight(n) for n in names}
try:
    c.load_weights(wrong)
    raise AssertionError("an SGD checkpoint loaded into an Adam model")
except GroveError as e:
    print(f"refused: {e}")
    assert "sgd.momentum" in str(e), str(e)
for n in names:
    assert np.array_equal(before[n], c.get_weight(n)), f"{n} changed"
print("checkpoint: another optimizer's checkpoint refused, state unchanged")
