# RUN: %python %s
# RUN: env OMP_NUM_THREADS=2 %python %s
# grove.dropout compiled and run through the C ABI, against an independent
# numpy transcription of Philox4x32-10 (checked on the generator's published
# known-answer vector first):
#  * the mask is bit-exact: element i keeps where the top 24 bits of
#    Philox(counter (i, offset), key k) over 2^24 are at least the rate, k
#    the first two words of Philox(counter (stream, 0), key seed), and kept
#    elements are x / (1 - rate) exactly; the
#    same with two threads (the second RUN line), on a tensor large enough
#    to be split over them;
#  * each call advances @dropout.offset by one, so masks differ from call to
#    call; streams differ; rate 0 is the identity; the kept fraction over 2^18
#    elements is 1 - rate within 5 standard deviations;
#  * the gradient is the same mask applied to the cotangent: f32 against
#    PyTorch autograd in float64 with the mask as a constant (rtol 1e-6), f64
#    against central finite differences (step 1e-6, rtol 1e-7) with the
#    generator's offset reset before each call;
#  * the generator is state: a run saved and resumed from the checkpoint
#    draws the same masks, bit for bit, as one that never stopped.
# The checks run in main(): test/Integration/bert.py imports reference()
# (the masks of a grove.dropout) from here.
import os
import tempfile

import numpy as np
import torch
from grove_testing import Model, assert_close, rng

M32 = np.uint64(0xFFFFFFFF)


def philox(c, k):
    """Philox4x32-10's four output words; c: 4 uint64 arrays of 32-bit
    words, k: 2 such arrays."""
    c = [np.asarray(x, np.uint64) & M32 for x in c]
    k = [np.asarray(x, np.uint64) & M32 for x in k]
    for rnd in range(10):
        if rnd:
            k = [(k[0] + np.uint64(0x9E3779B9)) & M32,
                 (k[1] + np.uint64(0xBB67AE85)) & M32]
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k[0]) & M32, p1 & M32,
             ((p0 >> np.uint64(32)) ^ c[3] ^ k[1]) & M32, p0 & M32]
    return c


# Random123's known-answer vector for philox4x32-10 with a zero counter and
# key: the first word is 0x6627e8d5.
assert int(philox([0, 0, 0, 0], [0, 0])[0]) == 0x6627E8D5


def reference(x, seed, offset, stream, rate):
    i = np.arange(x.size, dtype=np.uint64)
    s, st = np.uint64(seed), np.uint64(stream)
    # The stream's key: Philox of (stream, 0) under the seed.
    key = philox([st & M32, st >> np.uint64(32), 0, 0],
                 [s & M32, s >> np.uint64(32)])
    word = philox(
        [i & M32, i >> np.uint64(32), np.uint64(offset) & M32,
         np.uint64(offset) >> np.uint64(32)], key[:2])[0]
    keep = (word >> np.uint64(8)) >= np.uint64(int(np.ceil(rate * 2**24)))
    keep = keep.reshape(x.shape)
    scale = x.dtype.type(1.0 / (1.0 - rate))
    return np.where(keep, x * scale, x.dtype.type(0)), keep


RATE, STREAM, SEED = 0.25, 7, 0x1234_5678_9ABC


def source(e):
    t = f"tensor<?x256x{e}>"
    return f"""
module @drop_{e} {{
  grove.param @w : tensor<256x{e}>
  func.func @draw(%x: {t} {{grove.name = "x"}}) -> ({t} {{grove.name = "y"}}) {{
    %y = grove.dropout %x {{rate = {RATE} : f64, stream = {STREAM}}} : {t}
    return %y : {t}
  }}
  func.func @draw_other(%x: {t} {{grove.name = "x"}})
      -> ({t} {{grove.name = "y"}}, {t} {{grove.name = "z"}}) {{
    %y = grove.dropout %x {{rate = {RATE} : f64, stream = 8}} : {t}
    %z = grove.dropout %x {{rate = 0.0 : f64, stream = 9}} : {t}
    return %y, %z : {t}, {t}
  }}
  func.func @grad(%x: {t} {{grove.name = "x"}}, %r: {t} {{grove.name = "r"}})
      -> (tensor<{e}> {{grove.name = "loss"}}, tensor<256x{e}> {{grove.name = "dw"}}) {{
    %l, %g = grove.value_and_grad [@w] {{
      %w = grove.get_param @w : tensor<256x{e}>
      %xw = grove.mul %x, %w : ({t}, tensor<256x{e}>) -> {t}
      %d = grove.dropout %xw {{rate = {RATE} : f64, stream = {STREAM}}} : {t}
      %dr = grove.mul %d, %r : ({t}, {t}) -> {t}
      %s = grove.reduce_sum %dr {{axes = array<i64: 0, 1>}} : {t} -> tensor<{e}>
      grove.yield %s : tensor<{e}>
    }} : tensor<{e}>, tensor<256x{e}>
    return %l, %g : tensor<{e}>, tensor<256x{e}>
  }}
}}
"""


def main():
    r = rng()
    models = {e: Model(source(e), name=f"drop_{e}") for e in ("f32", "f64")}
    m = models["f32"]
    m.set_weight("w", r.standard_normal(256).astype(np.float32))
    m.set_weight("dropout.seed", np.array(SEED, np.int64))

    # Bit-exact masks, a new one per call (1024 x 256: split over the team).
    x = r.standard_normal((1024, 256)).astype(np.float32)
    masks = []
    for call in range(3):
        assert m.get_weight("dropout.offset") == call
        (y,) = m.call("draw", x)
        want, keep = reference(x, SEED, call, STREAM, RATE)
        assert np.array_equal(y, want), f"call {call}: mask or scale differs"
        masks.append(keep)
    assert not np.array_equal(masks[0], masks[1]), "the offset did not advance"
    kept = np.mean(masks[0])
    sigma = np.sqrt(RATE * (1 - RATE) / masks[0].size)
    assert abs(kept - (1 - RATE)) < 5 * sigma, kept

    # Another stream draws another mask; rate 0 is the identity.
    offset = int(m.get_weight("dropout.offset"))
    y, z = m.call("draw_other", x, num_outputs=2)
    want, keep8 = reference(x, SEED, offset, 8, RATE)
    assert np.array_equal(y, want) and not np.array_equal(keep8, masks[0])
    assert np.array_equal(z, x)

    # Gradients: the same mask on the cotangent.
    for e, dtype in (("f32", np.float32), ("f64", np.float64)):
        g = models[e]
        w = r.standard_normal(256).astype(dtype)
        g.set_weight("w", w)
        g.set_weight("dropout.seed", np.array(SEED + 1, np.int64))
        x = r.standard_normal((3, 256)).astype(dtype)
        rr = r.standard_normal((3, 256)).astype(dtype)
        offset = int(g.get_weight("dropout.offset"))
        loss, dw = g.call("grad", x, rr, num_outputs=2)
        _, keep = reference(x * w, SEED + 1, offset, STREAM, RATE)
        if e == "f32":
            tw = torch.tensor(w, dtype=torch.float64, requires_grad=True)
            mask = torch.tensor(keep, dtype=torch.float64) / (1 - RATE)
            ref = ((torch.tensor(x, dtype=torch.float64) * tw) * mask
                   * torch.tensor(rr, dtype=torch.float64)).sum()
            (want,) = torch.autograd.grad(ref, [tw])
            # The loss sums 768 f32 products: bound its rounding by the
            # magnitude of what it sums, not by the (cancelling) result.
            terms = (x.astype(np.float64) * w * keep / (1 - RATE) * rr)
            atol = 8 * np.finfo(np.float32).eps * np.abs(terms).sum()
            assert_close(loss, ref.item(), 1e-6, atol, "dropout loss")
            assert_close(dw, want.numpy(), 1e-6, 1e-6, "dropout dw vs PyTorch")
        else:
            h, fd = 1e-6, np.zeros_like(w)
            for j in range(w.size):
                for sign in (1, -1):
                    wp = w.copy()
                    wp[j] += sign * h
                    g.set_weight("w", wp)
                    g.set_weight("dropout.offset", np.array(offset, np.int64))
                    fd[j] += sign * g.call("grad", x, rr,
                                           num_outputs=2)[0] / (2 * h)
            assert_close(dw, fd, 1e-7, 1e-7, "dropout dw vs finite differences")

    # Resume: a checkpoint holds the generator.
    with tempfile.TemporaryDirectory() as tmp:
        x = r.standard_normal((2, 256)).astype(np.float32)
        a = models["f32"]
        a.set_weight("dropout.offset", np.array(0, np.int64))
        a.call("draw", x)
        path = os.path.join(tmp, "ckpt.safetensors")
        a.save_weights(path)
        straight = [a.call("draw", x)[0] for _ in range(2)]
        b = a.another_context()
        b.load_weights(path)
        resumed = [b.call("draw", x)[0] for _ in range(2)]
        for s, t in zip(straight, resumed):
            assert np.array_equal(s, t), "a resumed run drew other masks"
    print(f"dropout: Philox masks bit-exact "
          f"({os.environ.get('OMP_NUM_THREADS')} threads), gradients, resume")


if __name__ == "__main__":
    main()
