"""The grove package: compile in process, typed entries, numerics against
numpy (float64 reference, fresh random inputs), no copies (data pointers),
exceptions, threads, state and checkpoints."""
import os
import re
import threading
import time

import numpy as np
import pytest

import grove
from conftest import MLP, MLP_WEIGHTS, mlp_forward


def test_import_and_versions():
    assert grove.__version__.count(".") == 2
    assert isinstance(grove.ABI_VERSION, int) and grove.ABI_VERSION > 0


def test_forward_matches_numpy(mlp_library, mlp_weights, rng):
    m = grove.load(mlp_library)
    assert set(m.entries) == {"forward", "train_step"}
    assert not m.ready
    m.load_state_dict(mlp_weights)
    assert m.ready
    x = rng.standard_normal((7, 16)).astype(np.float32)
    out = m.forward(x)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_allclose(out, mlp_forward(mlp_weights, x),
                               rtol=1e-5, atol=1e-5)


def test_signatures_from_descriptor(mlp_library):
    m = grove.load(mlp_library)
    fwd = m.entries["forward"]
    assert fwd.inputs == (grove.TensorSpec("x", "float32", (None, 16)),)
    assert fwd.outputs == (grove.TensorSpec("logits", "float32", (None, 4)),)
    assert fwd.writes == () and set(fwd.reads) == set(MLP_WEIGHTS)
    step = m.entries["train_step"]
    assert [t.dtype for t in step.inputs] == ["float32", "int32"]
    assert set(step.writes) >= set(MLP_WEIGHTS)
    assert m.state == ["sgd.step"] + [n + ".sgd.momentum"
                                      for n in MLP_WEIGHTS]
    assert m.weights == list(MLP_WEIGHTS)
    assert "train_step(x: float32[None, 16], y: int32[None])" in step.__doc__


def test_no_copies_in_or_out(mlp_library, mlp_weights, rng):
    """A compact input reaches the runtime at its own address, and an output
    array is the runtime's buffer (numpy, torch and DLPack views of it)."""
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((5, 16)).astype(np.float32)
    for framework in ("numpy", "torch", "dlpack"):
        m = grove.load(mlp_library, framework=framework)
        m.load_state_dict(mlp_weights)
        out = m.forward(x)
        ins, outs = m._ctx.last_call_pointers()
        assert ins == [x.ctypes.data]
        if framework == "numpy":
            ptr = out.ctypes.data
        elif framework == "torch":
            assert isinstance(out, torch.Tensor)
            ptr = out.data_ptr()
        else:
            ptr = np.from_dlpack(out).ctypes.data
        assert outs == [ptr]
    xt = torch.from_numpy(x.copy())
    out = m.forward(xt)
    ins, _ = m._ctx.last_call_pointers()
    assert ins == [xt.data_ptr()]


def test_strided_input_is_copied_and_correct(mlp_library, mlp_weights, rng):
    m = grove.load(mlp_library)
    m.load_state_dict(mlp_weights)
    big = rng.standard_normal((6, 32)).astype(np.float32)
    x = big[:, ::2]
    assert not x.flags.c_contiguous
    np.testing.assert_allclose(m.forward(x), mlp_forward(mlp_weights, x),
                               rtol=1e-5, atol=1e-5)


def test_jax_inputs_and_outputs(mlp_library, mlp_weights, rng):
    jnp = pytest.importorskip("jax.numpy")
    m = grove.load(mlp_library, framework="jax")
    m.load_state_dict(mlp_weights)
    x = rng.standard_normal((3, 16)).astype(np.float32)
    out = m.forward(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(out), mlp_forward(mlp_weights, x),
                               rtol=1e-5, atol=1e-5)


def test_compile_error_has_location(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("module @m {\n  func.func @f(%x: tensor<4xf32>) {\n"
                   "    %y = grove.relu %x : tensor<5xf32>\n"
                   "    return\n  }\n}\n")
    with pytest.raises(grove.CompileError) as info:
        grove.compile(bad)
    assert f"{bad}:3:" in info.value.diagnostics
    assert "error:" in info.value.diagnostics
    with pytest.raises(grove.CompileError) as info:
        grove.compile("module {\n  func.func @f( {\n}\n")
    assert "<string>:2:" in info.value.diagnostics
    # Nesting the recursive parser could not take: a diagnostic, not a
    # stack overflow in this process.
    with pytest.raises(grove.CompileError, match="nesting deeper"):
        grove.compile("module {\n" + "(" * 20000 + ")" * 20000 + "\n}\n")


def test_bad_options_are_errors():
    with pytest.raises(grove.CompileError, match="no-such-option"):
        grove.compile(MLP, no_such_option=1)
    with pytest.raises(grove.CompileError, match="autocast"):
        grove.compile(MLP, autocast="fp8")
    with pytest.raises(ValueError, match="host"):
        grove.compile(MLP, target="cuda")
    with pytest.raises(grove.CompileError, match="C identifier"):
        grove.compile(MLP, name="not-an-identifier")


def test_runtime_errors_raise_and_change_nothing(mlp_library, mlp_weights,
                                                 rng):
    m = grove.load(mlp_library)
    x = rng.standard_normal((2, 16)).astype(np.float32)
    with pytest.raises(grove.GroveError) as info:
        m.forward(x)  # weights not loaded
    assert info.value.status == 3  # GROVE_ERROR_BAD_WEIGHTS
    m.load_state_dict(mlp_weights)
    with pytest.raises(grove.GroveError) as info:
        m.forward(rng.standard_normal((2, 15)).astype(np.float32))
    assert info.value.status == 1  # GROVE_ERROR_INVALID_ARGUMENT
    assert "forward" in str(info.value)
    with pytest.raises(grove.GroveError, match="takes 1 inputs, got 2"):
        m.forward(x, x)
    with pytest.raises(TypeError, match="not a CPU array"):
        m.forward("x")
    labels = np.array([0, 9], np.int32)  # 9 is not one of the 4 classes
    before = m.state_dict()
    with pytest.raises(grove.GroveError):
        m.train_step(x, labels)
    for name, value in m.state_dict().items():
        np.testing.assert_array_equal(value, before[name])
    with pytest.raises(grove.GroveError):
        m["fc1.weight"] = np.zeros((3, 3), np.float32)
    with pytest.raises(grove.GroveError):
        grove.load(mlp_library, name="nosuchmodel")


def test_training_in_python_matches_torch(mlp_library, mlp_weights, rng):
    torch = pytest.importorskip("torch")
    m = grove.load(mlp_library)
    m.load_state_dict(mlp_weights)
    ref = {n: torch.tensor(w.astype(np.float64), requires_grad=True)
           for n, w in mlp_weights.items()}
    opt = torch.optim.SGD(ref.values(), lr=0.1, momentum=0.9)
    for _ in range(4):
        x = rng.standard_normal((8, 16)).astype(np.float32)
        y = rng.integers(0, 4, 8).astype(np.int32)
        loss = float(m.train_step(x, y))
        xt = torch.tensor(x, dtype=torch.float64)
        h = torch.relu(xt @ ref["fc1.weight"].T + ref["fc1.bias"])
        z = h @ ref["fc2.weight"].T + ref["fc2.bias"]
        lt = torch.nn.functional.cross_entropy(z, torch.tensor(y).long())
        opt.zero_grad()
        lt.backward()
        opt.step()
        assert abs(loss - float(lt)) < 1e-5 * max(1.0, abs(float(lt)))
    for n in MLP_WEIGHTS:
        np.testing.assert_allclose(m[n], ref[n].detach().numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_checkpoint_round_trip_with_c(mlp_library, mlp_weights, rng,
                                      tmp_path):
    """Written in Python, read by the C API (test/lib's ctypes loader);
    written by C, read in Python; both with the state (momenta)."""
    from grove_testing import Model as CModel
    m = grove.load(mlp_library)
    m.load_state_dict(mlp_weights)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    y = rng.integers(0, 4, 8).astype(np.int32)
    m.train_step(x, y)
    path = tmp_path / "py.safetensors"
    m.save(path)
    (tmp_path / "c").mkdir()
    c = CModel(MLP, name="mlp", workdir=str(tmp_path / "c"))
    c.load_weights(str(path))
    for p in m.params:
        np.testing.assert_array_equal(c.get_weight(p.name), m[p.name])
    c.call("train_step", x, y)
    cpath = tmp_path / "c.safetensors"
    c.save_weights(str(cpath))
    m2 = grove.load(mlp_library)
    m2.load(cpath)
    for p in m.params:
        np.testing.assert_array_equal(m2[p.name], c.get_weight(p.name))
    # The same step in Python (a library for this CPU, grovec's for the
    # baseline: the sums may round differently).
    m.train_step(x, y)
    for p in m.params:
        np.testing.assert_allclose(m2[p.name], m[p.name], rtol=1e-6,
                                   atol=1e-7)
    with pytest.raises(grove.GroveError):
        m2.load(tmp_path / "missing.safetensors")


def test_gil_released_during_calls(tmp_path, rng):
    """Another Python thread runs while a call computes, and calls from
    several threads give each its own correct result."""
    # Large enough that a call outlasts the 5 ms threshold below on a fast
    # many-core machine too (two 1024³ matmuls: 4.3 GFLOP a call).
    n = 1024
    src = f"""
module @big {{
  func.func @f(%a: tensor<{n}x{n}xf32>, %b: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
    %c = grove.matmul %a, %b : (tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
    %d = grove.tanh %c : tensor<{n}x{n}xf32>
    %e = grove.matmul %d, %b : (tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
    return %e : tensor<{n}x{n}xf32>
  }}
}}"""
    m = grove.load(grove.compile(src, output_dir=str(tmp_path)))
    a = rng.standard_normal((n, n)).astype(np.float32) / np.sqrt(n)
    b = rng.standard_normal((n, n)).astype(np.float32) / np.sqrt(n)
    ticks, stop = [0], threading.Event()

    def ticker():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.0005)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        during = []
        for _ in range(5):
            before = ticks[0]
            t0 = time.perf_counter()
            m.f(a, b)
            if time.perf_counter() - t0 > 0.005:
                during.append(ticks[0] - before)
    finally:
        stop.set()
        t.join()
    assert during and max(during) > 0, during
    inputs = [(rng.standard_normal((n, n)).astype(np.float32) / np.sqrt(n), b)
              for _ in range(4)]
    results = [None] * len(inputs)

    def work(i):
        results[i] = m.f(*inputs[i])

    threads = [threading.Thread(target=work, args=(i,))
               for i in range(len(inputs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for (x, y), r in zip(inputs, results):
        ref = np.tanh(x.astype(np.float64) @ y) @ y
        np.testing.assert_allclose(r, ref, rtol=1e-4, atol=1e-4)


def test_pipeline_options_reach_the_compiler(tmp_path, mlp_weights, rng):
    """autocast=bf16 compiles the matmuls in bf16: the forward then differs
    from f32 by bf16's rounding, not f32's."""
    lib = grove.compile(MLP, output_dir=str(tmp_path), name="mlp16",
                        autocast="bf16")
    with open(lib, "rb") as f:
        assert b"grove_rt_matmul_bf16" in f.read()
    m = grove.load(lib)
    m.load_state_dict(mlp_weights)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    err = np.abs(m.forward(x) - mlp_forward(mlp_weights, x)).max()
    assert 1e-5 < err < 0.1, err
    assert os.path.exists(os.path.join(tmp_path, "mlp16.h"))


def test_bfloat16_numpy_in_and_out(tmp_path, rng):
    """numpy bf16 arrays (ml_dtypes) in and out, without copies, and as
    params; the sum against float64 within bf16's rounding."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = ml_dtypes.bfloat16
    lib = grove.compile("""module @b {
  grove.param @w : tensor<5xbf16>
  func.func @f(%a: tensor<5xbf16>) -> tensor<5xbf16> {
    %w = grove.get_param @w : tensor<5xbf16>
    %s = grove.add %a, %w : (tensor<5xbf16>, tensor<5xbf16>) -> tensor<5xbf16>
    return %s : tensor<5xbf16>
  }
}""", output_dir=str(tmp_path))
    m = grove.load(lib)
    w = rng.standard_normal(5).astype(bf16)
    m["w"] = w
    assert m["w"].dtype == bf16
    np.testing.assert_array_equal(m["w"].astype(np.float32),
                                  w.astype(np.float32))
    a = rng.standard_normal(5).astype(bf16)
    out = m.f(a)
    assert isinstance(out, np.ndarray) and out.dtype == bf16
    ins, outs = m._ctx.last_call_pointers()
    assert ins == [a.ctypes.data] and outs == [out.ctypes.data]
    ref = a.astype(np.float64) + w.astype(np.float64)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2**-8,
                               atol=1e-6)


def test_trace_spans(mlp_library, mlp_weights, rng, tmp_path):
    """grove.trace: a span per entry call (named by the entry) holding the
    spans of the GEMMs it made, with their sizes; JSON Chrome opens."""
    import json
    m = grove.load(mlp_library)
    m.load_state_dict(mlp_weights)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    y = rng.integers(0, 4, 8).astype(np.int32)
    path = tmp_path / "trace.json"
    with grove.trace(path):
        m.forward(x)
        m.train_step(x, y)
        with pytest.raises(grove.GroveError, match="already"):
            grove.trace(tmp_path / "other.json").__enter__()
    m.forward(x)  # after the trace: not recorded
    events = json.loads(path.read_text())["traceEvents"]
    entries = [e for e in events if e["cat"] == "entry"]
    assert [e["name"] for e in entries] == ["forward", "train_step"]
    assert all(e["ph"] == "X" and e["args"]["model"] == "mlp"
               for e in entries)
    gemms = [e for e in events if e["name"] == "grove_rt_matmul_f32"]
    fwd, step = entries
    inside = lambda e, s: (s["ts"] <= e["ts"] and  # noqa: E731
                           e["ts"] + e["dur"] <= s["ts"] + s["dur"] + 1e-3)
    assert sum(inside(g, fwd) for g in gemms) == 2
    assert sum(inside(g, step) for g in gemms) >= 4
    assert {(g["args"]["m"], g["args"]["n"], g["args"]["k"])
            for g in gemms if inside(g, fwd)} == {(8, 32, 16), (8, 4, 32)}
    # Generated loops, named by the grove op they come from ("<string>":
    # the source was text): the forward's bias + relu (MLP's line 15, the
    # relu) and its output bias (line 17).
    loops = [e for e in events if e["cat"] == "loop"]
    assert loops and all(re.fullmatch(r"<string>:\d+:\d+", e["name"])
                         for e in loops), loops
    assert all(inside(e, fwd) or inside(e, step) for e in loops)
    assert {e["name"] for e in loops if inside(e, fwd)} == {
        "<string>:15:10", "<string>:17:10"}, [e["name"] for e in loops]
    with pytest.raises(grove.GroveError):
        with grove.trace(tmp_path / "no" / "such" / "dir.json"):
            pass


def test_torch_tensors_in_and_out(mlp_library, mlp_weights, rng):
    """torch tensors in (a Parameter that requires grad included: read
    through detach) and out, without copies, numerics against numpy."""
    torch = pytest.importorskip("torch")
    m = grove.load(mlp_library, framework="torch")
    m.load_state_dict({k: torch.from_numpy(v) for k, v in
                       mlp_weights.items()})
    x = torch.from_numpy(rng.standard_normal((6, 16)).astype(np.float32))
    out = m.forward(x)
    ins, outs = m._ctx.last_call_pointers()
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    assert ins == [x.data_ptr()] and outs == [out.data_ptr()]
    np.testing.assert_allclose(out.numpy(), mlp_forward(mlp_weights,
                                                        x.numpy()),
                               rtol=1e-5, atol=1e-5)
    p = torch.nn.Parameter(x.clone())
    np.testing.assert_array_equal(m.forward(p).numpy(), out.numpy())
    assert m._ctx.last_call_pointers()[0] == [p.data_ptr()]
    bf = m.forward  # bf16 torch tensors go by DLPack (numpy has no bf16)
    with pytest.raises(grove.GroveError):  # the model takes f32
        bf(x.to(torch.bfloat16))


def test_recompiled_library_loads_anew(tmp_path):
    """A library rebuilt at the same path loads as the new one (dlopen
    alone would hand back the one already loaded from that path)."""
    src = """module @same {{
  grove.param @w : tensor<2xf32>
  func.func @forward(%x: tensor<2xf32> {{grove.name = "x"}})
      -> (tensor<2xf32> {{grove.name = "y"}}) {{
    %w = grove.get_param @w : tensor<2xf32>
    %y = grove.{op} %x, %w : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  }}
}}"""
    x, w = np.array([3, 4], np.float32), np.array([2, 5], np.float32)
    results = []
    for op in ("add", "mul"):
        model = grove.load(grove.compile(src.format(op=op),
                                         output_dir=str(tmp_path)))
        model["w"] = w
        results.append(model.forward(x))
    np.testing.assert_array_equal(results[0], x + w)
    np.testing.assert_array_equal(results[1], x * w)
