"""Models exported by torch.onnx.export from the project's own PyTorch
references, imported and compiled: ResNeSt (models/resnest/reference.py),
whose split attentions must fuse through the exporter's op patterns (a BN
folded into fc1, Python's sum() starting from 0, Split ops), and the BERT
encoder (models/bert/reference.py) with Hugging Face's inputs (ids and an
attention mask). Outputs against torch on fresh random inputs and weights
(rtol/atol 1e-4 f32); ResNeSt-50 is imported and fused, not run."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import grove
import grove.onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def _load(path, name):
    """A models/ script as a module of its own name (both directories have
    a generate.py and a reference.py)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _model(directory, script, name):
    sys.path.insert(0, os.path.join(ROOT, "models", directory))
    try:  # reference.py imports its directory's generate
        sys.modules.pop("generate", None)
        return _load(os.path.join(ROOT, "models", directory, script), name)
    finally:
        sys.path.pop(0)


resnest_generate = _model("resnest", "generate.py", "resnest_generate")
resnest_reference = _model("resnest", "reference.py", "resnest_reference")
bert_generate = _model("bert", "generate.py", "bert_generate")
bert_reference = _model("bert", "reference.py", "bert_reference")


class Functional(torch.nn.Module):
    """A functional reference with its params as buffers, to export."""

    def __init__(self, params, fn):
        super().__init__()
        self.names = list(params)
        for i, name in enumerate(self.names):
            self.register_buffer(f"p{i}", params[name])
        self.fn = fn

    def forward(self, *inputs):
        p = {n: getattr(self, f"p{i}") for i, n in enumerate(self.names)}
        return self.fn(p, *inputs)


def export(module, inputs, names, dynamic):
    f = io.BytesIO()
    torch.onnx.export(module.eval(), inputs, f, opset_version=17,
                      input_names=names, output_names=["y"],
                      dynamic_axes={n: {0: "batch"} for n in
                                    names + ["y"]} if dynamic else None)
    return f.getvalue()


def resnest(depth, image, rng):
    _, specs = resnest_generate.generate(depth, image, "unfused")
    params = {k: torch.from_numpy(v) for k, v in
              resnest_reference.random_params(specs, rng).items()}
    return Functional(params, lambda p, x: resnest_reference.resnest(
        p, x, depth))


def fused_count(text, tmp_path):
    src = tmp_path / "imported.mlir"
    src.write_text(text)
    out = subprocess.run([os.path.join(os.environ["GROVE_BIN"], "grove-opt"),
                          str(src), "--grove-fuse-split-attention"],
                         capture_output=True, text=True, check=True).stdout
    return out.count("grove.split_attention "), out.count("grove.softmax ")


def test_resnest_tiny_imports_fuses_and_matches(rng, tmp_path):
    net = resnest("tiny", 32, rng)
    x = rng.standard_normal((3, 3, 32, 32)).astype(np.float32)
    imp = grove.onnx.import_model(export(net, torch.zeros(2, 3, 32, 32),
                                         ["image"], True))
    assert fused_count(imp.text, tmp_path) == (2, 0)
    model = grove.load(grove.compile(imp.text))
    model.load_state_dict(imp.weights)
    expected = net(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(model.forward(x), expected, rtol=1e-4,
                               atol=1e-4)


def test_resnest50_export_fuses_all_16_attentions(rng, tmp_path):
    net = resnest("50", 224, rng)
    imp = grove.onnx.import_model(export(net, torch.zeros(1, 3, 224, 224),
                                         ["image"], True))
    assert fused_count(imp.text, tmp_path) == (16, 0)


def test_bert_masked_lm_imports_and_matches(rng):
    """The whole masked LM: the encoder, the rows at the masked positions
    (a run-time gather by int64 positions), the head and the decoder tied
    to the word embeddings."""
    cfg = bert_generate.Config(layers=1, hidden=32, heads=2, seq=8,
                               vocab=50, batch=2)
    weights = {k: (v + 0.1 * rng.standard_normal(v.shape)).astype(np.float32)
               for k, v in bert_generate.init(
                   cfg, int(rng.integers(1 << 30))).items()}
    net = Functional(bert_reference.from_numpy(weights, torch.float32),
                     lambda p, ids, mask, positions:
                     bert_reference.mlm_logits(p, cfg, ids, positions,
                                               attention_mask=mask))
    imp = grove.onnx.import_model(export(
        net, (torch.zeros(2, 8, dtype=torch.int64), torch.ones(2, 8),
              torch.zeros(3, dtype=torch.int64)),
        ["input_ids", "attention_mask", "positions"], False))
    assert sorted(imp.demoted) == ["input_ids", "positions"]
    model = grove.load(grove.compile(imp.text))
    model.load_state_dict(imp.weights)
    ids = rng.integers(0, 50, (2, 8))
    mask = (rng.random((2, 8)) > 0.2).astype(np.float32)
    positions = rng.choice(16, 3, replace=False)
    expected = net(torch.from_numpy(ids), torch.from_numpy(mask),
                   torch.from_numpy(positions))
    np.testing.assert_allclose(
        model.forward(ids.astype(np.int32), mask,
                      positions.astype(np.int32)),
        expected.detach().numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("pre_ln", [False, True])
def test_bert_encoder_imports_and_matches(rng, pre_ln):
    cfg = bert_generate.Config(layers=2, hidden=32, heads=2, seq=16,
                               vocab=100, batch=2, pre_ln=pre_ln)
    weights = bert_generate.init(cfg, int(rng.integers(1 << 30)))
    # Not the initial ones and zeros: every LayerNorm differs.
    weights = {k: (v + 0.1 * rng.standard_normal(v.shape)).astype(np.float32)
               for k, v in weights.items()}
    params = bert_reference.from_numpy(weights, torch.float32)
    net = Functional(params, lambda p, ids, mask: bert_reference.hidden_states(
        p, cfg, ids, attention_mask=mask))
    onnx_bytes = export(net, (torch.zeros(2, 16, dtype=torch.int64),
                              torch.ones(2, 16)),
                        ["input_ids", "attention_mask"], True)
    imp = grove.onnx.import_model(onnx_bytes)
    assert imp.demoted == ["input_ids"]  # int64 ids are i32 arguments
    # Every weight of the encoder its own param (the MLM head is unused).
    assert len(imp.weights) == len([k for k in weights
                                    if not k.startswith("cls.")])
    model = grove.load(grove.compile(imp.text))
    model.load_state_dict(imp.weights)
    ids = rng.integers(0, 100, (3, 16))
    mask = (rng.random((3, 16)) > 0.2).astype(np.float32)
    expected = net(torch.from_numpy(ids), torch.from_numpy(mask))
    np.testing.assert_allclose(
        model.forward(ids.astype(np.int32), mask),
        expected.detach().numpy(), rtol=1e-4, atol=1e-4)
