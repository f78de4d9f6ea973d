"""grove.ir and grove.nn: the blocks' IR, compiled and called, against
PyTorch's functional ops on fresh random inputs and weights (tolerance
1e-4 relative + absolute, f32), plus naming, initialisers, train_step and
the builder's errors."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import grove
from grove import ir, nn

TOL = dict(rtol=1e-4, atol=1e-4)


def build(entries, name="blocks", seed=0):
    """A module with one forward entry per (name, block, input shapes,
    input dtypes or None); returns (loaded model, initial weights)."""
    m = ir.Module(name)
    root = nn.Block()  # each block's params under its entry's name
    for entry, block, shapes, dtypes in entries:
        setattr(root, entry, block)
        dtypes = dtypes or ["f32"] * len(shapes)
        args = [(f"x{i}", ir.TensorType(s, d))
                for i, (s, d) in enumerate(zip(shapes, dtypes))]
        f = m.function(entry, args, results=None)  # as the body returns
        f.builder.ret(block(f.builder, *f.args))
    weights = m.init_weights(seed)
    model = grove.load(grove.compile(m.text()))
    model.load_state_dict(weights)
    return model, weights, m


def t(a):
    return torch.from_numpy(np.asarray(a, np.float64))


@pytest.fixture(scope="module")
def blocks(rng):
    seq_conv = nn.Sequential(
        nn.Conv2D(6, 3, strides=2, padding=1, groups=2, use_bias=True),
        nn.BatchNorm(), nn.Activation("relu"))
    entries = [
        ("dense", nn.Dense(5, activation="tanh"), [(None, 7)], None),
        ("conv", seq_conv, [(None, 4, 9, 9)], None),
        ("maxpool", nn.MaxPool2D(3, 2, padding=1), [(None, 3, 9, 9)], None),
        ("avgpool", nn.AvgPool2D(2, 2, ceil_mode=True,
                                 count_include_pad=False),
         [(None, 3, 9, 9)], None),
        ("gap", nn.Sequential(nn.GlobalAvgPool2D(), nn.Flatten()),
         [(None, 3, 5, 5)], None),
        ("layer_norm", nn.LayerNorm(1e-5), [(None, 4, 8)], None),
        ("embedding", nn.Embedding(11, 6), [(None, 3)], ["i32"]),
        ("attention", nn.MultiHeadAttention(8, 2), [(2, 5, 8), (2, 1, 1, 5)],
         None),
    ]
    model, weights, m = build(entries, seed=int(rng.integers(1 << 30)))
    # Running statistics other than the initial 0 and 1, a LayerNorm
    # scale other than 1.
    for name, value in (
            ("conv.1.running_mean", rng.standard_normal(6)),
            ("conv.1.running_var", rng.uniform(0.5, 2, 6)),
            ("layer_norm.weight", rng.standard_normal(8))):
        weights[name] = value.astype(np.float32)
        model[name] = weights[name]
    return model, {k: t(v) for k, v in weights.items()}, m


def check(actual, expected):
    np.testing.assert_allclose(np.asarray(actual, np.float64),
                               expected.detach().numpy(), **TOL)


def test_dense(blocks, rng):
    model, w, _ = blocks
    x = rng.standard_normal((3, 7)).astype(np.float32)
    check(model.dense(x), torch.tanh(F.linear(t(x), w["dense.weight"],
                                              w["dense.bias"])))


def test_conv_batch_norm_relu(blocks, rng):
    model, w, _ = blocks
    x = rng.standard_normal((2, 4, 9, 9)).astype(np.float32)
    y = F.conv2d(t(x), w["conv.0.weight"], w["conv.0.bias"], stride=2,
                 padding=1, groups=2)
    y = F.batch_norm(y, w["conv.1.running_mean"], w["conv.1.running_var"],
                     w["conv.1.weight"], w["conv.1.bias"], eps=1e-5)
    check(model.conv(x), F.relu(y))


def test_pools(blocks, rng):
    model, _, _ = blocks
    x = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    check(model.maxpool(x), F.max_pool2d(t(x), 3, 2, padding=1))
    check(model.avgpool(x), F.avg_pool2d(t(x), 2, 2, ceil_mode=True,
                                         count_include_pad=False))
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    check(model.gap(x), t(x).mean(dim=(2, 3)))


def test_layer_norm(blocks, rng):
    model, w, _ = blocks
    x = rng.standard_normal((3, 4, 8)).astype(np.float32)
    check(model.layer_norm(x), F.layer_norm(
        t(x), (8,), w["layer_norm.weight"], w["layer_norm.bias"], eps=1e-5))


def test_embedding(blocks, rng):
    model, w, _ = blocks
    ids = rng.integers(0, 11, (4, 3)).astype(np.int32)
    check(model.embedding(ids), F.embedding(torch.from_numpy(ids).long(),
                                            w["embedding.weight"]))


def test_multi_head_attention(blocks, rng):
    model, w, _ = blocks
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    mask = np.where(rng.random((2, 1, 1, 5)) < 0.3, -1e4, 0).astype(
        np.float32)

    def heads(v):
        return v.reshape(2, 5, 2, 4).transpose(1, 2)
    w = {k[len("attention."):]: v for k, v in w.items()
         if k.startswith("attention.")}
    q, k, v = (heads(F.linear(t(x), w[f"{n}.weight"], w[f"{n}.bias"]))
               for n in ("query", "key", "value"))
    p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(4) + t(mask), -1)
    ctx = (p @ v).transpose(1, 2).reshape(2, 5, 8)
    check(model.attention(x, mask),
          F.linear(ctx, w["output.weight"], w["output.bias"]))


def split_attention_reference(w, x, radix, card, channels):
    """ResNeSt's SplAtConv2d in torch, from the paper's equations."""
    u = F.conv2d(x, w["conv.weight"], padding=1, groups=card * radix)
    u = F.relu(F.batch_norm(u, w["bn0.running_mean"], w["bn0.running_var"],
                            w["bn0.weight"], w["bn0.bias"], eps=1e-5))
    splits = torch.split(u, channels, dim=1)
    gap = sum(splits).mean(dim=(2, 3), keepdim=True)
    g = F.conv2d(gap, w["fc1.weight"], w["fc1.bias"], groups=card)
    g = F.relu(F.batch_norm(g, w["bn1.running_mean"], w["bn1.running_var"],
                            w["bn1.weight"], w["bn1.bias"], eps=1e-5))
    a = F.conv2d(g, w["fc2.weight"], w["fc2.bias"], groups=card)
    a = a.view(x.shape[0], card, radix, -1).transpose(1, 2)
    a = torch.softmax(a, dim=1).reshape(x.shape[0], -1, 1, 1)
    attn = torch.split(a, channels, dim=1)
    return sum(aj * s for aj, s in zip(attn, splits))


@pytest.mark.parametrize("fused", [False, True])
def test_split_attention(rng, fused):
    block = nn.SplitAttentionConv2D(8, radix=2, cardinality=2, fused=fused)
    model, w, _ = build([("forward", block, [(None, 16, 6, 6)], None)],
                        seed=int(rng.integers(1 << 30)))
    for n in ("bn0", "bn1"):  # statistics other than 0 and 1
        c = model[f"forward.{n}.running_mean"].shape
        model[f"forward.{n}.running_mean"] = \
            rng.standard_normal(c).astype(np.float32)
        model[f"forward.{n}.running_var"] = \
            rng.uniform(0.5, 2, c).astype(np.float32)
    w = {k[len("forward."):]: t(model[k]) for k in w}
    x = rng.standard_normal((2, 16, 6, 6)).astype(np.float32)
    check(model.forward(x), split_attention_reference(w, t(x), 2, 2, 8))


def test_unfused_split_attention_fuses(tmp_path):
    """The unfused block is what grove-fuse-split-attention recognises."""
    m = ir.Module("splat")
    f = m.function("forward", [("x", (None, 16, 6, 6))], [(None, 8, 6, 6)])
    f.builder.ret(nn.SplitAttentionConv2D(8, cardinality=2)(f.builder,
                                                            f.args[0]))
    text = m.text()
    assert "grove.split_attention" not in text
    src = tmp_path / "splat.mlir"
    src.write_text(text)
    opt = os.path.join(os.environ["GROVE_BIN"], "grove-opt")
    out = subprocess.run([opt, str(src), "--grove-fuse-split-attention"],
                         capture_output=True, text=True, check=True).stdout
    assert out.count("grove.split_attention") == 1
    assert "grove.softmax" not in out and "grove.slice" not in out


def test_train_step_matches_torch_sgd(rng):
    """nn.train_step: the loss and one SGD step of an MLP, as torch's."""
    net = nn.Sequential(nn.Dense(6, activation="relu"), nn.Dense(3))
    m = ir.Module("mlp")
    f = m.function("forward", [("x", (None, 5))], [("logits", (None, 3))])
    f.builder.ret(net(f.builder, f.args[0]))
    nn.train_step(m, f, "sgd", lr=0.1, momentum=0.9)
    weights = m.init_weights(int(rng.integers(1 << 30)))
    model = grove.load(grove.compile(m.text()))
    model.load_state_dict(weights)
    params = {k: t(v).requires_grad_() for k, v in weights.items()}
    opt = torch.optim.SGD(params.values(), lr=0.1, momentum=0.9)
    for _ in range(2):
        x = rng.standard_normal((4, 5)).astype(np.float32)
        y = rng.integers(0, 3, 4).astype(np.int32)
        h = F.relu(F.linear(t(x), params["0.weight"], params["0.bias"]))
        loss = F.cross_entropy(F.linear(h, params["1.weight"],
                                        params["1.bias"]),
                               torch.from_numpy(y).long())
        opt.zero_grad()
        loss.backward()
        opt.step()
        check(model.train_step(x, y), loss)
    for k, p in params.items():
        check(model[k], p)


def test_batch_norm_training_form(rng):
    """A training builder normalises by the batch and updates the running
    statistics, which start at 0 and 1 (torch's train mode)."""
    bn = nn.BatchNorm()
    m = ir.Module("bn")
    f = m.function("forward", [("x", (None, 3, 4, 4))], [(None, 3, 4, 4)])
    f.builder.ret(bn(f.builder, f.args[0]))
    g = m.function("train", [("x", (None, 3, 4, 4))], [(None, 3, 4, 4)],
                   training=True)
    g.builder.ret(bn(g.builder, g.args[0]))
    assert "grove.param @running_mean : tensor<3xf32> = 0.0 : f32" in m.text()
    model = grove.load(grove.compile(m.text()))
    model.load_state_dict({"weight": np.ones(3, np.float32),
                           "bias": np.zeros(3, np.float32)})
    x = rng.standard_normal((5, 3, 4, 4)).astype(np.float32)
    mean, var = torch.zeros(3, dtype=torch.float64), \
        torch.ones(3, dtype=torch.float64)
    expected = F.batch_norm(t(x), mean, var, training=True, momentum=0.1)
    check(model.train(x), expected)
    check(model["running_mean"], mean)
    check(model["running_var"], var)


def test_param_names_follow_the_tree():
    class Net(nn.Block):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Dense(4), nn.Dense(2))
            self.cell = nn.LayerNorm().with_prefix("")
            self.head = nn.Dense(1)

        def forward(self, b, x):
            return self.head(b, self.cell(b, self.body(b, x)))
    m = ir.Module("net")
    f = m.function("forward", [("x", (None, 3))], [(None, 1)])
    f.builder.ret(Net()(f.builder, f.args[0]))
    assert list(m.params) == [
        "body.0.weight", "body.0.bias", "body.1.weight", "body.1.bias",
        "weight", "bias", "head.weight", "head.bias"]
    # A block attached after its children were built renames them too.
    outer = nn.Sequential()
    inner = nn.Sequential(nn.Dense(2))
    outer.add(inner, "enc")
    assert inner[0].param_name("weight") == "enc.0.weight"


def test_initialisers_are_seeded_and_bounded():
    m = ir.Module("init")
    f = m.function("forward", [("x", (None, 50))], [(None, 40)])
    f.builder.ret(nn.Dense(40)(f.builder, f.args[0]))
    a, b, c = m.init_weights(1), m.init_weights(1), m.init_weights(2)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["weight"], c["weight"])
    bound = 1 / math.sqrt(50)  # PyTorch's Linear default
    assert np.abs(a["weight"]).max() <= bound
    assert np.abs(a["weight"]).max() > 0.9 * bound
    assert a["weight"].dtype == np.float32 and a["weight"].shape == (40, 50)


def test_builder_errors():
    m = ir.Module("bad")
    m.param("w", (2, 3))
    with pytest.raises(ValueError, match="declared as"):
        m.param("w", (3, 2))
    f = m.function("forward", [("a", (2, 3)), ("b", (4, 3))], [])
    with pytest.raises(ValueError, match="do not broadcast"):
        f.builder.add(f.args[0], f.args[1])
    with pytest.raises(ValueError, match="not a multiple"):
        nn.MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="unknown element type"):
        ir.TensorType((2,), "f8")
    with pytest.raises(ValueError, match="builder"):
        nn.Dense(2)(ir.Builder([], 0, ir._Names()), f.args[0])
    with pytest.raises(ValueError, match="inner sizes 3 and 4 differ"):
        f.builder.matmul(f.args[0], f.args[1])
    # Two top-level blocks would both name their weight `0.weight`.
    g = m.function("g", [("x", (None, 3))], [])
    nn.Sequential(nn.Dense(3))(g.builder, g.args[0])
    with pytest.raises(ValueError, match="declared by two blocks"):
        nn.Sequential(nn.Dense(3))(g.builder, g.args[0])


def test_grove_nn_needs_no_extension():
    """The builder and the importer import without grove._core: model
    generators run before anything is built."""
    code = ("import sys, grove.ir, grove.nn, grove.onnx; "
            "assert 'grove._core' not in sys.modules, 'loaded'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_state_starts_at_its_declared_value():
    """init_weights gives state its initial value (a BatchNorm's running
    variance 1), and the training form takes the block's epsilon and
    momentum."""
    m = ir.Module("bn")
    g = m.function("train", [("x", (None, 3, 2, 2))], [(None, 3, 2, 2)],
                   training=True)
    g.builder.ret(nn.BatchNorm(epsilon=1e-3, momentum=0.2)(g.builder,
                                                           g.args[0]))
    w = m.init_weights(0)
    assert (w["running_var"] == 1).all() and (w["running_mean"] == 0).all()
    assert "epsilon = 0.001 : f64" in m.text()
    assert "momentum = 0.2 : f64" in m.text()


def test_emitted_text_reads_as_written():
    """Named values, the custom op forms, wrapped long ops."""
    m = ir.Module("mlp")
    f = m.function("forward", [("x", (None, 4))], [("y", (None, 2))])
    b = f.builder
    y = nn.Dense(2, activation="relu")(b, f.args[0])
    b.ret(y)
    text = m.text()
    assert "%weight = grove.get_param @weight : tensor<2x4xf32>" in text
    assert "grove.matmul %x, %weight {transpose_rhs}" in text
    assert "grove.relu" in text and "return %v" in text
    assert all(len(line) <= 100 for line in text.splitlines())
