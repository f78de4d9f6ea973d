# RUN: %python %s
# Labels at the ABI: the runtime checks every label of a train step against
# the class count before any generated code runs (docs/abi.md, "Checks on
# every call"). A label of C or below 0 fails the call with
# GROVE_ERROR_INVALID_ARGUMENT and a message naming the argument, the
# element and its value, and the step writes nothing: every weight, Adam
# moment and the step counter are bit-identical afterwards, and the next
# good step equals that of a context that never saw the bad call. Labels of
# the wrong dtype (i64 for i32) are refused too; an entry argument marked
# {grove.below = N} by hand is checked the same way.
import numpy as np
from grove_testing import GroveError, Model, rng

from optimizers import SHAPES, source

GROVE_ERROR_INVALID_ARGUMENT = 1
CLASSES = 4

text = source("labels_adam", "grove.adam", "{lr = 0.01 : f64}", "f32")
# A second entry: a table lookup with an index the user bounds.
text = text.rstrip().rstrip("}") + """
  func.func @row(%i: tensor<?xi32> {grove.name = "index", grove.below = 16 : i64})
      -> (tensor<?x8xf32> {grove.name = "rows"}) {
    %w = grove.get_param @fc1.weight : tensor<16x8xf32>
    %o = grove.one_hot %i : tensor<?xi32> -> tensor<?x16xf32>
    %r = grove.matmul %o, %w : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
    return %r : tensor<?x8xf32>
  }
}
"""
a = Model(text, name="labels_adam")
b = a.another_context()

r = rng()
init = {p: r.standard_normal(s).astype(np.float32) for p, s in SHAPES.items()}
for m in (a, b):
    for p, v in init.items():
        m.set_weight(p, v)
x = r.standard_normal((6, 8)).astype(np.float32)
good = r.integers(0, CLASSES, 6).astype(np.int32)
STATE = [*SHAPES, *(f"{p}.adam.{s}" for p in SHAPES for s in "mv"),
         "adam.step"]


def state(m):
    return {n: m.get_weight(n).copy() for n in STATE}


def expect_refused(m, entry, args, *needles):
    try:
        m.call(entry, *args)
    except GroveError as e:
        assert e.status == GROVE_ERROR_INVALID_ARGUMENT, e
        for needle in needles:
            assert needle in e.message, (needle, e.message)
        return e.message
    raise AssertionError(f"{entry} accepted {args[-1]}")


a.call("train_step", x, good)
b.call("train_step", x, good)
before = state(a)
checked = 0
for value, where in ((CLASSES, 3), (-1, 0), (2**31 - 1, 5)):
    bad = good.copy()
    bad[where] = value
    msg = expect_refused(a, "train_step", (x, bad), "'labels'",
                         f"element {where} is {value}, outside [0, {CLASSES})")
    after = state(a)
    for n in STATE:
        assert np.array_equal(before[n], after[n]), f"{n} changed: {msg}"
    checked += 1
expect_refused(a, "train_step", (x, good.astype(np.int64)), "'labels'",
               "dtype")
# The bad calls left no trace: the next step equals the clean context's.
(la,) = a.call("train_step", x, good)
(lb,) = b.call("train_step", x, good)
assert la == lb, (la, lb)
for n in STATE:
    assert np.array_equal(a.get_weight(n), b.get_weight(n)), n
# The hand-written bound.
(rows,) = a.call("row", np.array([0, 15, 3], np.int32))
assert np.array_equal(rows, a.get_weight("fc1.weight")[[0, 15, 3]])
expect_refused(a, "row", (np.array([0, 16], np.int32),), "'index'",
               "element 1 is 16, outside [0, 16)")
print(f"labels: {checked} out-of-range batches refused with the state "
      "unchanged; dtype and a hand-written bound checked")
