// RUN: grove-opt %s -grove-batch-dynamic-trees=unsupported-target=cuda -verify-diagnostics

// The CUDA pipeline passes its target: a fold there is an error (its
// schedule and group loop run on the host), not a library that fails.
func.func @fold(%off: tensor<?xi32>, %ch: tensor<?xi32>, %roots: tensor<?xi32>,
                %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{grove.tree_fold cannot be compiled for --target=cuda yet}}
  %h, %hr = grove.tree_fold %off, %ch, %roots inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%xi: tensor<?x4xf32>, %hs: tensor<?x4xf32>):
      %s = grove.add %xi, %hs : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
      grove.yield %s : tensor<?x4xf32>
    }
  return %hr : tensor<?x4xf32>
}
