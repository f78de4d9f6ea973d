// RUN: grove-opt %s -split-input-file --convert-grove-checks-to-runtime -verify-diagnostics

// expected-error @+1 {{symbol @grove_rt_dim_mismatch is reserved for the runtime service of type}}
func.func private @grove_rt_dim_mismatch(i64)
func.func @f(%a: index, %b: index) -> index {
  %0 = grove.agree_dims %a, %b, "sizes" : index
  return %0 : index
}

// -----

// expected-error @+1 {{symbol @grove_rt_world_size is reserved for the runtime service of type}}
func.func private @grove_rt_world_size() -> i32
func.func @f() -> index {
  %0 = grove.world_size : index
  return %0 : index
}
