// RUN: grove-opt %s -split-input-file -verify-diagnostics

// The model attribute's verifier is the descriptor's own validator
// (grove/ModelSchema.h): the IR holds no descriptor the runtime refuses.

// expected-error @+1 {{invalid model descriptor at entries[0].inputs[0].preconditions[0]: input 'x': a bound ('below') needs an integer dtype}}
module attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [], entries = [#grove.abi_entry<name = "f", args = [#grove.abi_tensor<name = "x", type = tensor<?xf32>, preconditions = [#grove.below<bound = 3>]>], outputs = []>]>} {
}

// -----

// expected-error @+1 {{invalid model descriptor at state[1]: duplicate name 'w'}}
module attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [#grove.abi_state<name = "w", type = tensor<4xf32>>, #grove.abi_state<name = "w", type = tensor<4xf32>>], entries = []>} {
}

// -----

// expected-error @+1 {{entry 'f' uses undeclared state 'v'}}
module attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [], entries = [#grove.abi_entry<name = "f", args = [#grove.abi_state_arg<state = "v", access = read>], outputs = []>]>} {
}

// -----

// expected-error @+1 {{'state' holds 5 : i64, which is no #grove.abi_state}}
module attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [5], entries = []>} {
}

// -----

// expected-error @+1 {{input 'x': 'equal_dim' names input 0 dimension 0, which is no dynamic dimension of an earlier input}}
module attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [], entries = [#grove.abi_entry<name = "f", args = [#grove.abi_tensor<name = "x", type = tensor<?xf32>, preconditions = [#grove.equal_dim<dim = 0, input = 0, input_dim = 0>]>], outputs = []>]>} {
}

// -----

// expected-error @+1 {{'x' has element type complex<f32>, which cannot cross the ABI}}
module attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [#grove.abi_state<name = "x", type = tensor<2xcomplex<f32>>>], entries = []>} {
}

// -----

// expected-error @+1 {{invalid model descriptor at target: expected "host" or "cuda"}}
module attributes {grove.abi.model = #grove.abi_model<module = "m", target = "tpu", state = [], entries = []>} {
}

// -----

// expected-error @+1 {{state 'x' has an init wider than 64 bits}}
module attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [#grove.abi_state<name = "x", type = tensor<2xf32>, init = 18446744073709551616 : i128>], entries = []>} {
}
