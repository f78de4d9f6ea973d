// RUN: grove-opt %s | grove-opt | FileCheck %s

// The typed model descriptor (GroveAttrs.td) and its preconditions print
// and parse back unchanged.

// CHECK: module attributes {grove.abi.model = #grove.abi_model<module = "m", target = "cuda",
// CHECK-SAME: state = [#grove.abi_state<name = "w", type = tensor<4xf32>>, #grove.abi_state<name = "step", type = tensor<i64>, init = -3 : i64>],
// CHECK-SAME: entries = [#grove.abi_entry<name = "f", args = [#grove.abi_state_arg<state = "step", access = write>,
// CHECK-SAME: #grove.abi_tensor<name = "offsets", type = tensor<?xi32>, preconditions = [#grove.forest<children = 1, roots = 2, arity = 2>]>,
// CHECK-SAME: #grove.abi_tensor<name = "children", type = tensor<?xi32>>, #grove.abi_tensor<name = "roots", type = tensor<?xi32>>,
// CHECK-SAME: #grove.abi_tensor<name = "tokens", type = tensor<?x?xi32>, preconditions = [#grove.forest_nodes<offsets = 0>, #grove.below<bound = 7>, #grove.equal_dim<dim = 1, input = 0, input_dim = 0>]>,
// CHECK-SAME: #grove.abi_state_arg<state = "w", access = read>],
// CHECK-SAME: outputs = [#grove.abi_tensor<name = "y", type = tensor<?x4xbf16>>]>]>}
module attributes {grove.abi.model = #grove.abi_model<module = "m", target = "cuda",
    state = [#grove.abi_state<name = "w", type = tensor<4xf32>>,
             #grove.abi_state<name = "step", type = tensor<i64>, init = -3 : i64>],
    entries = [#grove.abi_entry<name = "f", args = [
        #grove.abi_state_arg<state = "step", access = write>,
        #grove.abi_tensor<name = "offsets", type = tensor<?xi32>,
                          preconditions = [#grove.forest<children = 1, roots = 2, arity = 2>]>,
        #grove.abi_tensor<name = "children", type = tensor<?xi32>>,
        #grove.abi_tensor<name = "roots", type = tensor<?xi32>>,
        #grove.abi_tensor<name = "tokens", type = tensor<?x?xi32>,
                          preconditions = [#grove.forest_nodes<offsets = 0>, #grove.below<bound = 7>,
                                           #grove.equal_dim<dim = 1, input = 0, input_dim = 0>]>,
        #grove.abi_state_arg<state = "w", access = read>],
      outputs = [#grove.abi_tensor<name = "y", type = tensor<?x4xbf16>>]>]>} {
}
