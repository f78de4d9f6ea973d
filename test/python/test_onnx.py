"""grove.onnx (docs/onnx.md): ONNX's backend node tests for every mapped op,
imported, compiled, run through the C ABI and compared with the expected
outputs; the real models in the onnx wheel's test data against their
stored outputs (or onnxruntime's); torch.onnx.export'ed models against
torch; bad files and unsupported ops as clear errors; the command line."""
import glob
import io
import os
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import grove

onnx = pytest.importorskip("onnx")
go = pytest.importorskip("grove.onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
# f32 and f64 results against the expected ones; f16 and bf16 results
# carry their own rounding (a unit in the last place is 1e-3 / 8e-3).
RTOL = ATOL = 1e-4
RTOL_HALF = ATOL_HALF = 1e-2

# Node tests of mapped ops that grove cannot express, by reason: the
# importer must refuse each with an UnsupportedError (and no test here may
# pass: a stale entry fails the test).
SKIP = {
    "run-time exponent (Pow maps only constant integer and half exponents)": [
        "test_pow", "test_pow_bcast_array", "test_pow_bcast_scalar",
        "test_pow_example", "test_pow_types_float32_int32",
        "test_pow_types_float32_int64"],
    "training mode (the import is for inference)": [
        "test_batchnorm_epsilon_training_mode",
        "test_batchnorm_example_training_mode", "test_training_dropout",
        "test_training_dropout_default", "test_training_dropout_default_mask",
        "test_training_dropout_mask", "test_training_dropout_zero_ratio",
        "test_training_dropout_zero_ratio_mask"],
    "MaxPool's Indices output (grove.max_pool2d gives values only)": [
        "test_maxpool_with_argmax_2d_precomputed_pads",
        "test_maxpool_with_argmax_2d_precomputed_strides"],
    "3-D convolution (grove.conv2d is 2-D)": ["test_convtranspose_3d"],
    "3-D LpPool (mapped to a 2-D depthwise grove.conv2d)": [
        "test_lppool_3d_default"],
    "a dilated 5x5x5 window (pools grove's ops cannot take are built from "
    "one slice per window element, at most 64)": [
        "test_averagepool_3d_dilations_large_count_include_pad_is_0_"
        "ceil_mode_is_False",
        "test_averagepool_3d_dilations_large_count_include_pad_is_0_"
        "ceil_mode_is_True",
        "test_averagepool_3d_dilations_large_count_include_pad_is_1_"
        "ceil_mode_is_False",
        "test_averagepool_3d_dilations_large_count_include_pad_is_1_"
        "ceil_mode_is_True",
        "test_maxpool_3d_dilations_use_ref_impl_large"],
    "Attention's softcap (grove.attention does not cap scores)": [
        "test_attention_3d_diff_heads_sizes_softcap",
        "test_attention_3d_gqa_softcap", "test_attention_3d_softcap",
        "test_attention_3d_with_past_and_present_qk_matmul_softcap",
        "test_attention_4d_diff_heads_sizes_softcap",
        "test_attention_4d_gqa_softcap", "test_attention_4d_softcap",
        "test_attention_4d_softcap_neginf_mask",
        "test_attention_4d_softcap_neginf_mask_poison",
        "test_attention_4d_with_qk_matmul_softcap",
        "test_attention_local_window_gqa_rank4_mask"],
    "Attention's qk_matmul_output (grove.attention never forms all the "
    "scores)": [
        "test_attention_23_fullymasked_qk_matmul_output_mode3_zero",
        "test_attention_24_fullymasked_qk_matmul_output_mode3_zero",
        "test_attention_24_qk_matmul_output_mode3_softmax_precision",
        "test_attention_3d_with_past_and_present_qk_matmul",
        "test_attention_3d_with_past_and_present_qk_matmul_bias",
        "test_attention_3d_with_past_and_present_qk_matmul_softmax",
        "test_attention_4d_with_past_and_present_qk_matmul",
        "test_attention_4d_with_past_and_present_qk_matmul_bias",
        "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask",
        "test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_"
        "causal",
        "test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask",
        "test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_"
        "causal",
        "test_attention_4d_with_qk_matmul",
        "test_attention_4d_with_qk_matmul_bias",
        "test_attention_4d_with_qk_matmul_softmax"],
    "Attention's nonpad_kv_seqlen (per-batch key lengths)": [
        "test_attention_4d_causal_nonpad_attn_mask_composition",
        "test_attention_4d_causal_nonpad_batch_prefill",
        "test_attention_4d_causal_nonpad_continued_prefill",
        "test_attention_4d_causal_nonpad_negative_offset_structural_empty",
        "test_attention_4d_causal_padded_kv_bf16",
        "test_attention_4d_diff_heads_mask4d_padded_kv",
        "test_attention_4d_gqa_causal_nonpad_decode",
        "test_attention_4d_gqa_causal_nonpad_decode_fp16",
        "test_attention_4d_padded_kv_bf16",
        "test_attention_local_window_ext_cache_float16_mask",
        "test_attention_local_window_ext_cache_rank2_mask",
        "test_attention_local_window_ext_cache_rank3_head_mask",
        "test_attention_local_window_ext_cache_rank4_batch_mask"],
    "Attention's sliding window (left/right_window_size)": [
        "test_attention_3d_local_window",
        "test_attention_bidirectional_window",
        "test_attention_local_window",
        "test_attention_local_window_rank1_boolean_mask",
        "test_attention_local_window_with_past"],
}
SKIPPED = {name: reason for reason, names in SKIP.items() for name in names}

# Tests that import and run but whose ONNX semantics grove does not follow,
# which no import can see: each must still fail, so the list stays true
# (docs/onnx.md, "Limits").
DIFFERS = {
    "test_gather_negative_indices": "a negative run-time index gathers "
    "zeros in grove; ONNX counts it from the end",
}


def _array(x):
    """Node test data hold numpy arrays or TensorProtos."""
    return numpy_helper.to_array(x) if isinstance(x, TensorProto) else \
        np.asarray(x)


def _inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits]


def _bind(model, values):
    """Splits a test's inputs into constants (the parameter inputs: shapes,
    axes, bounds, which grove needs when compiling) and run-time ones."""
    bound = set(go.parameter_inputs(model))
    names = _inputs(model)
    consts = {n: v for n, v in zip(names, values) if n in bound}
    return consts, [v for n, v in zip(names, values) if n not in bound]


def _close(got, want):
    got = np.asarray(got)
    if got.dtype == np.int32 and want.dtype == np.int64:
        want = want.astype(np.int32)  # int64 inputs are demoted to int32
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)} for {want.dtype}" \
            f"{list(want.shape)}"
    half = got.dtype.itemsize == 2 and got.dtype.kind not in "iub"
    tol = (RTOL_HALF, ATOL_HALF) if half else (RTOL, ATOL)
    if not np.allclose(got.astype(np.float64), want.astype(np.float64),
                       rtol=tol[0], atol=tol[1], equal_nan=True):
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        return f"max difference {np.nanmax(diff)}"
    return None


def _run_node_test(case, index, out_dir):
    """('pass' | 'dtype' | 'unsupported' | 'fail', detail)."""
    sets = [([_array(x) for x in ins], [_array(x) for x in outs])
            for ins, outs in case.data_sets]
    consts, _ = _bind(case.model, sets[0][0])
    try:
        imp = go.import_model(case.model, name=f"node{index}",
                              constants=consts)
    except go.UnsupportedError as e:
        kinds = {p.kind for p in e.problems}
        return ("dtype" if kinds == {"dtype"} else "unsupported", e)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        return "fail", f"import: {type(e).__name__}: {e}"
    try:
        lib = grove.compile(imp.text, output_dir=out_dir)
        model = grove.load(lib)
        model.load_state_dict(imp.weights)
    except Exception as e:  # noqa: BLE001
        return "fail", f"compile: {e}"
    for ins, outs in sets:
        _, args = _bind(case.model, ins)
        if imp.demoted:  # int64 ids and indices are int32 at the ABI
            if any(a.dtype == np.int64 and
                   (np.abs(a) >= 2 ** 31).any() for a in args):
                return "dtype", "int64 values beyond int32"
            args = [a.astype(np.int32) if a.dtype == np.int64 else a
                    for a in args]
        got = model.forward(*args)
        got = got if isinstance(got, tuple) else (got,)
        for i, (g, w) in enumerate(zip(got, outs)):
            problem = _close(g, w)
            if problem:
                return "fail", f"output {i}: {problem}"
    return "pass", None


def _mapped_node_tests():
    from onnx.backend.test.case import node
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node.collect_testcases(None)
    mapped = set(go.supported_ops()) | {"Constant"}
    return [c for c in cases
            if {n.op_type for n in c.model.graph.node} <= mapped]


def test_node_conformance(tmp_path):
    """Every node test whose ops are all mapped passes, is listed in SKIP
    (and refused), or uses an element type grove lacks (and says so)."""
    cases = _mapped_node_tests()
    with ThreadPoolExecutor(2) as pool:  # grove.compile releases the GIL
        results = list(pool.map(lambda ic: _run_node_test(ic[1], ic[0],
                                                          str(tmp_path)),
                                enumerate(cases)))
    tally = {"pass": [], "dtype": [], "skip": [], "fail": []}
    for case, (status, detail) in zip(cases, results):
        if case.name in DIFFERS:
            if status != "fail":
                tally["fail"].append(f"{case.name} is in DIFFERS but gave "
                                     f"{status}")
            continue
        if case.name in SKIPPED:
            if status != "unsupported":
                tally["fail"].append(f"{case.name} is in SKIP but gave "
                                     f"{status}: {detail}")
            else:
                tally["skip"].append(case.name)
        elif status == "dtype":
            for p in detail.problems:
                assert p.kind == "dtype" and str(p), p
            tally["dtype"].append(case.name)
        elif status == "pass":
            tally["pass"].append(case.name)
        else:
            tally["fail"].append(f"{case.name}: {status}: {detail}")
    print(f"node tests of mapped ops: {len(cases)} run, "
          f"{len(tally['pass'])} pass, {len(tally['skip'])} skipped "
          f"(SKIP), {len(tally['dtype'])} unsupported element types")
    assert not tally["fail"], "\n".join(tally["fail"])
    assert set(tally["skip"]) == set(SKIPPED), \
        sorted(set(SKIPPED) - set(tally["skip"]))
    assert len(tally["pass"]) > 600


def test_unsupported_dtype_is_named():
    """An op on a type grove lacks names the node, the op and the type."""
    x = helper.make_tensor_value_info("x", TensorProto.INT32, [3])
    y = helper.make_tensor_value_info("y", TensorProto.INT32, [3])
    node = helper.make_node("Add", ["x", "x"], ["y"], name="twice")
    model = helper.make_model(helper.make_graph([node], "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(go.UnsupportedError) as e:
        go.import_model(model)
    assert "node 'twice' (Add): int32 operands" in str(e.value)
    assert [p.kind for p in e.value.problems] == ["dtype"]


# ---- real models -----------------------------------------------------------

def _load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def _data_sets(directory):
    sets = []
    for d in sorted(glob.glob(os.path.join(directory, "test_data_set_*"))):
        ins = [_load_pb(p) for p in sorted(glob.glob(d + "/input_*.pb"))]
        outs = [_load_pb(p) for p in sorted(glob.glob(d + "/output_*.pb"))]
        sets.append((ins, outs))
    return sets


# Model tests in the wheel's data that do not import, by the reason the
# importer gives (a substring of its UnsupportedError).
REAL_UNSUPPORTED = {
    "test_gradient_of_add": "ai.onnx.preview.training.Gradient",
    "test_gradient_of_add_and_mul": "ai.onnx.preview.training.Gradient",
    **{f"test_sequence_model{i}": "Sequence" for i in range(1, 9)},
    **{name: "StringNormalizer" for name in (
        "test_strnorm_model_monday_casesensintive_lower",
        "test_strnorm_model_monday_casesensintive_nochangecase",
        "test_strnorm_model_monday_casesensintive_upper",
        "test_strnorm_model_monday_empty_output",
        "test_strnorm_model_monday_insensintive_upper_twodim",
        "test_strnorm_model_nostopwords_nochangecase")},
    **{name: "3 spatial dimensions" for name in (
        "test_Conv3d", "test_Conv3d_dilated", "test_Conv3d_dilated_strided",
        "test_Conv3d_groups", "test_Conv3d_no_bias", "test_Conv3d_stride",
        "test_Conv3d_stride_padding")},
    # Kernels of 200 and 60x80 with dilations: one slice per element.
    "test_MaxPool1d_stride_padding_dilation": "at most 64",
    "test_MaxPool2d_stride_padding_dilation": "at most 64",
    # Opset 6's PRelu slope is per channel; onnx's converter to opset 7+
    # leaves the [C] slope, which then does not broadcast.
    "test_PReLU_1d_multiparam": "do not broadcast",
    "test_PReLU_2d_multiparam": "do not broadcast",
    "test_PReLU_3d_multiparam": "do not broadcast",
    "test_operator_non_float_params": "int32 operands",  # int64, demoted
    "test_operator_pow": "an exponent computed at run time",
}


def _real_model_dirs():
    dirs = []
    for kind in ("simple", "pytorch-converted", "pytorch-operator"):
        dirs += sorted(glob.glob(os.path.join(DATA, kind, "*", "")))
    return [d.rstrip("/") for d in dirs]


@pytest.mark.parametrize("directory", _real_model_dirs(),
                         ids=os.path.basename)
def test_real_model(directory, tmp_path):
    """simple/, pytorch-converted/, pytorch-operator/: imported (converted
    from their opset 6-12 to 13 where older), compiled and run on every
    stored data set."""
    name = os.path.basename(directory)
    path = os.path.join(directory, "model.onnx")
    model = onnx.load(path)
    sets = _data_sets(directory)
    consts, _ = _bind(model, sets[0][0])
    if name in REAL_UNSUPPORTED:
        with pytest.raises(go.UnsupportedError, match=REAL_UNSUPPORTED[name]):
            go.import_model(path, constants=consts)
        return
    imp = go.import_model(path, name="m", constants=consts)
    m = grove.load(grove.compile(imp.text, output_dir=str(tmp_path)))
    m.load_state_dict(imp.weights)
    for ins, outs in sets:
        # int64 inputs (an Embedding's ids) are int32 at the ABI.
        got = m.forward(*[a.astype(np.int32) if a.dtype == np.int64 else a
                          for a in _bind(model, ins)[1]])
        got = got if isinstance(got, tuple) else (got,)
        for g, w in zip(got, outs):
            np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-5)


def _randomized(model, rng):
    """The light models hold their weights as ConstantOfShape fills, so
    every output is uniform: this replaces each fill by random values (per
    channel vectors in [0.5, 1.5), as batch norms need positive variances;
    He-scaled normal matrices), a model whose outputs tell channels apart."""
    graph = model.graph
    shapes = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    nodes = []
    for node in graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in shapes:
            nodes.append(node)
            continue
        shape = tuple(int(d) for d in shapes[node.input[0]])
        if len(shape) == 1:
            value = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        else:
            fan_in = int(np.prod(shape[1:]))
            value = rng.standard_normal(shape, np.float32)
            value *= np.float32(np.sqrt(2.0 / fan_in))
        graph.initializer.append(numpy_helper.from_array(value,
                                                         node.output[0]))
        graph.input.append(helper.make_tensor_value_info(
            node.output[0], TensorProto.FLOAT, shape))
    del graph.node[:]
    graph.node.extend(nodes)
    return model


LIGHT = sorted(glob.glob(os.path.join(DATA, "light", "*.onnx")))


@pytest.mark.parametrize("path", LIGHT,
                         ids=lambda p: os.path.basename(p)[6:-5])
def test_light_model(path, tmp_path):
    """The wheel's light ImageNet models (AlexNet, DenseNet-121, Inception
    v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512; opset 9,
    converted to 13): the stored output, then random weights against
    onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    model = onnx.load(path)
    inits = {i.name for i in model.graph.initializer}
    (x_info,) = [i for i in model.graph.input if i.name not in inits]
    shape = [d.dim_value for d in x_info.type.tensor_type.shape.dim]
    n = int(np.prod(shape))
    x = (np.arange(n).reshape(shape) / n).astype(np.float32)
    imp = go.import_model(model, name="light")
    m = grove.load(grove.compile(imp.text, output_dir=str(tmp_path / "a")))
    m.load_state_dict(imp.weights)
    want = _load_pb(path[:-5] + "_output_0.pb")
    np.testing.assert_allclose(m.forward(x), want, rtol=1e-3, atol=1e-7)

    rng = np.random.default_rng(0)
    model = _randomized(model, rng)
    imp = go.import_model(model, name="light_random")
    m = grove.load(grove.compile(imp.text, output_dir=str(tmp_path / "b")))
    m.load_state_dict(imp.weights)
    x = rng.standard_normal(shape).astype(np.float32)
    options = ort.SessionOptions()
    options.log_severity_level = 3  # not a warning per unused initializer
    sess = ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])
    (want,) = sess.run(None, {x_info.name: x})
    got = m.forward(x)
    assert want.std() > 1e-6  # the random weights tell the classes apart
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-6)


# ---- models exported from torch ---------------------------------------------

def _export(module, x, dynamic):
    torch = pytest.importorskip("torch")
    f = io.BytesIO()
    axes = {"x": {0: "batch"}, "y": {0: "batch"}} if dynamic else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, x, f, opset_version=13, input_names=["x"],
                          output_names=["y"], dynamic_axes=axes)
    return f.getvalue()


def _cnn():
    import torch

    class CNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.bn1 = torch.nn.BatchNorm2d(8)
            self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.bn2 = torch.nn.BatchNorm2d(16)
            self.pool = torch.nn.MaxPool2d(2)
            self.fc = torch.nn.Linear(16 * 4 * 4, 10)

        def forward(self, x):
            x = torch.relu(self.bn1(self.conv1(x)))
            x = self.pool(torch.relu(self.bn2(self.conv2(x))))
            return self.fc(x.view(x.size(0), -1))
    model = CNN().eval()
    with torch.no_grad():  # statistics a trained model would have
        for bn in (model.bn1, model.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
    return model


def _mlp():
    import torch
    return torch.nn.Sequential(
        torch.nn.Linear(20, 64), torch.nn.ReLU(), torch.nn.Linear(64, 32),
        torch.nn.Tanh(), torch.nn.Linear(32, 5), torch.nn.LogSoftmax(-1)
    ).eval()


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("make,shape", [(_cnn, (4, 3, 16, 16)),
                                        (_mlp, (4, 20))], ids=["cnn", "mlp"])
def test_torch_export(make, shape, dynamic, tmp_path):
    """A torch CNN (conv, batch norm, relu, max pool, flatten, linear) and
    an MLP, exported at opset 13 with a static or a dynamic batch, match
    torch on random inputs (every batch size, when dynamic)."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    module = make()
    data = _export(module, torch.randn(*shape), dynamic)
    imp = go.import_model(data, name=f"{make.__name__[1:]}{int(dynamic)}")
    first = imp.text.split("func.func @forward(")[1].split("\n")[0]
    assert ("tensor<?x" in first) == dynamic
    m = grove.load(grove.compile(imp.text, output_dir=str(tmp_path)))
    m.load_state_dict(imp.weights)
    for n in ((1, 3, 9) if dynamic else (shape[0],)):
        x = torch.randn(n, *shape[1:])
        with torch.no_grad():
            want = module(x).numpy()
        np.testing.assert_allclose(m.forward(x.numpy()), want, rtol=1e-4,
                                   atol=1e-5)


# ---- the importer's own behaviour -------------------------------------------

def _model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              initializer=list(inits))
    return helper.make_model(graph,
                             opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def test_names_and_params(tmp_path):
    """ONNX names that are not symbols: params get grove-safe names (the
    mapping kept), inputs and outputs C identifiers at the ABI."""
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    model = _model(
        [helper.make_node("MatMul", ["in:0", "layer/0/w"], ["out/y"])],
        [_vi("in:0", ["batch", 2])], [_vi("out/y", ["batch", 3])],
        [numpy_helper.from_array(w, "layer/0/w")])
    imp = go.import_model(model, name="names")
    assert imp.param_names == {"layer/0/w": "layer_0_w"}
    assert imp.inputs == [("in:0", "in_0")]
    assert imp.outputs == [("out/y", "out_y")]
    assert "grove.param @layer_0_w : tensor<2x3xf32>" in imp.text
    weights = tmp_path / "w.safetensors"
    imp.save_weights(weights)
    m = grove.load(grove.compile(imp.text, output_dir=str(tmp_path)))
    m.load(str(weights))
    spec = m.forward.inputs[0]
    assert (spec.name, spec.shape) == ("in_0", (None, 2))
    x = np.ones((5, 2), np.float32)
    np.testing.assert_allclose(m.forward(x), x @ w)


def test_shape_subgraph_folds_with_a_dynamic_batch():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape (x.view(n, -1)) on
    a dynamic batch folds to a static reshape, the batch staying dynamic;
    batch_dynamic=False fixes it to 1."""
    c = numpy_helper.from_array
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"]),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    inits = [c(np.array(0, np.int64), "zero"), c(np.array([0], np.int64),
                                                 "axes"),
             c(np.array([-1], np.int64), "minus1")]
    model = _model(nodes, [_vi("x", ["N", 3, 4])], [_vi("y", ["N", 12])],
                   inits)
    text = go.import_model(model).text
    assert "grove.reshape %x : tensor<?x3x4xf32> -> tensor<?x12xf32>" in text
    assert "grove.param" not in text  # shapes fold; nothing is a weight
    text = go.import_model(model, batch_dynamic=False).text
    assert "tensor<1x3x4xf32> -> tensor<1x12xf32>" in text


def test_partial_shapes_drive_expand_and_constant_of_shape(tmp_path):
    """ConstantOfShape and Expand to the shape of a dynamic-batch input:
    grove.broadcast_to with the batch's size read from that input."""
    row = np.arange(4, dtype=np.float32)
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["twos"],
                         value=helper.make_tensor("v", TensorProto.FLOAT,
                                                  [1], [2.0])),
        helper.make_node("Expand", ["row", "s"], ["rows"]),
        helper.make_node("Mul", ["x", "twos"], ["a"]),
        helper.make_node("Add", ["a", "rows"], ["y"]),
    ]
    model = _model(nodes, [_vi("x", ["N", 4])], [_vi("y", ["N", 4])],
                   [numpy_helper.from_array(row, "row")])
    imp = go.import_model(model, name="partial")
    assert "grove.broadcast_to" in imp.text and "tensor.dim %x" in imp.text
    m = grove.load(grove.compile(imp.text, output_dir=str(tmp_path)))
    m.load_state_dict(imp.weights)
    for n in (1, 5):
        x = np.ones((n, 4), np.float32)
        np.testing.assert_array_equal(m.forward(x), 2 * x + row)


def test_runtime_gather_indices(tmp_path):
    """Gather by run-time i32 indices is grove.gather (on any axis)."""
    table = np.arange(24, dtype=np.float32).reshape(4, 6)
    model = _model([helper.make_node("Gather", ["t", "i"], ["y"], axis=1)],
                   [_vi("i", [2, 2], TensorProto.INT32)],
                   [_vi("y", [4, 2, 2])], [numpy_helper.from_array(table,
                                                                   "t")])
    imp = go.import_model(model, name="gather")
    assert "grove.gather" in imp.text
    m = grove.load(grove.compile(imp.text, output_dir=str(tmp_path)))
    m.load_state_dict(imp.weights)
    idx = np.array([[5, 0], [2, 2]], np.int32)
    np.testing.assert_array_equal(m.forward(idx), table[:, idx])
    # grove.gather's rule, not ONNX's wrap-around (docs/onnx.md)
    idx = np.array([[-1, 1], [0, 0]], np.int32)
    got = m.forward(idx)
    np.testing.assert_array_equal(got[:, 0, 0], 0)
    np.testing.assert_array_equal(got[:, 0, 1], table[:, 1])


def test_masks_powers_and_triangles(tmp_path):
    """What the node tests leave out (their comparisons return bool, their
    Trilu and logic inputs are integers or bool, their Pow exponents are
    inputs): float comparisons as masks, including NaN and infinities,
    logic on them, Where, Pow by constants, Trilu, Gather by constant
    (negative) indices, against numpy."""
    c = numpy_helper.from_array
    node = helper.make_node
    nodes = [
        node("Less", ["x", "y"], ["lt"]), node("Greater", ["x", "y"], ["gt"]),
        node("Equal", ["x", "y"], ["eq"]),
        node("LessOrEqual", ["x", "y"], ["le"]),
        node("GreaterOrEqual", ["x", "y"], ["ge"]),
        node("Not", ["eq"], ["ne"]), node("And", ["le", "ge"], ["both"]),
        node("Or", ["lt", "gt"], ["either"]), node("Xor", ["le", "ge"],
                                                   ["one"]),
    ]
    masks = ["lt", "gt", "eq", "le", "ge", "ne", "both", "either", "one"]
    nodes += [node("Where", [m, "t", "f"], [m + "_f"]) for m in masks]
    exps = [2.0, 3.0, -1.0, 0.0, 0.5, -0.5]
    nodes += [node("Pow", ["x", f"e{i}"], [f"p{i}"])
              for i in range(len(exps))]
    nodes += [node("Trilu", ["x", "k1"], ["upper"]),
              node("Trilu", ["x", "km1"], ["lower"], upper=0),
              node("Gather", ["x", "idx"], ["picked"], axis=1)]
    inits = [c(np.array(1, np.float32), "t"),
             c(np.array(0, np.float32), "f"),
             c(np.array(1, np.int64), "k1"), c(np.array(-1, np.int64), "km1"),
             c(np.array([-1, 0, 2], np.int64), "idx")]
    inits += [c(np.array(e, np.float32), f"e{i}") for i, e in enumerate(exps)]
    outs = [m + "_f" for m in masks] + [f"p{i}" for i in range(len(exps))] + \
        ["upper", "lower", "picked"]
    shapes = {"picked": [4, 3]}
    model = _model(nodes, [_vi("x", [4, 5]), _vi("y", [4, 5])],
                   [_vi(o, shapes.get(o, [4, 5])) for o in outs], inits)
    imp = go.import_model(model, name="masks")
    m = grove.load(grove.compile(imp.text, output_dir=str(tmp_path)))
    m.load_state_dict(imp.weights)
    x = np.array([[1, 2, np.nan, np.inf, -np.inf],
                  [np.inf, -np.inf, 0, -0.0, 3],
                  [1.5, 2, 3, 4, 5], [-1, -2, 0.25, 9, 7]], np.float32)
    y = np.array([[1, 3, 1, np.inf, -np.inf],
                  [-np.inf, np.inf, np.nan, 0, 3],
                  [1.5, 1, 4, 4, 6], [1, -2, 0.5, 8, 7]], np.float32)
    got = dict(zip(outs, m.forward(x, y)))
    with np.errstate(invalid="ignore"):
        lt, gt, eq = x < y, x > y, x == y
        le, ge = x <= y, x >= y
        want = {"lt": lt, "gt": gt, "eq": eq, "le": le, "ge": ge, "ne": ~eq,
                "both": le & ge, "either": lt | gt, "one": le ^ ge}
        for name, mask in want.items():
            np.testing.assert_array_equal(got[name + "_f"], mask, name)
        with np.errstate(divide="ignore"):
            for i, e in enumerate(exps):  # -0, infinities and NaN too
                np.testing.assert_allclose(got[f"p{i}"], np.power(x, e),
                                           rtol=1e-6, equal_nan=True)
    np.testing.assert_array_equal(got["upper"], np.triu(x, 1))
    np.testing.assert_array_equal(got["lower"], np.tril(x, -1))
    np.testing.assert_array_equal(got["picked"], x[:, [4, 0, 2]])


def test_attention_masks_and_dead_rows(tmp_path):
    """Attention with a constant bool mask and a run-time float mask, each
    masking one query row entirely, with and without is_causal and a past:
    the rows are 0 (ONNX), not NaN, and all else matches onnx's reference."""
    from onnx.reference import ReferenceEvaluator
    rng = np.random.default_rng(0)
    b, h, sq, sk, d, past = 2, 2, 3, 4, 8, 2
    keep = np.ones((sq, sk + past), bool)
    keep[1] = False
    nodes = [helper.make_node("Attention", ["q", "k", "v", "keep", "pk",
                                            "pv"], ["y1", "k1", "v1"],
                              is_causal=1),
             helper.make_node("Attention", ["q", "k2", "v2", "bias"],
                              ["y2"])]
    ins = [_vi("q", [b, h, sq, d]), _vi("k", [b, h, sk, d]),
           _vi("v", [b, h, sk, d]), _vi("pk", [b, h, past, d]),
           _vi("pv", [b, h, past, d]), _vi("k2", [b, h, sk, d]),
           _vi("v2", [b, h, sk, d]), _vi("bias", [sq, sk])]
    outs = [_vi("y1", [b, h, sq, d]), _vi("k1", [b, h, sk + past, d]),
            _vi("v1", [b, h, sk + past, d]), _vi("y2", [b, h, sq, d])]
    model = _model(nodes, ins, outs, [numpy_helper.from_array(keep, "keep")],
                   opset=23)
    feeds = {i.name: rng.standard_normal(
        [x.dim_value for x in i.type.tensor_type.shape.dim]).astype(
            np.float32) for i in ins}
    feeds["bias"][2] = -np.inf
    want = ReferenceEvaluator(model).run(None, feeds)
    imp = go.import_model(model, name="attn")
    m = grove.load(grove.compile(imp.text, output_dir=str(tmp_path)))
    got = m.forward(*(feeds[i.name] for i in ins))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert not got[0][:, :, 1].any() and not got[3][:, :, 2].any()


def test_constants_print_as_mlir_parses_them(tmp_path):
    """Folded constants in grove.constant text: exponents, infinities, NaN
    and -0 (hex bit patterns), in lists and splats."""
    values = np.array([1e-20, 3e20, np.inf, -np.inf, np.nan, -0.0, 0.1],
                      np.float32)
    nodes = [helper.make_node("Constant", [], ["c"],
                              value=numpy_helper.from_array(values)),
             helper.make_node("Constant", [], ["s"],
                              value=numpy_helper.from_array(
                                  np.full(7, 1e-30, np.float32))),
             helper.make_node("Add", ["x", "c"], ["a"]),
             helper.make_node("Mul", ["a", "s"], ["y"])]
    model = _model(nodes, [_vi("x", [7])], [_vi("y", [7])])
    imp = go.import_model(model, name="consts")
    m = grove.load(grove.compile(imp.text, output_dir=str(tmp_path)))
    x = np.zeros(7, np.float32)
    np.testing.assert_array_equal(m.forward(x), (x + values) *
                                  np.float32(1e-30))


def test_every_unsupported_node_is_listed():
    """All unsupported nodes are reported together, each by name and op;
    strict=False returns them instead."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="fine"),
        helper.make_node("Hardmax", ["a"], ["b"], name="hard"),
        helper.make_node("Round", ["x"], ["c"], name="round_me"),
        helper.make_node("Add", ["b", "c"], ["y"], name="after"),
    ]
    model = _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])])
    with pytest.raises(go.UnsupportedError) as e:
        go.import_model(model)
    text = str(e.value)
    assert "node 'hard' (Hardmax)" in text
    assert "node 'round_me' (Round)" in text
    assert "fine" not in text and "after" not in text
    imp = go.import_model(model, strict=False)
    assert imp.text is None and len(imp.unsupported) == 2


def test_older_opsets_are_converted():
    """An opset-9 model is brought to 13 by onnx.version_converter."""
    model = _model([helper.make_node("Relu", ["x"], ["y"])],
                   [_vi("x", [2])], [_vi("y", [2])], opset=9)
    imp = go.import_model(model)
    assert (imp.converted_from, imp.opset) == (9, 13)
    assert "converted from 9" in imp.text


@pytest.mark.parametrize("data", [b"", os.urandom(256),
                                  b"\x08\x07\x12\x04grove\x3a\xff"],
                         ids=["empty", "random", "truncated"])
def test_malformed_files_raise_clear_errors(data, tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(data)
    with pytest.raises(go.OnnxImportError):
        go.import_model(str(path))


def test_invalid_graph_is_an_import_error():
    """A node reading a value nothing defines fails onnx.checker."""
    model = _model([helper.make_node("Relu", ["nothing"], ["y"])],
                   [_vi("x", [2])], [_vi("y", [2])])
    with pytest.raises(go.OnnxImportError, match="invalid model"):
        go.import_model(model)


# ---- the command line -------------------------------------------------------

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "grove.onnx", *args],
                          capture_output=True, text=True, timeout=120)


def _small_model(path):
    w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    model = _model([helper.make_node("Gemm", ["x", "fc.w"], ["y"],
                                     transB=1)],
                   [_vi("x", ["batch", 3])], [_vi("y", ["batch", 4])],
                   [numpy_helper.from_array(w, "fc.w")])
    onnx.save(model, str(path))
    return w


@pytest.mark.parametrize("runner", ["module", "wrapper"])
def test_cli_writes_module_and_weights(runner, tmp_path):
    src = tmp_path / "small.onnx"
    w = _small_model(src)
    out = tmp_path / "small.mlir"
    args = [str(src), "-o", str(out), "--name", "small"]
    if runner == "module":
        r = _cli(*args)
    else:
        wrapper = os.path.join(ROOT, "build", "bin", "grove-import-onnx")
        if not os.path.exists(wrapper):
            pytest.skip("no build/bin/grove-import-onnx")
        r = subprocess.run([wrapper, *args], capture_output=True, text=True,
                           timeout=120)
    assert r.returncode == 0, r.stderr
    weights = tmp_path / "small.safetensors"
    assert weights.exists()
    m = grove.load(grove.compile(str(out), output_dir=str(tmp_path)))
    m.load(str(weights))
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(m.forward(x), x @ w.T, rtol=1e-6)


@pytest.mark.parametrize("data", [os.urandom(100), None],
                         ids=["random", "truncated"])
def test_cli_bad_file_exits_1(data, tmp_path):
    path = tmp_path / "bad.onnx"
    if data is None:
        _small_model(path)
        data = path.read_bytes()[:40]
    path.write_bytes(data)
    r = _cli(str(path), "-o", str(tmp_path / "out.mlir"))
    assert r.returncode == 1
    assert r.stderr.startswith("grove-import-onnx: error: ")
    assert "Traceback" not in r.stderr


def test_cli_missing_file_and_unsupported_op(tmp_path):
    r = _cli(str(tmp_path / "absent.onnx"))
    assert r.returncode == 1 and "no such file" in r.stderr
    path = tmp_path / "topk.onnx"
    k = numpy_helper.from_array(np.array([1], np.int64), "k")
    onnx.save(_model([helper.make_node("TopK", ["x", "k"], ["v", "i"],
                                       name="best")],
                     [_vi("x", [3])], [_vi("v", [1]),
                                       _vi("i", [1], TensorProto.INT64)],
                     [k]), str(path))
    r = _cli(str(path), "-o", str(tmp_path / "topk.mlir"))
    assert r.returncode == 1
    assert "node 'best' (TopK): no grove mapping" in r.stderr
    assert "Traceback" not in r.stderr
