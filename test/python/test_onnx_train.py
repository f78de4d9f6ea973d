"""Training an imported model: a torch.onnx.export'd MLP gets a compiled
train_step in one call (Imported.add_train_step, or grove-import-onnx
--train-step). SGD against torch.optim.SGD over two steps (1e-4, fresh
random weights and batches); every other optimizer grove has trains the
digits (the loss falls); the step compiles as a compressed data-parallel
step with grovec."""
import io
import os
import subprocess

import numpy as np
import pytest
import torch

import grove
import grove.onnx

BIN = os.environ["GROVE_BIN"]


def exported_mlp(seed):
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(),
                              torch.nn.Linear(32, 10))
    f = io.BytesIO()
    torch.onnx.export(net, torch.zeros(2, 64), f, opset_version=17,
                      input_names=["x"], output_names=["logits"],
                      dynamic_axes={"x": {0: "batch"},
                                    "logits": {0: "batch"}})
    return net, f.getvalue()


def test_sgd_step_matches_torch(rng):
    net, onnx_bytes = exported_mlp(int(rng.integers(1 << 30)))
    imp = grove.onnx.import_model(onnx_bytes).add_train_step(
        "sgd", lr=0.1, momentum=0.9)
    assert "func.func @train_step" in imp.text
    model = grove.load(grove.compile(imp.text))
    model.load_state_dict(imp.weights)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for _ in range(2):
        x = rng.standard_normal((8, 64)).astype(np.float32)
        y = rng.integers(0, 10, 8).astype(np.int32)
        loss = torch.nn.functional.cross_entropy(
            net(torch.from_numpy(x)), torch.from_numpy(y).long())
        opt.zero_grad()
        loss.backward()
        opt.step()
        np.testing.assert_allclose(model.train_step(x, y), loss.item(),
                                   rtol=1e-4, atol=1e-4)
    # The updated weights, by the ONNX initializer each came from.
    updated = {model[grove_name].shape: model[grove_name]
               for grove_name in imp.param_names.values()}
    for p in net.parameters():
        expected = p.detach().numpy()
        shape = expected.shape if expected.shape in updated else \
            expected.T.shape  # an exporter may store a Linear transposed
        got = updated[shape] if shape == expected.shape else updated[shape].T
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


# AdaAlter's first step divides by sqrt(epsilon) (its accumulator lags a
# step and starts at 0): a larger epsilon keeps that step in range.
@pytest.mark.parametrize("optimizer,attrs", [
    ("adam", dict(lr=1e-2)), ("adagrad", dict(lr=5e-2)),
    ("lamb", dict(lr=5e-2)), ("lans", dict(lr=5e-2)),
    ("adaalter", dict(lr=5e-2, epsilon=1e-2))])
def test_every_optimizer_trains_the_digits(optimizer, attrs):
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    _, onnx_bytes = exported_mlp(0)
    imp = grove.onnx.import_model(onnx_bytes).add_train_step(optimizer,
                                                             **attrs)
    model = grove.load(grove.compile(imp.text))
    model.load_state_dict(imp.weights)
    order = np.random.default_rng(0).permutation(len(x))
    losses = []
    for epoch in range(3):
        for i in range(0, len(x) - 63, 64):
            idx = order[i:i + 64]
            losses.append(float(model.train_step(x[idx], y[idx])))
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    assert last < 0.5 * first, (optimizer, first, last)
    accuracy = (model.forward(x).argmax(1) == y).mean()
    assert accuracy > 0.8, (optimizer, accuracy)


def test_cli_train_step_compiles_as_compressed_data_parallel(tmp_path):
    _, onnx_bytes = exported_mlp(0)
    src = tmp_path / "mlp.onnx"
    src.write_bytes(onnx_bytes)
    out = tmp_path / "mlp.mlir"
    r = subprocess.run([os.path.join(BIN, "grove-import-onnx"), str(src),
                        "-o", str(out), "--train-step", "lans", "--lr",
                        "0.001"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "grove.lans" in out.read_text()
    assert (tmp_path / "mlp.safetensors").exists()
    r = subprocess.run([os.path.join(BIN, "grovec"), str(out), "-o",
                        str(tmp_path / "dp"), "--emit=mlir",
                        "--data-parallel", "--compressor=topk",
                        "--compress-error=feedback"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "dp" / "torch_jit.mlir").read_text()
    assert "all_gather" in text  # top-k's (index, value) pairs


def test_train_step_needs_one_output():
    import onnx
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["a"]),
                               helper.make_node("Tanh", ["x"], ["b"])],
                              "two", [x], [a, b])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)])
    imp = grove.onnx.import_model(model.SerializeToString())
    with pytest.raises(ValueError, match="one output"):
        imp.add_train_step("sgd", lr=0.1)
    del onnx


def test_weights_stay_params_and_one_train_step(rng):
    """A weight read through a Cast stays a param (trainable, loadable by
    its name), folded constants are never trained, and a second
    train_step is refused."""
    from onnx import TensorProto, helper, numpy_helper
    w = rng.standard_normal((3, 4)).astype(np.float64)
    big = rng.standard_normal((3, 400)).astype(np.float32)  # a const param
    axes = np.array([1], np.int64)
    nodes = [helper.make_node("Cast", ["W"], ["Wc"], to=TensorProto.FLOAT),
             helper.make_node("MatMul", ["x", "Wc"], ["h"]),
             helper.make_node("Constant", [], ["big"],
                              value=numpy_helper.from_array(big)),
             helper.make_node("Constant", [], ["axes"],
                              value=numpy_helper.from_array(axes)),
             helper.make_node("MatMul", ["x", "big"], ["k"]),
             helper.make_node("ReduceSum", ["k", "axes"], ["s"]),
             helper.make_node("Add", ["h", "s"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                       ["batch", 4])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)])
    imp = grove.onnx.import_model(model.SerializeToString())
    assert "W" in imp.weights
    assert any(n.startswith("const.") for n in imp.weights)
    imp.add_train_step("sgd", loss="mse_loss", lr=0.1)
    assert "grove.sgd [@W]" in imp.text  # W alone, not the constant
    with pytest.raises(ValueError, match="already has @train_step"):
        imp.add_train_step("sgd", lr=0.1)
