"""The LSTM language model (models/lstm_lm: nn.LSTM, a grove.tree_fold
over a forest of chains) against PyTorch's nn.LSTM on fresh random
sequences: every position's logits, the loss and two SGD steps (1e-4)."""
import os
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import grove
from grove import nn

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "models", "lstm_lm"))
import generate  # noqa: E402

V, E, H, B, T = 37, 6, 5, 3, 7
TOL = dict(rtol=1e-4, atol=1e-4)


def test_chains():
    offsets, children, roots = nn.chains(2, 3)
    # Nodes 0-2 and 3-5; each node but a chain's first has its
    # predecessor as its one child.
    assert offsets.tolist() == [0, 0, 1, 2, 2, 3, 4]
    assert children.tolist() == [0, 1, 3, 4]
    assert roots.tolist() == [2, 5]
    assert all(a.dtype == np.int32 for a in (offsets, children, roots))


class TorchLM(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        d = lambda k: torch.from_numpy(np.asarray(w[k], np.float64))  # noqa
        self.embed = torch.nn.Parameter(d("embed.weight"))
        self.lstm = torch.nn.LSTM(E, H, batch_first=True).double()
        with torch.no_grad():
            self.lstm.weight_ih_l0.copy_(d("lstm.W").T)
            self.lstm.weight_hh_l0.copy_(d("lstm.U").T)
            self.lstm.bias_ih_l0.copy_(d("lstm.b"))
            self.lstm.bias_hh_l0.zero_()
        # One bias, as nn.LSTM's b: torch's second would double its step.
        self.lstm.bias_hh_l0.requires_grad_(False)
        self.dec_w = torch.nn.Parameter(d("decoder.weight"))
        self.dec_b = torch.nn.Parameter(d("decoder.bias"))

    def forward(self, tokens):
        h, _ = self.lstm(self.embed[torch.from_numpy(tokens).long()])
        return F.linear(h.reshape(-1, H), self.dec_w, self.dec_b)


@pytest.fixture(scope="module")
def lm(rng):
    text = generate.module(V, E, H, optimizer="sgd", lr=0.5)
    m = grove.load(grove.compile(text))
    weights = {p.name: rng.uniform(-0.4, 0.4, p.shape).astype(np.float32)
               for p in m.params if p.kind == "weight"}
    m.load_state_dict(weights)
    return m, weights


def test_forward_and_loss_match_torch(lm, rng):
    model, weights = lm
    ref = TorchLM(weights)
    tokens = rng.integers(0, V, (B, T)).astype(np.int32)
    targets = rng.integers(0, V, (B, T)).astype(np.int32)
    forest = nn.chains(B, T)
    logits = ref(tokens)
    np.testing.assert_allclose(model.forward(*forest, tokens.reshape(-1)),
                               logits.detach().numpy(), **TOL)
    loss = F.cross_entropy(logits, torch.from_numpy(targets).long().ravel())
    np.testing.assert_allclose(
        model.loss(*forest, tokens.reshape(-1), targets.reshape(-1)),
        loss.item(), **TOL)


def test_sgd_steps_match_torch(lm, rng):
    model, weights = lm
    model.load_state_dict(weights)
    ref = TorchLM(weights)
    opt = torch.optim.SGD(ref.parameters(), lr=0.5)
    forest = nn.chains(B, T)
    for _ in range(2):
        tokens = rng.integers(0, V, (B, T)).astype(np.int32)
        targets = rng.integers(0, V, (B, T)).astype(np.int32)
        loss = F.cross_entropy(ref(tokens),
                               torch.from_numpy(targets).long().ravel())
        opt.zero_grad()
        loss.backward()
        opt.step()
        np.testing.assert_allclose(
            model.train_step(*forest, tokens.reshape(-1), targets.reshape(-1)),
            loss.item(), **TOL)
    lstm = ref.lstm
    expected = {
        "embed.weight": ref.embed, "decoder.weight": ref.dec_w,
        "decoder.bias": ref.dec_b, "lstm.W": lstm.weight_ih_l0.T,
        "lstm.U": lstm.weight_hh_l0.T,
        "lstm.b": lstm.bias_ih_l0 + lstm.bias_hh_l0}
    for k, p in expected.items():
        np.testing.assert_allclose(model[k], p.detach().numpy(), **TOL,
                                   err_msg=k)
