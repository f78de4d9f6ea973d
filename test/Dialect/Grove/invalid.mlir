// RUN: grove-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the grove verifiers (GroveOps.cpp,
// GroveNNOps.cpp) and of the ODS constraints they rely on.

//===----------------------------------------------------------------------===//
// grove.param
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'grove.param' op expects a ranked tensor type (got 'tensor<*xf32>')}}
grove.param @unranked : tensor<*xf32>

// -----

// expected-error @+1 {{'grove.param' op expects a ranked tensor type (got 'memref<4xf32>')}}
grove.param @memref : memref<4xf32>

// -----

// expected-error @+1 {{'grove.param' op expects a ranked tensor type (got 'f32')}}
grove.param @scalar : f32

// -----

// expected-error @+1 {{'grove.param' op expects a static shape (got 'tensor<?x4xf32>')}}
grove.param @dynamic : tensor<?x4xf32>

// -----

// expected-error @+1 {{'grove.param' op expects an f32, f16, bf16, f64, i1, i8, i16, i32 or i64 element type (got 'ui8')}}
grove.param @unsigned : tensor<4xui8>

// -----

// expected-error @+1 {{'grove.param' op expects an f32, f16, bf16, f64, i1, i8, i16, i32 or i64 element type (got 'index')}}
grove.param @index : tensor<4xindex>

// -----

// expected-error @+1 {{'grove.param' op expects an f32, f16, bf16, f64, i1, i8, i16, i32 or i64 element type (got 'f8E4M3FN')}}
grove.param @fp8 : tensor<4xf8E4M3FN>

// -----

// expected-error @+1 {{'grove.param' op expects an f32, f16, bf16, f64, i1, i8, i16, i32 or i64 element type (got 'complex<f32>')}}
grove.param @complex : tensor<4xcomplex<f32>>

// -----

// expected-note @+1 {{see existing symbol definition here}}
grove.param @twice : tensor<4xf32>
// expected-error @+1 {{redefinition of symbol named 'twice'}}
grove.param @twice : tensor<4xf32>

//===----------------------------------------------------------------------===//
// grove.get_param
//===----------------------------------------------------------------------===//

// -----

func.func @get_undefined() -> tensor<4xf32> {
  // expected-error @+1 {{'grove.get_param' op references an undefined grove.param @missing}}
  %0 = grove.get_param @missing : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A symbol that exists but is not a grove.param.
func.func private @not_a_param()
func.func @get_not_a_param() -> tensor<4xf32> {
  // expected-error @+1 {{'grove.get_param' op references an undefined grove.param @not_a_param}}
  %0 = grove.get_param @not_a_param : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

grove.param @w : tensor<8xf32>
func.func @get_wrong_shape() -> tensor<4xf32> {
  // expected-error @+1 {{'grove.get_param' op result type 'tensor<4xf32>' does not match the type of @w ('tensor<8xf32>')}}
  %0 = grove.get_param @w : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

grove.param @w : tensor<8xf32>
func.func @get_wrong_element_type() -> tensor<8xf16> {
  // expected-error @+1 {{'grove.get_param' op result type 'tensor<8xf16>' does not match the type of @w ('tensor<8xf32>')}}
  %0 = grove.get_param @w : tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

func.func @get_unranked() {
  // expected-error @+1 {{'grove.get_param' op result #0 must be ranked tensor of}}
  %0 = "grove.get_param"() <{name = @w}> : () -> tensor<*xf32>
  return
}

//===----------------------------------------------------------------------===//
// grove.constant
//===----------------------------------------------------------------------===//

// -----

// ConstantOp::verify's "expects a ranked tensor value" cannot fire: the
// AllTypesMatch and result-type constraints reject a non-tensor value first.
func.func @constant_vector() {
  // expected-error @+1 {{'grove.constant' op result #0 must be ranked tensor of}}
  %0 = grove.constant dense<1.0> : vector<2xf32>
  return
}

// -----

func.func @constant_type_mismatch() {
  // expected-error @+1 {{'grove.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "grove.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return
}

// -----

func.func @constant_not_elements() {
  // expected-error @+1 {{invalid properties {value = 1.000000e+00 : f32} for op grove.constant}}
  %0 = "grove.constant"() <{value = 1.0 : f32}> : () -> tensor<f32>
  return
}

// -----

func.func @constant_i128() {
  // expected-error @+1 {{'grove.constant' op result #0 must be ranked tensor of}}
  %0 = grove.constant dense<1> : tensor<2xi128>
  return
}

//===----------------------------------------------------------------------===//
// grove.reshape
//===----------------------------------------------------------------------===//

// -----

func.func @reshape_element_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.reshape' op expects the same element type (got 'f32' and 'f16')}}
  %0 = grove.reshape %x : tensor<4xf32> -> tensor<2x2xf16>
  return
}

// -----

func.func @reshape_two_dynamic(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'grove.reshape' op expects at most one dynamic result dimension (got 2)}}
  %0 = grove.reshape %x : tensor<?x4xf32> -> tensor<?x2x?xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.reshape' op expects the same number of elements (got 6 for 2x3 and 8 for 2x4)}}
  %0 = grove.reshape %x : tensor<2x3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @reshape_scalar_count(%x: tensor<f32>) {
  // expected-error @+1 {{'grove.reshape' op expects the same number of elements (got 1 for scalar and 2 for 2)}}
  %0 = grove.reshape %x : tensor<f32> -> tensor<2xf32>
  return
}

// -----

func.func @reshape_not_multiple(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'grove.reshape' op cannot infer the dynamic result dimension: 12 elements are not a multiple of 5}}
  %0 = grove.reshape %x : tensor<2x6xf32> -> tensor<?x5xf32>
  return
}

// -----

func.func @reshape_zero_static(%x: tensor<0x4xf32>) {
  // expected-error @+1 {{'grove.reshape' op cannot infer the dynamic result dimension next to a static dimension of size 0}}
  %0 = grove.reshape %x : tensor<0x4xf32> -> tensor<?x0xf32>
  return
}

// -----

func.func @reshape_dynamic_to_static(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'grove.reshape' op expects a dynamic result dimension when the input has one (got ?x4 -> 2x4)}}
  %0 = grove.reshape %x : tensor<?x4xf32> -> tensor<2x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// grove.transpose
//===----------------------------------------------------------------------===//

// -----

func.func @transpose_perm_size(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.transpose' op expects a permutation of 2 dimensions (got 3)}}
  %0 = grove.transpose %x [1, 0, 2] : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}

// -----

func.func @transpose_perm_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.transpose' op expects permutation to be a permutation of [0, 2) (got 2)}}
  %0 = grove.transpose %x [2, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}

// -----

func.func @transpose_perm_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.transpose' op expects permutation to be a permutation of [0, 2) (got -1)}}
  %0 = grove.transpose %x [-1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}

// -----

func.func @transpose_perm_repeated(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.transpose' op expects permutation to be a permutation of [0, 2) (got 1)}}
  %0 = grove.transpose %x [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @transpose_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.transpose' op expects the same element type}}
  %0 = grove.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xbf16>
  return
}

// -----

func.func @transpose_result_rank(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.transpose' op expects the result rank 2 (got 3)}}
  %0 = grove.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2x1xf32>
  return
}

// -----

func.func @transpose_result_dim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.transpose' op expects result dimension 0 to be input dimension 1 (3), got 2}}
  %0 = grove.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_result_dim_dynamic(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{'grove.transpose' op expects result dimension 1 to be input dimension 0 (?), got 2}}
  %0 = grove.transpose %x [1, 0] : tensor<?x3xf32> -> tensor<3x2xf32>
  return
}

//===----------------------------------------------------------------------===//
// grove.concat
//===----------------------------------------------------------------------===//

// -----

func.func @concat_no_inputs() {
  // expected-error @+1 {{'grove.concat' op expects at least one input}}
  %0 = grove.concat {axis = 0 : i64} : () -> tensor<0xf32>
  return
}

// -----

func.func @concat_rank0(%x: tensor<f32>) {
  // expected-error @+1 {{'grove.concat' op expects inputs of rank at least 1}}
  %0 = grove.concat %x, %x {axis = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @concat_axis_too_large(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.concat' op expects axis in [0, 2) (got 2)}}
  %0 = grove.concat %x, %x {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

// Unlike softmax and the reductions, concat takes no negative axis.
func.func @concat_axis_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.concat' op expects axis in [0, 2) (got -1)}}
  %0 = grove.concat %x, %x {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_element_type(%x: tensor<2x3xf32>, %y: tensor<2x3xf16>) {
  // expected-error @+1 {{'grove.concat' op expects all operands and results to have element type 'f32' (got 'f16')}}
  %0 = grove.concat %x, %y {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_result_element_type(%x: tensor<2x3xi32>) {
  // expected-error @+1 {{'grove.concat' op expects all operands and results to have element type 'i32' (got 'i64')}}
  %0 = grove.concat %x, %x {axis = 0 : i64} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<4x3xi64>
  return
}

// -----

func.func @concat_input_rank(%x: tensor<2x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'grove.concat' op expects every input to have rank 2 (input 1 has rank 1)}}
  %0 = grove.concat %x, %y {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @concat_dim_mismatch(%x: tensor<2x3xf32>, %y: tensor<2x4xf32>) {
  // expected-error @+1 {{'grove.concat' op expects input 1 dimension 1 to be 3 (got 4)}}
  %0 = grove.concat %x, %y {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_dim_dynamic_mismatch(%x: tensor<2x3xf32>, %y: tensor<2x?xf32>) {
  // expected-error @+1 {{'grove.concat' op expects input 1 dimension 1 to be dynamic exactly when the result's is}}
  %0 = grove.concat %x, %y {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x?xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_axis_size(%x: tensor<2x3xf32>, %y: tensor<2x5xf32>) {
  // expected-error @+1 {{'grove.concat' op expects result dimension 1 to be 8 (got 7)}}
  %0 = grove.concat %x, %y {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x7xf32>
  return
}

// -----

func.func @concat_axis_size_dynamic(%x: tensor<2x3xf32>, %y: tensor<2x?xf32>) {
  // expected-error @+1 {{'grove.concat' op expects result dimension 1 to be ? (got 8)}}
  %0 = grove.concat %x, %y {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x?xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @concat_axis_size_static(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.concat' op expects result dimension 1 to be 6 (got ?)}}
  %0 = grove.concat %x, %x {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x?xf32>
  return
}

// -----

func.func @concat_missing_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.concat' op requires attribute 'axis'}}
  %0 = "grove.concat"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// grove.slice
//===----------------------------------------------------------------------===//

// -----

func.func @slice_attr_sizes(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'grove.slice' op expects 2 starts, limits and strides (got 2, 1, 2)}}
  %0 = grove.slice %x [0, 0] [4] [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_element_type(%x: tensor<8xf32>) {
  // expected-error @+1 {{'grove.slice' op expects the same element type}}
  %0 = grove.slice %x [0] [4] [1] : tensor<8xf32> -> tensor<4xf16>
  return
}

// -----

func.func @slice_result_rank(%x: tensor<8xf32>) {
  // expected-error @+1 {{'grove.slice' op expects result rank 1}}
  %0 = grove.slice %x [0] [4] [1] : tensor<8xf32> -> tensor<1x4xf32>
  return
}

// -----

func.func @slice_zero_stride(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'grove.slice' op expects positive strides (got 0 in dimension 1)}}
  %0 = grove.slice %x [0, 0] [4, 8] [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_negative_stride(%x: tensor<8xf32>) {
  // expected-error @+1 {{'grove.slice' op expects positive strides (got -1 in dimension 0)}}
  %0 = grove.slice %x [7] [-1] [-1] : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @slice_negative_start(%x: tensor<8xf32>) {
  // expected-error @+1 {{'grove.slice' op expects non-negative starts (got -2 in dimension 0)}}
  %0 = grove.slice %x [-2] [-1] [1] : tensor<8xf32> -> tensor<2xf32>
  return
}

// -----

func.func @slice_limit_before_start(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'grove.slice' op expects limit >= start in dimension 1 (got 5 to 3)}}
  %0 = grove.slice %x [0, 5] [4, 3] [1, 1] : tensor<4x8xf32> -> tensor<4x0xf32>
  return
}

// -----

// -1 is the only negative limit meaning "to the end".
func.func @slice_limit_minus_two(%x: tensor<?xf32>) {
  // expected-error @+1 {{'grove.slice' op expects limit >= start in dimension 0 (got 0 to -2)}}
  %0 = grove.slice %x [0] [-2] [1] : tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @slice_limit_out_of_bounds(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'grove.slice' op slice [2, 9) is out of bounds for dimension 1 of size 8}}
  %0 = grove.slice %x [0, 2] [4, 9] [1, 1] : tensor<4x8xf32> -> tensor<4x7xf32>
  return
}

// -----

func.func @slice_start_out_of_bounds(%x: tensor<8xf32>) {
  // expected-error @+1 {{'grove.slice' op slice [9, -1) is out of bounds for dimension 0 of size 8}}
  %0 = grove.slice %x [9] [-1] [1] : tensor<8xf32> -> tensor<0xf32>
  return
}

// -----

func.func @slice_result_dim(%x: tensor<8xf32>) {
  // expected-error @+1 {{'grove.slice' op expects result dimension 0 to be 3 (got 4)}}
  %0 = grove.slice %x [1] [8] [3] : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @slice_result_dim_dynamic(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'grove.slice' op expects result dimension 0 to be ? (got 4)}}
  %0 = grove.slice %x [0, 0] [-1, 8] [1, 1] : tensor<?x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_result_dim_static(%x: tensor<?x8xf32>) {
  // A static limit inside a dynamic dimension would be trusted, not known.
  // expected-error @+1 {{'grove.slice' op dimension 0 is dynamic: slice it to the end (limit -1) or cast it to a static size first (tensor.cast)}}
  %0 = grove.slice %x [1, 0] [3, 8] [1, 1] : tensor<?x8xf32> -> tensor<?x8xf32>
  return
}

//===----------------------------------------------------------------------===//
// grove.broadcast_to
//===----------------------------------------------------------------------===//

// -----

func.func @broadcast_element_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.broadcast_to' op expects the same element type}}
  %0 = grove.broadcast_to %x : tensor<4xf32> -> tensor<2x4xf16>
  return
}

// -----

func.func @broadcast_lower_rank(%x: tensor<2x4xf32>) {
  // expected-error @+1 {{'grove.broadcast_to' op cannot broadcast rank 2 to the lower rank 1}}
  %0 = grove.broadcast_to %x : tensor<2x4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @broadcast_missing_size(%x: tensor<4xf32>, %n: index) {
  // expected-error @+1 {{'grove.broadcast_to' op expects one size operand per dynamic result dimension (2), got 1}}
  %0 = grove.broadcast_to %x (%n) : tensor<4xf32> -> tensor<?x?x4xf32>
  return
}

// -----

func.func @broadcast_extra_size(%x: tensor<4xf32>, %n: index) {
  // expected-error @+1 {{'grove.broadcast_to' op expects one size operand per dynamic result dimension (0), got 1}}
  %0 = grove.broadcast_to %x (%n) : tensor<4xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @broadcast_dim(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'grove.broadcast_to' op cannot broadcast input dimension 1 (4) to 5: it must be 1 or equal}}
  %0 = grove.broadcast_to %x : tensor<3x4xf32> -> tensor<2x3x5xf32>
  return
}

// -----

func.func @broadcast_dim_static_to_dynamic(%x: tensor<4xf32>, %n: index) {
  // expected-error @+1 {{'grove.broadcast_to' op cannot broadcast input dimension 0 (4) to ?: it must be 1 or equal}}
  %0 = grove.broadcast_to %x (%n) : tensor<4xf32> -> tensor<?xf32>
  return
}

// -----

func.func @broadcast_dim_dynamic_to_static(%x: tensor<?xf32>) {
  // expected-error @+1 {{'grove.broadcast_to' op cannot broadcast input dimension 0 (?) to 4: it must be 1 or equal}}
  %0 = grove.broadcast_to %x : tensor<?xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @broadcast_size_not_index(%x: tensor<4xf32>, %n: i32) {
  // expected-error @+1 {{'grove.broadcast_to' op operand #1 must be variadic of index, but got 'i32'}}
  %0 = "grove.broadcast_to"(%x, %n) : (tensor<4xf32>, i32) -> tensor<?x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

// -----

func.func @add_integer(%x: tensor<4xi32>) {
  // expected-error @+1 {{'grove.add' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = grove.add %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @mul_f64(%x: tensor<4xf32>, %y: tensor<4xf64>) {
  // expected-error @+1 {{'grove.mul' op expects all operands and results to have element type 'f32' (got 'f64')}}
  %0 = grove.mul %x, %y : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

func.func @sub_integer_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.sub' op result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = grove.sub %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>
  return
}

// -----

func.func @div_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{'grove.div' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<*xf32>'}}
  %0 = "grove.div"(%x, %x) : (tensor<*xf32>, tensor<*xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @add_element_type(%x: tensor<4xf32>, %y: tensor<4xf16>) {
  // expected-error @+1 {{'grove.add' op expects all operands and results to have element type 'f32' (got 'f16')}}
  %0 = grove.add %x, %y : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @max_result_element_type(%x: tensor<4xbf16>) {
  // expected-error @+1 {{'grove.max' op expects all operands and results to have element type 'bf16' (got 'f32')}}
  %0 = grove.max %x, %x : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @sub_incompatible(%x: tensor<2x3xf32>, %y: tensor<2x4xf32>) {
  // expected-error @+1 {{'grove.sub' op operand shapes 2x3 and 2x4 are not broadcast-compatible}}
  %0 = grove.sub %x, %y : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @min_incompatible_trailing(%x: tensor<3xf32>, %y: tensor<4x2xf32>) {
  // expected-error @+1 {{'grove.min' op operand shapes 3 and 4x2 are not broadcast-compatible}}
  %0 = grove.min %x, %y : (tensor<3xf32>, tensor<4x2xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @mul_result_shape(%x: tensor<3x1xf32>, %y: tensor<1x4xf32>) {
  // expected-error @+1 {{'grove.mul' op expects result shape 3x4 (got 3x1)}}
  %0 = grove.mul %x, %y : (tensor<3x1xf32>, tensor<1x4xf32>) -> tensor<3x1xf32>
  return
}

// -----

func.func @div_result_rank(%x: tensor<4xf32>, %y: tensor<f32>) {
  // expected-error @+1 {{'grove.div' op expects result shape 4 (got 1x4)}}
  %0 = grove.div %x, %y : (tensor<4xf32>, tensor<f32>) -> tensor<1x4xf32>
  return
}

// -----

// A `?` meeting a static size takes the static size: the result is static.
func.func @add_result_dynamic(%x: tensor<?xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'grove.add' op expects result shape 4 (got ?)}}
  %0 = grove.add %x, %y : (tensor<?xf32>, tensor<4xf32>) -> tensor<?xf32>
  return
}

// -----

// A static 1 stretches to `?`, so the result dimension stays dynamic.
func.func @max_result_static(%x: tensor<?x4xf32>, %y: tensor<1x4xf32>) {
  // expected-error @+1 {{'grove.max' op expects result shape ?x4 (got 1x4)}}
  %0 = grove.max %x, %y : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @min_scalar_result(%x: tensor<f32>) {
  // expected-error @+1 {{'grove.min' op expects result shape scalar (got 1)}}
  %0 = grove.min %x, %x : (tensor<f32>, tensor<f32>) -> tensor<1xf32>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

// -----

func.func @relu_integer(%x: tensor<4xi32>) {
  // expected-error @+1 {{'grove.relu' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = grove.relu %x : tensor<4xi32>
  return
}

// -----

func.func @exp_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = grove.exp %x : tensor<*xf32>
  return
}

// -----

func.func @sigmoid_type_change(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.sigmoid' op requires the same type for all operands and results}}
  %0 = "grove.sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @tanh_shape_change(%x: tensor<4xf32>) {
  // SameOperandsAndResultType accepts compatible shapes; the inferred return
  // type then rejects the change of shape.
  // expected-error @+2 {{'grove.tanh' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<?xf32>'}}
  // expected-error @+1 {{'grove.tanh' op failed to infer returned types}}
  %0 = "grove.tanh"(%x) : (tensor<4xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @log_i16(%x: tensor<4xi16>) {
  // expected-error @+1 {{'grove.log' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi16>'}}
  %0 = grove.log %x : tensor<4xi16>
  return
}

// -----

func.func @sqrt_two_operands(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.sqrt' op requires a single operand}}
  %0 = "grove.sqrt"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @gelu_integer(%x: tensor<4xi8>) {
  // expected-error @+1 {{'grove.gelu' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi8>'}}
  %0 = grove.gelu %x : tensor<4xi8>
  return
}

//===----------------------------------------------------------------------===//
// grove.matmul
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_integer(%x: tensor<2x2xi32>) {
  // expected-error @+1 {{'grove.matmul' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<2x2xi32>'}}
  %0 = grove.matmul %x, %x : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  return
}

// -----

func.func @matmul_element_type(%x: tensor<2x3xf32>, %y: tensor<3x4xbf16>) {
  // expected-error @+1 {{'grove.matmul' op expects all operands and results to have element type 'f32' (got 'bf16')}}
  %0 = grove.matmul %x, %y : (tensor<2x3xf32>, tensor<3x4xbf16>) -> tensor<2x4xf32>
  return
}

// -----

func.func @matmul_result_element_type(%x: tensor<2x3xf16>, %y: tensor<3x4xf16>) {
  // expected-error @+1 {{'grove.matmul' op expects all operands and results to have element type 'f16' (got 'f32')}}
  %0 = grove.matmul %x, %y : (tensor<2x3xf16>, tensor<3x4xf16>) -> tensor<2x4xf32>
  return
}

// -----

func.func @matmul_rank_1(%x: tensor<3xf32>, %y: tensor<3x4xf32>) {
  // expected-error @+1 {{'grove.matmul' op expects ranks 2x2, 3x3 or 3x2 (got 1x2)}}
  %0 = grove.matmul %x, %y : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_rank_2x3(%x: tensor<2x3xf32>, %y: tensor<5x3x4xf32>) {
  // expected-error @+1 {{'grove.matmul' op expects ranks 2x2, 3x3 or 3x2 (got 2x3)}}
  %0 = grove.matmul %x, %y : (tensor<2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return
}

// -----

func.func @matmul_rank_4(%x: tensor<1x2x3x4xf32>, %y: tensor<1x2x4x5xf32>) {
  // expected-error @+1 {{'grove.matmul' op expects ranks 2x2, 3x3 or 3x2 (got 4x4)}}
  %0 = grove.matmul %x, %y : (tensor<1x2x3x4xf32>, tensor<1x2x4x5xf32>) -> tensor<1x2x3x5xf32>
  return
}

// -----

func.func @matmul_contracting(%x: tensor<2x3xf32>, %y: tensor<4x5xf32>) {
  // expected-error @+1 {{'grove.matmul' op contracting dimensions differ: lhs has 3, rhs has 4}}
  %0 = grove.matmul %x, %y : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

// With transpose_rhs the contracting dimension of rhs is its last.
func.func @matmul_contracting_transpose_rhs(%x: tensor<2x3xf32>, %y: tensor<3x5xf32>) {
  // expected-error @+1 {{'grove.matmul' op contracting dimensions differ: lhs has 3, rhs has 5}}
  %0 = grove.matmul %x, %y {transpose_rhs} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x3xf32>
  return
}

// -----

// With transpose_lhs the contracting dimension of lhs is its first.
func.func @matmul_contracting_transpose_lhs(%x: tensor<2x3xf32>, %y: tensor<3x5xf32>) {
  // expected-error @+1 {{'grove.matmul' op contracting dimensions differ: lhs has 2, rhs has 3}}
  %0 = grove.matmul %x, %y {transpose_lhs} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  return
}

// -----

func.func @matmul_contracting_dynamic(%x: tensor<2x?xf32>, %y: tensor<4x5xf32>) {
  // expected-error @+1 {{'grove.matmul' op expects the contracting dimension to be static or dynamic on both operands}}
  %0 = grove.matmul %x, %y : (tensor<2x?xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_batch(%x: tensor<2x3x4xf32>, %y: tensor<3x4x5xf32>) {
  // expected-error @+1 {{'grove.matmul' op batch dimensions differ: lhs has 2, rhs has 3}}
  %0 = grove.matmul %x, %y : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  return
}

// -----

func.func @matmul_batch_dynamic(%x: tensor<?x3x4xf32>, %y: tensor<2x4x5xf32>) {
  // expected-error @+1 {{'grove.matmul' op batch dimensions differ: lhs has ?, rhs has 2}}
  %0 = grove.matmul %x, %y : (tensor<?x3x4xf32>, tensor<2x4x5xf32>) -> tensor<?x3x5xf32>
  return
}

// -----

func.func @matmul_result_shape(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) {
  // expected-error @+1 {{'grove.matmul' op expects result shape 2x4 (got 4x2)}}
  %0 = grove.matmul %x, %y : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @matmul_result_shape_transposed(%x: tensor<3x2xf32>, %y: tensor<4x3xf32>) {
  // expected-error @+1 {{'grove.matmul' op expects result shape 2x4 (got 3x3)}}
  %0 = grove.matmul %x, %y {transpose_lhs, transpose_rhs} : (tensor<3x2xf32>, tensor<4x3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @matmul_result_shape_3x2(%x: tensor<?x3x4xf32>, %y: tensor<4x5xf32>) {
  // expected-error @+1 {{'grove.matmul' op expects result shape ?x3x5 (got 3x5)}}
  %0 = grove.matmul %x, %y : (tensor<?x3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return
}

// -----

func.func @matmul_result_shape_dynamic(%x: tensor<?x3xf32>, %y: tensor<3x4xf32>) {
  // expected-error @+1 {{'grove.matmul' op expects result shape ?x4 (got 2x4)}}
  %0 = grove.matmul %x, %y : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// grove.softmax / grove.log_softmax
//===----------------------------------------------------------------------===//

// -----

func.func @softmax_axis_too_large(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.softmax' op axis 2 is out of range for rank 2}}
  %0 = grove.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @softmax_axis_too_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.softmax' op axis -3 is out of range for rank 2}}
  %0 = grove.softmax %x {axis = -3 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @softmax_rank0(%x: tensor<f32>) {
  // expected-error @+1 {{'grove.softmax' op axis 0 is out of range for rank 0}}
  %0 = grove.softmax %x {axis = 0 : i64} : tensor<f32>
  return
}

// -----

func.func @log_softmax_axis_too_large(%x: tensor<?x10xf16>) {
  // expected-error @+1 {{'grove.log_softmax' op axis 2 is out of range for rank 2}}
  %0 = grove.log_softmax %x {axis = 2 : i64} : tensor<?x10xf16>
  return
}

// -----

func.func @log_softmax_axis_too_negative(%x: tensor<4xbf16>) {
  // expected-error @+1 {{'grove.log_softmax' op axis -2 is out of range for rank 1}}
  %0 = grove.log_softmax %x {axis = -2 : i64} : tensor<4xbf16>
  return
}

// -----

func.func @softmax_missing_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.softmax' op requires attribute 'axis'}}
  %0 = grove.softmax %x : tensor<4xf32>
  return
}

// -----

func.func @log_softmax_type_change(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.log_softmax' op requires the same type for all operands and results}}
  %0 = "grove.log_softmax"(%x) <{axis = 0 : i64}> : (tensor<4xf32>) -> tensor<4xbf16>
  return
}

// -----

func.func @softmax_integer(%x: tensor<4xi32>) {
  // expected-error @+1 {{'grove.softmax' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = grove.softmax %x {axis = 0 : i64} : tensor<4xi32>
  return
}

//===----------------------------------------------------------------------===//
// grove.reduce_sum / grove.reduce_mean / grove.reduce_max
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_element_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.reduce_sum' op expects the same element type}}
  %0 = grove.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf16>
  return
}

// -----

func.func @reduce_axis_too_large(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.reduce_mean' op axis 2 is out of range for rank 2}}
  %0 = grove.reduce_mean %x {axes = array<i64: 2>} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_axis_too_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.reduce_max' op axis -3 is out of range for rank 2}}
  %0 = grove.reduce_max %x {axes = array<i64: 0, -3>} : tensor<2x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @reduce_axis_repeated(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.reduce_sum' op axis 1 is repeated}}
  %0 = grove.reduce_sum %x {axes = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

// A negative axis and its positive spelling are the same axis.
func.func @reduce_axis_repeated_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.reduce_max' op axis -1 is repeated}}
  %0 = grove.reduce_max %x {axes = array<i64: 1, -1>} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_result_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.reduce_sum' op expects result shape 2 (got 3)}}
  %0 = grove.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @reduce_keepdims_missing(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{'grove.reduce_mean' op expects result shape ? (got ?x1)}}
  %0 = grove.reduce_mean %x {axes = array<i64: -1>} : tensor<?x3xf32> -> tensor<?x1xf32>
  return
}

// -----

func.func @reduce_keepdims_dropped(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{'grove.reduce_max' op expects result shape 1x3 (got 3)}}
  %0 = grove.reduce_max %x {axes = array<i64: 0>, keepdims} : tensor<?x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @reduce_all_result_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'grove.reduce_sum' op expects result shape scalar (got 1)}}
  %0 = grove.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<1xf32>
  return
}

// -----

func.func @reduce_missing_axes(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.reduce_sum' op requires attribute 'axes'}}
  %0 = grove.reduce_sum %x : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_integer(%x: tensor<4xi32>) {
  // expected-error @+1 {{'grove.reduce_max' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = grove.reduce_max %x {axes = array<i64: 0>} : tensor<4xi32> -> tensor<i32>
  return
}

// -----

func.func @concat_scalar_input(%x: tensor<f32>) {
  // expected-error @+1 {{'grove.concat' op expects inputs of rank at least 1 (input 0 is a scalar)}}
  %0 = grove.concat %x {axis = 0 : i64} : (tensor<f32>) -> tensor<1xf32>
  return
}

// -----

// expected-error @+1 {{'grove.param' op expects an f32, f16, bf16, f64, i1, i8, i16, i32 or i64 element type (got 'i4')}}
grove.param @narrow : tensor<4xi4>

// -----

func.func @dynamic_meets_static(%a: tensor<?xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'grove.add' op operand 0 dimension 0 is dynamic where the result's is 4; cast it to the static size first (tensor.cast)}}
  %0 = grove.add %a, %b : (tensor<?xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// grove.conv2d
//===----------------------------------------------------------------------===//

// -----

func.func @conv2d_input_rank(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op input must have rank 4, got 3}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x27xf32>) {
  // expected-error @+1 {{'grove.conv2d' op weight must have rank 4, got 2}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x27xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_result_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op result must have rank 4, got 2}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x144xf32>
  return
}

// -----

func.func @conv2d_bias_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                            %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'grove.conv2d' op bias must have rank 1, got 2}}
  %0 = grove.conv2d %x, %w, %b {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                                strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_element_types(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) {
  // expected-error @+1 {{'grove.conv2d' op expects one element type, got 'f32' and 'f16'}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_bias_element_type(%x: tensor<1x3x8x8xbf16>, %w: tensor<4x3x3x3xbf16>,
                                    %b: tensor<4xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects one element type, got 'bf16' and 'f32'}}
  %0 = grove.conv2d %x, %w, %b {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                                strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16>, tensor<4xf32>) -> tensor<1x4x6x6xbf16>
  return
}

// -----

func.func @conv2d_integer(%x: tensor<1x3x8x8xi32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<1x3x8x8xi32>'}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xi32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_missing_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op requires attribute 'groups'}}
  %0 = grove.conv2d %x, %w {padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_strides_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects strides to have 2 entries, got 1}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_zero_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects strides entries >= 1, got 0}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 0>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_dilations_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects dilations to have 2 entries, got 3}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_zero_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects dilations entries >= 1, got 0}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 0, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_padding_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects padding to have 4 entries, got 2}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 1, 1>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @conv2d_negative_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects padding entries >= 0, got -1}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, -1>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x5xf32>
  return
}

// -----

func.func @conv2d_zero_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects groups >= 1, got 0}}
  %0 = grove.conv2d %x, %w {groups = 0 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_dynamic_weight(%x: tensor<1x3x8x8xf32>, %w: tensor<?x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects a static weight shape}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<?x3x3x3xf32>) -> tensor<1x?x6x6xf32>
  return
}

// -----

func.func @conv2d_output_channels_groups(%x: tensor<1x8x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects output channels (6) divisible by groups (4)}}
  %0 = grove.conv2d %x, %w {groups = 4 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x8x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv2d_dynamic_input_channels(%x: tensor<1x?x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects static input channels}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x?x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_input_channels(%x: tensor<1x6x8x8xf32>, %w: tensor<4x6x3x3xf32>) {
  // The weight holds the channels of one group: 6 input channels in 2 groups
  // need a weight of 4x3x3x3.
  // expected-error @+1 {{'grove.conv2d' op expects input channels (6) = weight channels per group (6) x groups (2)}}
  %0 = grove.conv2d %x, %w {groups = 2 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x6x8x8xf32>, tensor<4x6x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_bias_size(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>,
                            %b: tensor<4xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects a static bias of 8 elements, got 'tensor<4xf32>'}}
  %0 = grove.conv2d %x, %w, %b {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                                strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<4xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv2d_result_batch(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects result batch 2, got 3}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<3x4x6x6xf32>
  return
}

// -----

func.func @conv2d_static_batch_of_dynamic(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects result batch to be dynamic like the input's, got 2}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  return
}

// -----

func.func @conv2d_dynamic_batch_of_static(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects result batch 2, got ?}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
  return
}

// -----

func.func @conv2d_result_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x2x3x3xf32>) {
  // The result has the weight's output channels, not the input's.
  // expected-error @+1 {{'grove.conv2d' op expects result channels 8, got 4}}
  %0 = grove.conv2d %x, %w {groups = 2 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_result_height(%x: tensor<1x3x56x56xf32>, %w: tensor<4x3x3x3xf32>) {
  // ⌊(56 + 1 + 0 - 3) / 2⌋ + 1 = 28 (the bottom padding missing).
  // expected-error @+1 {{'grove.conv2d' op expects result height 28, got 29}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 1, 1, 0, 1>,
                            strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x56x56xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x29x29xf32>
  return
}

// -----

func.func @conv2d_result_width_dilated(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // Dilation 2 spreads the kernel over 5 columns: 8 - 5 + 1 = 4.
  // expected-error @+1 {{'grove.conv2d' op expects result width 4, got 6}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 2>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_static_height_of_dynamic(%x: tensor<1x3x?x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects result height to be dynamic like the input's, got 6}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x?x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv2d_dynamic_width_of_static(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op expects result width 6, got ?}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x?xf32>
  return
}

// -----

func.func @conv2d_kernel_too_tall(%x: tensor<1x3x2x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op dilated kernel (3) is larger than the padded input (2) along dimension 2}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x2x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x6xf32>
  return
}

// -----

func.func @conv2d_dilated_kernel_too_wide(%x: tensor<1x3x8x4xf32>, %w: tensor<4x3x3x3xf32>) {
  // Dilation 2 makes the 3-wide kernel span 5 columns; padding [0, 0, 0, 0]
  // leaves 4.
  // expected-error @+1 {{'grove.conv2d' op dilated kernel (5) is larger than the padded input (4) along dimension 3}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                            strides = array<i64: 1, 1>, dilations = array<i64: 1, 2>}
      : (tensor<1x3x8x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x1xf32>
  return
}

//===----------------------------------------------------------------------===//
// grove.batch_norm
//===----------------------------------------------------------------------===//

// -----

func.func @batch_norm_element_types(%x: tensor<2x4xf32>, %p: tensor<4xf32>, %h: tensor<4xf16>) {
  // expected-error @+1 {{'grove.batch_norm' op expects one element type, got 'f32' and 'f16'}}
  %0 = grove.batch_norm %x, %p, %p, %p, %h {epsilon = 1.0e-05 : f64}
      : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>)
      -> tensor<2x4xf32>
  return
}

// -----

func.func @batch_norm_rank_1(%x: tensor<4xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'grove.batch_norm' op expects an input of rank >= 2 (N, C, ...), got rank 1}}
  %0 = grove.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f64}
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> tensor<4xf32>
  return
}

// -----

func.func @batch_norm_result_type(%x: tensor<?x4x8x8xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'grove.batch_norm' op expects the result type to equal the input type}}
  %0 = grove.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f64}
      : (tensor<?x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> tensor<2x4x8x8xf32>
  return
}

// -----

func.func @batch_norm_dynamic_channels(%x: tensor<2x?x8x8xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'grove.batch_norm' op expects static channels}}
  %0 = grove.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f64}
      : (tensor<2x?x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> tensor<2x?x8x8xf32>
  return
}

// -----

func.func @batch_norm_param_size(%x: tensor<2x4x8x8xf32>, %p: tensor<4xf32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{'grove.batch_norm' op expects scale, bias, mean and variance of shape [4], got 'tensor<8xf32>'}}
  %0 = grove.batch_norm %x, %p, %p, %p, %v {epsilon = 1.0e-05 : f64}
      : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>)
      -> tensor<2x4x8x8xf32>
  return
}

// -----

func.func @batch_norm_param_rank(%x: tensor<2x4x8x8xf32>, %p: tensor<4xf32>, %s: tensor<1x4xf32>) {
  // expected-error @+1 {{'grove.batch_norm' op expects scale, bias, mean and variance of shape [4], got 'tensor<1x4xf32>'}}
  %0 = grove.batch_norm %x, %s, %p, %p, %p {epsilon = 1.0e-05 : f64}
      : (tensor<2x4x8x8xf32>, tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> tensor<2x4x8x8xf32>
  return
}

// -----

func.func @batch_norm_dynamic_param(%x: tensor<2x4xf32>, %p: tensor<4xf32>, %m: tensor<?xf32>) {
  // expected-error @+1 {{'grove.batch_norm' op expects scale, bias, mean and variance of shape [4], got 'tensor<?xf32>'}}
  %0 = grove.batch_norm %x, %p, %p, %m, %p {epsilon = 1.0e-05 : f64}
      : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?xf32>, tensor<4xf32>)
      -> tensor<2x4xf32>
  return
}

// -----

func.func @batch_norm_negative_epsilon(%x: tensor<2x4xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'grove.batch_norm' op expects epsilon >= 0}}
  %0 = grove.batch_norm %x, %p, %p, %p, %p {epsilon = -1.0e-05 : f64}
      : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> tensor<2x4xf32>
  return
}

// -----

func.func @batch_norm_f32_epsilon(%x: tensor<2x4xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'grove.batch_norm' op attribute 'epsilon' failed to satisfy constraint: 64-bit float attribute}}
  %0 = grove.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f32}
      : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
      -> tensor<2x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// grove.max_pool2d / grove.avg_pool2d
//===----------------------------------------------------------------------===//

// -----

func.func @pool_input_rank(%x: tensor<2x8x8xf32>) {
  // expected-error @+1 {{'grove.max_pool2d' op input must have rank 4, got 3}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<2x8x8xf32>) -> tensor<2x4x4xf32>
  return
}

// -----

func.func @pool_result_rank(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'grove.avg_pool2d' op result must have rank 4, got 3}}
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x8x8xf32>) -> tensor<2x4x4xf32>
  return
}

// -----

func.func @pool_element_types(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'grove.max_pool2d' op expects one element type, got 'f32' and 'bf16'}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xbf16>
  return
}

// -----

func.func @pool_integer(%x: tensor<1x2x8x8xi32>) {
  // expected-error @+1 {{'grove.avg_pool2d' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values, but got 'tensor<1x2x8x8xi32>'}}
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x8x8xi32>) -> tensor<1x2x4x4xi32>
  return
}

// -----

func.func @pool_kernel_size(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'grove.max_pool2d' op expects kernel to have 2 entries, got 1}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @pool_zero_kernel(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'grove.avg_pool2d' op expects kernel entries >= 1, got 0}}
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 0>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @pool_strides_size(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'grove.max_pool2d' op expects strides to have 2 entries, got 3}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @pool_negative_stride(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'grove.avg_pool2d' op expects strides entries >= 1, got -2}}
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: -2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @pool_padding_size(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'grove.max_pool2d' op expects padding to have 4 entries, got 2}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>,
                            padding = array<i64: 1, 1>}
      : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return
}

// -----

func.func @pool_negative_padding(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'grove.avg_pool2d' op expects padding entries >= 0, got -1}}
  %0 = grove.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>,
                            padding = array<i64: 1, -1, 1, 1>}
      : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  return
}

// -----

func.func @pool_padding_over_half(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'grove.max_pool2d' op expects padding at most half the kernel, got 2 for a kernel of 3}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>,
                            padding = array<i64: 2, 2, 2, 2>}
      : (tensor<1x2x8x8xf32>) -> tensor<1x2x10x10xf32>
  return
}

// -----

func.func @pool_right_padding_over_half(%x: tensor<1x2x8x8xf32>) {
  // The right padding is held against the kernel width (3), not its height (5).
  // expected-error @+1 {{'grove.avg_pool2d' op expects padding at most half the kernel, got 2 for a kernel of 3}}
  %0 = grove.avg_pool2d %x {kernel = array<i64: 5, 3>, strides = array<i64: 1, 1>,
                            padding = array<i64: 2, 1, 2, 2>}
      : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x9xf32>
  return
}

// -----

func.func @pool_result_batch(%x: tensor<?x2x8x8xf32>) {
  // expected-error @+1 {{'grove.max_pool2d' op expects result batch to be dynamic like the input's, got 1}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<?x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @pool_result_channels(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'grove.avg_pool2d' op expects result channels 2, got 4}}
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x8x8xf32>) -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @pool_dynamic_channels_of_static(%x: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{'grove.max_pool2d' op expects result channels 2, got ?}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x8x8xf32>) -> tensor<1x?x4x4xf32>
  return
}

// -----

func.func @pool_kernel_too_tall(%x: tensor<1x2x2x8xf32>) {
  // Even with the padding (2 + 1 + 1 = 4), a 5-high window does not fit.
  // expected-error @+1 {{'grove.max_pool2d' op kernel (5) is larger than the padded input along dimension 2}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 5, 3>, strides = array<i64: 1, 1>,
                            padding = array<i64: 1, 1, 1, 1>}
      : (tensor<1x2x2x8xf32>) -> tensor<1x2x1x8xf32>
  return
}

// -----

func.func @pool_kernel_too_wide(%x: tensor<1x2x8x1xf32>) {
  // expected-error @+1 {{'grove.avg_pool2d' op kernel (2) is larger than the padded input along dimension 3}}
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x8x1xf32>) -> tensor<1x2x4x1xf32>
  return
}

// -----

func.func @pool_ceil_mode_last_window(%x: tensor<1x2x5x6xf32>) {
  // ⌈(5 + 2 - 2) / 2⌉ + 1 = 4, but the fourth window would start at 6, past
  // the input and the top padding (5 + 1), so PyTorch keeps 3.
  // expected-error @+1 {{'grove.max_pool2d' op expects result height 3, got 4}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 1, 1, 1, 1>, ceil_mode}
      : (tensor<1x2x5x6xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @pool_ceil_mode_ignored(%x: tensor<1x2x5x5xf32>) {
  // ceil_mode: ⌈3 / 2⌉ + 1 = 3, not ⌊3 / 2⌋ + 1 = 2.
  // expected-error @+1 {{'grove.avg_pool2d' op expects result width 3, got 2}}
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>, ceil_mode}
      : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x2xf32>
  return
}

// -----

func.func @pool_floor_mode(%x: tensor<1x2x5x5xf32>) {
  // Without ceil_mode: ⌊3 / 2⌋ + 1 = 2.
  // expected-error @+1 {{'grove.max_pool2d' op expects result height 2, got 3}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @pool_static_width_of_dynamic(%x: tensor<1x2x8x?xf32>) {
  // expected-error @+1 {{'grove.avg_pool2d' op expects result width to be dynamic like the input's, got 4}}
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x8x?xf32>) -> tensor<1x2x4x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// grove.global_avg_pool
//===----------------------------------------------------------------------===//

// -----

func.func @global_avg_pool_input_rank(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'grove.global_avg_pool' op input must have rank 4, got 2}}
  %0 = grove.global_avg_pool %x : (tensor<2x8xf32>) -> tensor<2x8x1x1xf32>
  return
}

// -----

func.func @global_avg_pool_result_rank(%x: tensor<2x8x7x7xf32>) {
  // expected-error @+1 {{'grove.global_avg_pool' op result must have rank 4, got 2}}
  %0 = grove.global_avg_pool %x : (tensor<2x8x7x7xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @global_avg_pool_element_types(%x: tensor<2x8x7x7xf16>) {
  // expected-error @+1 {{'grove.global_avg_pool' op expects one element type, got 'f16' and 'f32'}}
  %0 = grove.global_avg_pool %x : (tensor<2x8x7x7xf16>) -> tensor<2x8x1x1xf32>
  return
}

// -----

func.func @global_avg_pool_result_batch(%x: tensor<?x8x7x7xf32>) {
  // expected-error @+1 {{'grove.global_avg_pool' op expects result batch to be dynamic like the input's, got 2}}
  %0 = grove.global_avg_pool %x : (tensor<?x8x7x7xf32>) -> tensor<2x8x1x1xf32>
  return
}

// -----

func.func @global_avg_pool_result_channels(%x: tensor<2x8x7x7xf32>) {
  // expected-error @+1 {{'grove.global_avg_pool' op expects result channels 8, got 4}}
  %0 = grove.global_avg_pool %x : (tensor<2x8x7x7xf32>) -> tensor<2x4x1x1xf32>
  return
}

// -----

func.func @global_avg_pool_spatial(%x: tensor<2x8x7x7xf32>) {
  // expected-error @+1 {{'grove.global_avg_pool' op expects a result of shape N x C x 1 x 1}}
  %0 = grove.global_avg_pool %x : (tensor<2x8x7x7xf32>) -> tensor<2x8x7x7xf32>
  return
}

// -----

func.func @global_avg_pool_dynamic_spatial(%x: tensor<2x8x?x?xf32>) {
  // Even a dynamic input pools to 1x1.
  // expected-error @+1 {{'grove.global_avg_pool' op expects a result of shape N x C x 1 x 1}}
  %0 = grove.global_avg_pool %x : (tensor<2x8x?x?xf32>) -> tensor<2x8x1x?xf32>
  return
}

//===----------------------------------------------------------------------===//
// grove.flatten
//===----------------------------------------------------------------------===//

// -----

func.func @flatten_axis_too_large(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'grove.flatten' op axis 4 is out of range for rank 4}}
  %0 = grove.flatten %x {axis = 4 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  return
}

// -----

func.func @flatten_axis_too_negative(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'grove.flatten' op axis -5 is out of range for rank 4}}
  %0 = grove.flatten %x {axis = -5 : i64} : (tensor<2x3x4x5xf32>) -> tensor<120xf32>
  return
}

// -----

func.func @flatten_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'grove.flatten' op axis 0 is out of range for rank 0}}
  %0 = grove.flatten %x {axis = 0 : i64} : (tensor<f32>) -> tensor<1xf32>
  return
}

// -----

func.func @flatten_element_type(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'grove.flatten' op expects the input's element type}}
  %0 = grove.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf16>
  return
}

// -----

func.func @flatten_result_rank(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'grove.flatten' op expects a result of rank 2, got 3}}
  %0 = grove.flatten %x {axis = -3 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x20xf32>
  return
}

// -----

func.func @flatten_two_dynamic(%x: tensor<?x?x4x?xf32>) {
  // The leading `?` stays; the two others would have to be collapsed.
  // expected-error @+1 {{'grove.flatten' op cannot collapse more than one dynamic dimension}}
  %0 = grove.flatten %x {axis = 1 : i64} : (tensor<?x?x4x?xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @flatten_kept_dimension(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'grove.flatten' op expects result dimension 0 to be 2, got 3}}
  %0 = grove.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<3x12xf32>
  return
}

// -----

func.func @flatten_kept_dynamic_dimension(%x: tensor<2x?x4x5xf32>) {
  // expected-error @+1 {{'grove.flatten' op expects result dimension 1 to be ?, got 3}}
  %0 = grove.flatten %x {axis = 2 : i64} : (tensor<2x?x4x5xf32>) -> tensor<2x3x20xf32>
  return
}

// -----

func.func @flatten_collapsed_size(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'grove.flatten' op expects the collapsed dimension 60, got 20}}
  %0 = grove.flatten %x {axis = 1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x20xf32>
  return
}

// -----

func.func @flatten_collapsed_dynamic_of_static(%x: tensor<?x2048x1x1xf32>) {
  // expected-error @+1 {{'grove.flatten' op expects the collapsed dimension 2048, got ?}}
  %0 = grove.flatten %x {axis = 1 : i64} : (tensor<?x2048x1x1xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @flatten_collapsed_static_of_dynamic(%x: tensor<2x3x?xf32>) {
  // expected-error @+1 {{'grove.flatten' op expects the collapsed dimension to be dynamic like the input's, got 12}}
  %0 = grove.flatten %x {axis = 1 : i64} : (tensor<2x3x?xf32>) -> tensor<2x12xf32>
  return
}

// -----

func.func @flatten_unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{'grove.flatten' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float or 1-bit signless integer or 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<*xf32>'}}
  %0 = grove.flatten %x {axis = 1 : i64} : (tensor<*xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @conv2d_zero_kernel(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x0x1xf32>) -> tensor<1x8x9x8xf32> {
  // expected-error @+1 {{'grove.conv2d' op expects a weight with no zero-size dimension}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<8x3x0x1xf32>) -> tensor<1x8x9x8xf32>
  return %0 : tensor<1x8x9x8xf32>
}

// -----

func.func @conv2d_dynamic_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x1x1xf32>, %b: tensor<?xf32>) -> tensor<1x8x8x8xf32> {
  // expected-error @+1 {{'grove.conv2d' op expects a static bias of 8 elements, got 'tensor<?xf32>'}}
  %0 = grove.conv2d %x, %w, %b {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x8x8xf32>, tensor<8x3x1x1xf32>, tensor<?xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}

// -----

func.func @conv2d_huge_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32> {
  // expected-error @+1 {{'grove.conv2d' op dilation 4611686018427387904 is too large}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 4611686018427387904, 1>}
      : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}

// -----

// grove.split_attention (GroveNNOps.cpp, SplitAttentionOp::verify).

func.func @sa_radix_zero(%u: tensor<1x8x4x4xf32>, %w1: tensor<4x4x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects radix and cardinality >= 1, got 0 and 1}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 0 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<1x8x4x4xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @sa_radix_too_large(%u: tensor<1x17x4x4xf32>, %w1: tensor<1x1x1x1xf32>, %b1: tensor<1xf32>, %s: tensor<1xf32>, %sh: tensor<1xf32>, %m: tensor<1xf32>, %v: tensor<1xf32>, %w2: tensor<17x1x1x1xf32>, %b2: tensor<17xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects radix <= 16, got 17}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 17 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<1x17x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<17x1x1x1xf32>, tensor<17xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @sa_channels_not_radix_multiple(%u: tensor<1x8x4x4xf32>, %w1: tensor<4x4x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) -> tensor<1x4x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects static input channels divisible by the radix}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 3 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<1x8x4x4xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

func.func @sa_channels_not_cardinal_multiple(%u: tensor<1x12x4x4xf32>, %w1: tensor<4x6x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<12x4x1x1xf32>, %b2: tensor<12xf32>) -> tensor<1x6x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects channels per split (6) divisible by the cardinality (4)}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 2 : i64, cardinality = 4 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<1x12x4x4xf32>, tensor<4x6x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<12x4x1x1xf32>, tensor<12xf32>) -> tensor<1x6x4x4xf32>
  return %0 : tensor<1x6x4x4xf32>
}

// -----

func.func @sa_fc1_inter_not_cardinal_multiple(%u: tensor<1x16x4x4xf32>, %w1: tensor<5x4x1x1xf32>, %b1: tensor<6xf32>, %s: tensor<6xf32>, %sh: tensor<6xf32>, %m: tensor<6xf32>, %v: tensor<6xf32>, %w2: tensor<16x3x1x1xf32>, %b2: tensor<16xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects fc1_weight of shape I x 4 x 1 x 1 with I divisible by the cardinality}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 2 : i64, cardinality = 2 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<1x16x4x4xf32>, tensor<5x4x1x1xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<16x3x1x1xf32>, tensor<16xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @sa_fc1_wrong_shape(%u: tensor<1x16x4x4xf32>, %w1: tensor<4x8x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<16x2x1x1xf32>, %b2: tensor<16xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects fc1_weight of shape 4x4x1x1, got 'tensor<4x8x1x1xf32>'}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 2 : i64, cardinality = 2 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<1x16x4x4xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x2x1x1xf32>, tensor<16xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @sa_bn_wrong_shape(%u: tensor<1x16x4x4xf32>, %w1: tensor<4x8x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<5xf32>, %w2: tensor<16x4x1x1xf32>, %b2: tensor<16xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects bn_variance of shape 4, got 'tensor<5xf32>'}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<1x16x4x4xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<5xf32>, tensor<16x4x1x1xf32>, tensor<16xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @sa_fc2_wrong_shape(%u: tensor<1x16x4x4xf32>, %w1: tensor<4x4x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<16x4x1x1xf32>, %b2: tensor<16xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects fc2_weight of shape 16x2x1x1, got 'tensor<16x4x1x1xf32>'}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 2 : i64, cardinality = 2 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<1x16x4x4xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x4x1x1xf32>, tensor<16xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @sa_fc2_bias_wrong_shape(%u: tensor<1x16x4x4xf32>, %w1: tensor<4x8x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<16x4x1x1xf32>, %b2: tensor<8xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects fc2_bias of shape 16, got 'tensor<8xf32>'}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<1x16x4x4xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x4x1x1xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @sa_result_channels(%u: tensor<1x16x4x4xf32>, %w1: tensor<4x8x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<16x4x1x1xf32>, %b2: tensor<16xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects result channels 8, got 16}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<1x16x4x4xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x4x1x1xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32>
  return %0 : tensor<1x16x4x4xf32>
}

// -----

func.func @sa_result_dynamic_batch(%u: tensor<2x16x4x4xf32>, %w1: tensor<4x8x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<16x4x1x1xf32>, %b2: tensor<16xf32>) -> tensor<?x8x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects result batch 2, got ?}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<2x16x4x4xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x4x1x1xf32>, tensor<16xf32>) -> tensor<?x8x4x4xf32>
  return %0 : tensor<?x8x4x4xf32>
}

// -----

func.func @sa_negative_epsilon(%u: tensor<1x16x4x4xf32>, %w1: tensor<4x8x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<16x4x1x1xf32>, %b2: tensor<16xf32>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects epsilon >= 0}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 2 : i64, cardinality = 1 : i64, epsilon = -1.0 : f64}
      : (tensor<1x16x4x4xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x4x1x1xf32>, tensor<16xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @sa_mixed_types(%u: tensor<1x16x4x4xf32>, %w1: tensor<4x8x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<16x4x1x1xf32>, %b2: tensor<16xbf16>) -> tensor<1x8x4x4xf32> {
  // expected-error @+1 {{'grove.split_attention' op expects one element type, got 'f32' and 'bf16'}}
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<1x16x4x4xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x4x1x1xf32>, tensor<16xbf16>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// -----

// Every grove op: static extents above 2^48 bytes (sizes would wrap around in
// the 64-bit arithmetic below).
func.func @tensor_too_large(%x: tensor<?x3x1099511627776x1099511627776xf32>) {
  // expected-error @+1 {{'grove.relu' op tensor type 'tensor<?x3x1099511627776x1099511627776xf32>' holds more than 2^48 bytes}}
  %0 = grove.relu %x : tensor<?x3x1099511627776x1099511627776xf32>
  return
}

// -----

func.func @reshape_count_wraps(%x: tensor<4294967296x4294967296xf32>) {
  // 2^32 · 2^32 elements would wrap to 0.
  // expected-error @+1 {{'grove.reshape' op tensor type 'tensor<4294967296x4294967296xf32>' holds more than 2^48 bytes}}
  %0 = grove.reshape %x : tensor<4294967296x4294967296xf32> -> tensor<0xf32>
  return
}

// -----

func.func @param_too_large() {
  return
}
// expected-error @+1 {{'grove.param' op tensor type 'tensor<65536x65536x65537xi8>' holds more than 2^48 bytes}}
grove.param @huge : tensor<65536x65536x65537xi8>

// -----

func.func @conv_padding_overflows(%x: tensor<?x3x?x?xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'grove.conv2d' op padding (9223372036854775807, 1) along dimension 2 overflows 64-bit sizes}}
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>,
                            padding = array<i64: 9223372036854775807, 0, 1, 0>,
                            dilations = array<i64: 1, 1>}
      : (tensor<?x3x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32>
  return
}

// -----

func.func @pool_ceil_mode_no_window(%x: tensor<1x2x1x1xf32>) {
  // ceil_mode lets a window overhang the input by less than a stride: a
  // 4-wide window over 1 column with stride 2 overhangs by 3.
  // expected-error @+1 {{'grove.max_pool2d' op kernel (4) is larger than the padded input along dimension 2}}
  %0 = grove.max_pool2d %x {kernel = array<i64: 4, 4>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>, ceil_mode}
      : (tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return
}

// -----

// grove.split_attention_grad: the forward's checks, then its own.

func.func @sag_radix(%dy: tensor<?x4x3x3xf32>, %u: tensor<?x8x3x3xf32>, %w1: tensor<4x4x1x1xf32>, %v: tensor<4xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) {
  // expected-error @+1 {{'grove.split_attention_grad' op expects radix and cardinality >= 1, got 0 and 1}}
  %0:7 = grove.split_attention_grad %dy, %u, %w1, %v, %v, %v, %v, %v, %w2, %b2 {radix = 0 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x4x3x3xf32>, tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> (tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>)
  return
}

// -----

func.func @sag_result_grad_channels(%dy: tensor<?x8x3x3xf32>, %u: tensor<?x8x3x3xf32>, %w1: tensor<4x4x1x1xf32>, %v: tensor<4xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) {
  // expected-error @+1 {{'grove.split_attention_grad' op expects result_grad channels 4, got 8}}
  %0:7 = grove.split_attention_grad %dy, %u, %w1, %v, %v, %v, %v, %v, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x8x3x3xf32>, tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> (tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>)
  return
}

// -----

func.func @sag_result_type(%dy: tensor<?x4x3x3xf32>, %u: tensor<?x8x3x3xf32>, %w1: tensor<4x4x1x1xf32>, %v: tensor<4xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) {
  // expected-error @+1 {{'grove.split_attention_grad' op expects result 5 to have the type of its operand, 'tensor<8x4x1x1xf32>', got 'tensor<4x8x1x1xf32>'}}
  %0:7 = grove.split_attention_grad %dy, %u, %w1, %v, %v, %v, %v, %v, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x4x3x3xf32>, tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> (tensor<?x8x3x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8x1x1xf32>, tensor<8xf32>)
  return
}
