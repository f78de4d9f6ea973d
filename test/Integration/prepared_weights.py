# RUN: %python %s
# Convolution weights the host keeps prepared across calls (the runtime's
# PreparedParams; docs/abi.md, "Runtime services called by generated code
# (host)"): an entry that only reads its weights sends every f32
# convolution to oneDNN, which reorders those weights once (Winograd
# kernels for the 3x3 unstrided ones, a group at a time; blocked direct
# kernels for the rest) and keeps them while they are unchanged. Checked against PyTorch on fresh random
# inputs, on every call from the first (which does without the copy) to
# the third, at batch 1 and 3, and after each way the weights can change:
# an entry that writes them, set_weight, a write through a get_weight view
# (copies stop), and a load. Tolerance: rtol 1e-4, atol 2e-4 · sqrt(window
# size) (Winograd's transforms round differently from a direct sum).
import ctypes
import json
import os
import tempfile

# Winograd's scratchpad bound, small enough that batch 48 below runs in
# slices (read once, at the first convolution).
os.environ["GROVE_WINOGRAD_SCRATCH_MB"] = "4"

import numpy as np
import torch
import torch.nn.functional as F
from grove_testing import DLTensor, Model, assert_close, rng

# (name, weight shape, groups, strides, padding, Winograd): on 32 x 30 x 30
# images, larger than the 28x28 below which convolutions take the library
# anyway. Winograd runs 3x3 unstrided ones whose groups are few and hold
# whole blocks of 16 channels.
CONVS = [
    ("w3", (16, 32, 3, 3), 1, (1, 1), (1, 1, 1, 1), True),
    ("wg", (32, 16, 3, 3), 2, (1, 1), (1, 1, 1, 1), True),  # a group a run
    ("ws", (8, 32, 3, 3), 1, (2, 2), (1, 1, 1, 1), False),  # strided
    ("w5", (8, 8, 5, 5), 4, (1, 1), (2, 1, 2, 1), False),  # 5x5
    ("wd", (32, 1, 3, 3), 32, (1, 1), (1, 1, 1, 1), False),  # depthwise
]
IMAGE = (32, 30, 30)
ALL = [name for name, *_ in CONVS]


def arr(a):
    return "array<i64: " + ", ".join(map(str, a)) + ">"


def out_type(ws, st, pd):
    oh = (IMAGE[1] + pd[0] + pd[2] - ws[2]) // st[0] + 1
    ow = (IMAGE[2] + pd[1] + pd[3] - ws[3]) // st[1] + 1
    return f"tensor<?x{ws[0]}x{oh}x{ow}xf32>"


def wtype(ws):
    return "tensor<" + "x".join(map(str, ws)) + "xf32>"


it = "tensor<?x{}x{}x{}xf32>".format(*IMAGE)
params = "".join(f"\n  grove.param @{n} : {wtype(ws)}" for n, ws, *_ in CONVS)
body, results, types = [], [], []
for n, ws, g, st, pd, _ in CONVS:
    ot = out_type(ws, st, pd)
    body.append(f"""
    %{n} = grove.get_param @{n} : {wtype(ws)}
    %y{n} = grove.conv2d %x, %{n} {{groups = {g} : i64, strides = {arr(st)},
        padding = {arr(pd)}, dilations = {arr((1, 1))}}}
        : ({it}, {wtype(ws)}) -> {ot}""")
    results.append(f"%y{n}")
    types.append(ot)
w3 = wtype(CONVS[0][1])
source = f"""module {{{params}
  func.func @forward(%x: {it}) -> ({", ".join(types)}) {{{"".join(body)}
    return {", ".join(results)} : {", ".join(types)}
  }}
  grove.param @w1 : tensor<64x32x1x1xf32>
  func.func @pointwise(%x: tensor<?x32x7x7xf32>) -> tensor<?x64x7x7xf32> {{
    %w = grove.get_param @w1 : tensor<64x32x1x1xf32>
    %y = grove.conv2d %x, %w {{groups = 1 : i64, strides = array<i64: 1, 1>,
        padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}}
        : (tensor<?x32x7x7xf32>, tensor<64x32x1x1xf32>) -> tensor<?x64x7x7xf32>
    return %y : tensor<?x64x7x7xf32>
  }}
  func.func @shift(%d: {w3}) {{
    %w = grove.get_param @w3 : {w3}
    %s = grove.add %w, %d : ({w3}, {w3}) -> {w3}
    grove.set_param @w3 = %s : {w3}
    return
  }}
}}"""
m = Model(source, name="prepared_weights")
r = rng()
weights = {n: r.standard_normal(ws).astype(np.float32) for n, ws, *_ in CONVS}
w1 = r.standard_normal((64, 32, 1, 1)).astype(np.float32)
m.set_weight("w1", w1)
for n, value in weights.items():
    m.set_weight(n, value)


# oneDNN has Winograd kernels for AVX-512 only.
WINOGRAD = "avx512f" in open("/proc/cpuinfo").read()
if not WINOGRAD:
    print("note: no AVX-512: oneDNN has no Winograd kernels here; the "
          "Winograd flags are not checked")
# A runtime built without oneDNN runs the loops: no prepared weights, no
# flags in its spans (only the results are checked then).
ONEDNN = True


def conv_spans(trace):
    """The convolution service's spans of a trace, by weight name."""
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    spans = [e["args"] for e in events
             if e.get("ph") == "X" and e["name"] == "grove_rt_conv2d_f32"]
    global ONEDNN
    if spans and "prepared" not in spans[0]:
        if ONEDNN:
            print("note: the runtime has no oneDNN: its convolutions run "
                  "the loops; the prepared and Winograd flags are not "
                  "checked")
        ONEDNN = False
    by_name = {}
    for a in spans:
        for name, ws, g, *_ in CONVS:
            if (a["c"], a["h"], a["f"]) == (g, ws[1], ws[0] // g):
                by_name.setdefault(name, []).append(a)
    return by_name


def forward_traced(x, tmp):
    """forward(x) under a trace: its results and its convolution spans."""
    path = os.path.join(tmp, "trace.json")
    m._check(m.lib.grove_trace_start(path.encode()))
    try:
        got = m.call("forward", x, num_outputs=len(CONVS))
    finally:
        m._check(m.lib.grove_trace_stop())
    return got, conv_spans(path)


def check(what, changed, exposed=()):
    """Three calls at batch 1, then at batch 3, against PyTorch; the
    params in `changed` have a new version, those in `exposed` a view."""
    for n in (1, 3):
        x = r.standard_normal((n, *IMAGE)).astype(np.float32)
        for call in range(3):
            with tempfile.TemporaryDirectory() as tmp:
                got, spans = forward_traced(x, tmp)
            for name, ws, g, st, pd, wino in CONVS:
                (a,) = spans[name]
                where = f"{what}: {name}, batch {n}, call {call + 1}: {a}"
                if not ONEDNN:
                    continue
                if name in exposed:
                    assert a["prepared"] == 0, where
                elif call > 0:
                    assert a["prepared"] == 1, where
                elif n == 1 and name in changed:
                    # The first call at a version does without; it asks
                    # for the copy the second makes. (At batch 3, the
                    # layout may be another or the same.)
                    assert a["prepared"] == 0, where
                if WINOGRAD and a["prepared"]:
                    assert a["winograd"] == int(wino), where
            for (name, ws, g, st, pd, _), y in zip(CONVS, got):
                xp = F.pad(torch.from_numpy(x), (pd[1], pd[3], pd[0], pd[2]))
                ref = F.conv2d(xp, torch.from_numpy(weights[name]), stride=st,
                               groups=g).numpy()
                window = ws[1] * ws[2] * ws[3]
                assert_close(y, ref, 1e-4, 2e-4 * np.sqrt(window),
                             f"{what}: {name}, batch {n}, call {call + 1}")


check("fresh weights", changed=ALL)
# An entry that writes a weight: the next calls see the new value.
d = r.standard_normal(CONVS[0][1]).astype(np.float32)
m.call("shift", d, num_outputs=0)
weights["w3"] = weights["w3"] + d
check("after an entry wrote w3", changed=["w3"])
# set_weight.
weights["wg"] = r.standard_normal(CONVS[1][1]).astype(np.float32)
m.set_weight("wg", weights["wg"])
check("after set_weight", changed=["wg"])
# A write through a view the runtime cannot see.
view = DLTensor()
m._check(m.lib.grove_context_get_weight(m.ctx, b"ws", ctypes.byref(view)))
weights["ws"] = r.standard_normal(CONVS[2][1]).astype(np.float32)
ctypes.memmove(view.data, weights["ws"].ctypes.data, weights["ws"].nbytes)
check("after a write through a view", changed=[], exposed=["ws"])
weights["ws"] = r.standard_normal(CONVS[2][1]).astype(np.float32)
ctypes.memmove(view.data, weights["ws"].ctypes.data, weights["ws"].nbytes)
check("after a second write through the view", changed=[],
      exposed=["ws"])
# A load: new storage for every param.
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "w.safetensors")
    m.save_weights(path)
    saved = weights["w5"]
    weights["w5"] = r.standard_normal(CONVS[3][1]).astype(np.float32)
    m.set_weight("w5", weights["w5"])
    check("before the load", changed=["w5"], exposed=["ws"])
    m.load_weights(path)
    weights["w5"] = saved
check("after a load", changed=ALL)

# A batch whose Winograd scratchpad would pass the bound (4 MiB here, 16 by
# default) runs in slices of the batch.
x = r.standard_normal((48, *IMAGE)).astype(np.float32)
xp = F.pad(torch.from_numpy(x), (1, 1, 1, 1))
ref = F.conv2d(xp, torch.from_numpy(weights["w3"])).numpy()
for call in range(3):
    with tempfile.TemporaryDirectory() as tmp:
        got, spans = forward_traced(x, tmp)
    assert_close(got[0], ref, 1e-4, 2e-4 * np.sqrt(32 * 9),
                 f"w3, batch 48, call {call + 1}")
(a,) = spans["w3"]
assert not ONEDNN or a["prepared"] == 1, a
if ONEDNN and WINOGRAD:
    assert a["winograd"] == 1 and 1 <= a["images"] < 48, a
# A 1x1 convolution with read-only weights on a 7x7 image (a narrow GEMM)
# is the service's too: oneDNN's blocked 1x1 kernels.
for n in (1, 4):
    x = r.standard_normal((n, 32, 7, 7)).astype(np.float32)
    ref = F.conv2d(torch.from_numpy(x), torch.from_numpy(w1)).numpy()
    for call in range(3):
        path = None
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "trace.json")
            m._check(m.lib.grove_trace_start(path.encode()))
            try:
                (got,) = m.call("pointwise", x)
            finally:
                m._check(m.lib.grove_trace_stop())
            with open(path) as f:
                spans = [e["args"] for e in json.load(f)["traceEvents"]
                         if e.get("name") == "grove_rt_conv2d_f32"]
        assert_close(got, ref, 1e-4, 2e-4 * np.sqrt(32),
                     f"1x1, batch {n}, call {call + 1}")
        assert len(spans) == 1, spans
        if ONEDNN:
            assert spans[0]["winograd"] == 0, spans
        if ONEDNN and call > 0:
            assert spans[0]["prepared"] == 1, spans
print("prepared weights: ok")
