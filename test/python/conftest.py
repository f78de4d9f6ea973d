"""Shared fixtures of the Python package's tests: fresh random inputs (the
seed printed, GROVE_TEST_SEED reproduces) and small models compiled once per
session through grove.compile."""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# test/lib's ctypes loader (grove_testing) is the C side of the checkpoint
# test; it runs grovec and links libgrove_rt from the build tree.
sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
os.environ.setdefault("GROVE_BIN", os.path.join(ROOT, "build", "bin"))
os.environ.setdefault("GROVE_LIB", os.path.join(ROOT, "build", "lib"))

MLP = """
module @mlp {
  grove.param @fc1.weight : tensor<32x16xf32>
  grove.param @fc1.bias : tensor<32xf32>
  grove.param @fc2.weight : tensor<4x32xf32>
  grove.param @fc2.bias : tensor<4xf32>
  func.func @forward(%x: tensor<?x16xf32> {grove.name = "x"})
      -> (tensor<?x4xf32> {grove.name = "logits"}) {
    %w1 = grove.get_param @fc1.weight : tensor<32x16xf32>
    %b1 = grove.get_param @fc1.bias : tensor<32xf32>
    %w2 = grove.get_param @fc2.weight : tensor<4x32xf32>
    %b2 = grove.get_param @fc2.bias : tensor<4xf32>
    %h = grove.matmul %x, %w1 {transpose_rhs} : (tensor<?x16xf32>, tensor<32x16xf32>) -> tensor<?x32xf32>
    %hb = grove.add %h, %b1 : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
    %a = grove.relu %hb : tensor<?x32xf32>
    %o = grove.matmul %a, %w2 {transpose_rhs} : (tensor<?x32xf32>, tensor<4x32xf32>) -> tensor<?x4xf32>
    %z = grove.add %o, %b2 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
    return %z : tensor<?x4xf32>
  }
  func.func @train_step(%x: tensor<?x16xf32> {grove.name = "x"},
                        %y: tensor<?xi32> {grove.name = "y"}) -> tensor<f32> {
    %loss, %g:4 = grove.value_and_grad [@fc1.weight, @fc1.bias, @fc2.weight, @fc2.bias] {
      %z = func.call @forward(%x) : (tensor<?x16xf32>) -> tensor<?x4xf32>
      %l = grove.softmax_cross_entropy %z, %y : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<f32>
      grove.yield %l : tensor<f32>
    } : tensor<f32>, tensor<32x16xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<4xf32>
    grove.sgd [@fc1.weight, @fc1.bias, @fc2.weight, @fc2.bias] (%g#0, %g#1, %g#2, %g#3) {lr = 0.1 : f64, momentum = 0.9 : f64}
        : tensor<32x16xf32>, tensor<32xf32>, tensor<4x32xf32>, tensor<4xf32>
    return %loss : tensor<f32>
  }
}
"""
MLP_WEIGHTS = {"fc1.weight": (32, 16), "fc1.bias": (32,),
               "fc2.weight": (4, 32), "fc2.bias": (4,)}


@pytest.fixture(scope="session")
def rng():
    seed = int(os.environ.get("GROVE_TEST_SEED",
                              np.random.SeedSequence().entropy % (2**32)))
    print(f"seed {seed}", file=sys.stderr)
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def mlp_library(tmp_path_factory):
    import grove
    return grove.compile(MLP, output_dir=str(tmp_path_factory.mktemp("mlp")))


@pytest.fixture
def mlp_weights(rng):
    return {n: (rng.standard_normal(s) * 0.3).astype(np.float32)
            for n, s in MLP_WEIGHTS.items()}


def mlp_forward(w, x):
    """The MLP in numpy, float64."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    h = np.maximum(x @ w["fc1.weight"].T + w["fc1.bias"], 0)
    return h @ w["fc2.weight"].T + w["fc2.bias"]
