// RUN: grove-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the tree ops' verifiers (GroveTreeOps.cpp).

func.func @arity(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{arity must be 0 (child-sum) or the most children a node has, got -1}}
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = -1 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      grove.yield %a : tensor<?x4xf32>
    }
  return
}

// -----

func.func @odd(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{needs a pair of results per state (every node's, then the roots'), got 1 results}}
  %h = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>)
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      grove.yield %a : tensor<?x4xf32>
    }
  return
}

// -----

func.func @state_types(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{state 0 must have one type for nodes and roots, with a dynamic dimension 0 and static others; got 'tensor<?x4xf32>' and 'tensor<3x4xf32>'}}
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<3x4xf32>)
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      grove.yield %a : tensor<?x4xf32>
    }
  return
}

// -----

func.func @input_rows(%o: tensor<?xi32>, %x: tensor<5x4xf32>) {
  // expected-error @+1 {{inputs must have a dynamic dimension 0 (one row a node) and static others, got 'tensor<5x4xf32>'}}
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<5x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%a: tensor<5x4xf32>, %b: tensor<?x4xf32>):
      grove.yield %b : tensor<?x4xf32>
    }
  return
}

// -----

func.func @edge_nary(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{an edge cell needs the child-sum form (arity 0)}}
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 1 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    edge {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      grove.yield %a : tensor<?x4xf32>
    }
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      grove.yield %a : tensor<?x4xf32>
    }
  return
}

// -----

func.func @node_args(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{the node cell must take ('tensor<?x4xf32>', 'tensor<?x4xf32>', 'tensor<?x4xf32>') (inputs, what the children give, captures), got ('tensor<?x4xf32>', 'tensor<?x4xf32>')}}
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 2 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      grove.yield %a : tensor<?x4xf32>
    }
  return
}

// -----

func.func @node_yield(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{the node cell must yield the states' types ('tensor<?x4xf32>')}}
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      grove.yield %a, %b : tensor<?x4xf32>, tensor<?x4xf32>
    }
  return
}

// -----

grove.param @w : tensor<4x4xf32>
func.func @param_in_cell(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      // expected-error @+1 {{cannot be in the node cell of grove.tree_fold: pass params to the cell as captures}}
      %w = grove.get_param @w : tensor<4x4xf32>
      grove.yield %a : tensor<?x4xf32>
    }
  return
}

// -----

func.func @mixes_rows(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      // expected-error @+1 {{mixes the rows of different nodes in the node cell of grove.tree_fold}}
      %m = grove.reduce_mean %a {axes = array<i64: 0>, keepdims} : tensor<?x4xf32> -> tensor<1x4xf32>
      %s = grove.add %b, %m : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
      grove.yield %s : tensor<?x4xf32>
    }
  return
}

// -----

func.func @rows_as_rhs(%o: tensor<?xi32>, %x: tensor<?x4xf32>, %w: tensor<4x?xf32>) {
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) captures(%w : tensor<4x?xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %c: tensor<4x?xf32>):
      // expected-error @+1 {{mixes the rows of different nodes}}
      %m = grove.matmul %c, %a : (tensor<4x?xf32>, tensor<?x4xf32>) -> tensor<4x4xf32>
      grove.yield %a : tensor<?x4xf32>
    }
  return
}

// -----

func.func @messages(%o: tensor<?xi32>, %x: tensor<?x4xf32>, %c: tensor<3x4xf32>) {
  // expected-error @+1 {{the edge cell's messages must be float tensors with a dynamic dimension 0 and static others, got 'tensor<3x4xf32>'}}
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) captures(%c : tensor<3x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    edge {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %cc: tensor<3x4xf32>):
      grove.yield %cc : tensor<3x4xf32>
    }
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<3x4xf32>, %cc: tensor<3x4xf32>):
      grove.yield %a : tensor<?x4xf32>
    }
  return
}

// -----

func.func @gather(%h: tensor<?x4xf32>, %i: tensor<?xi32>) {
  // expected-error @+1 {{result must be the input's rows, one per index}}
  %g = grove.gather %h, %i : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<?x5xf32>
  return
}

// -----

func.func @forest_operands(%o: tensor<?xi64>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{operand #0 must be 1D tensor of 32-bit signless integer values}}
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
      : (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      grove.yield %a : tensor<?x4xf32>
    }
  return
}

// -----

func.func @segment_sum(%h: tensor<?x4xf32>, %o: tensor<?xi32>) {
  // expected-error @+1 {{result must be the input's rows, one per segment (a dynamic dimension 0)}}
  %s = grove.segment_sum %h, %o : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @yields_capture(%o: tensor<?xi32>, %x: tensor<?x4xf32>, %c: tensor<?x4xf32>) {
  // expected-error @+1 {{the node cell must yield values computed from its per-node arguments (one row per node)}}
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) captures(%c : tensor<?x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %cc: tensor<?x4xf32>):
      grove.yield %cc : tensor<?x4xf32>
    }
  return
}

// -----

func.func @flatten_rows(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  %h, %r = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
      : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?xf32>, tensor<?xf32>)
    node {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?xf32>):
      // expected-error @+1 {{mixes the rows of different nodes}}
      %f = grove.flatten %a {axis = 0 : i64} : (tensor<?x4xf32>) -> tensor<?xf32>
      grove.yield %f : tensor<?xf32>
    }
  return
}

// -----

func.func @grad_regions(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{the node_grad region must take the cell's arguments and one cotangent per cell result}}
  %d = grove.tree_fold_grad %o, %o, %o inputs(%x : tensor<?x4xf32>)
      states(%x : tensor<?x4xf32>) cotangents(%x : tensor<?x4xf32>) root_cotangents(%x : tensor<?x4xf32>)
      {arity = 0 : i64} : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>)
    node_grad {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      grove.yield %a, %b : tensor<?x4xf32>, tensor<?x4xf32>
    }
  return
}

// -----

// The gradient has its fold's form: an edge cell only with arity 0.
func.func @grad_edge_nary(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{an edge cell needs the child-sum form (arity 0)}}
  %d = grove.tree_fold_grad %o, %o, %o inputs(%x : tensor<?x4xf32>)
      states(%x : tensor<?x4xf32>) cotangents(%x : tensor<?x4xf32>) root_cotangents(%x : tensor<?x4xf32>)
      {arity = 1 : i64} : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>)
    edge {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>):
      grove.yield %b : tensor<?x4xf32>
    }
    node_grad {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %db: tensor<?x4xf32>):
      grove.yield %a, %db : tensor<?x4xf32>, tensor<?x4xf32>
    }
    edge_grad {
    ^bb0(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>, %dm: tensor<?x4xf32>):
      grove.yield %a, %dm : tensor<?x4xf32>, tensor<?x4xf32>
    }
  return
}

// -----

func.func @grad_arity(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{arity must be 0 (child-sum) or the most children a node has, got -2}}
  %d = grove.tree_fold_grad %o, %o, %o inputs(%x : tensor<?x4xf32>)
      states(%x : tensor<?x4xf32>) cotangents(%x : tensor<?x4xf32>) root_cotangents(%x : tensor<?x4xf32>)
      {arity = -2 : i64} : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>)
    node_grad {
    ^bb0(%a: tensor<?x4xf32>, %da: tensor<?x4xf32>):
      grove.yield %a : tensor<?x4xf32>
    }
  return
}
