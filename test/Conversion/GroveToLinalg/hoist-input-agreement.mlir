// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s

// HoistInputAgreement (GroveToLinalg.cpp): in an entry point, sizes of two
// inputs that must agree become the call's precondition
// (grove.abi.equal_dims: input, dim, earlier input, dim; the runtime checks
// it before the code runs), and the code takes them as equal, as the
// earlier input's size: no check, and what follows from either input has
// that size (the later input's slice to it is the whole input).
// CHECK-LABEL: func.func @two_inputs
// CHECK-SAME: grove.abi.equal_dims = array<i64: 1, 0, 0, 0>
// CHECK-NOT: grove.agree_dims
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: tensor.extract_slice %arg1[0, 0] [%[[N]], 4]
// CHECK: tensor.empty(%[[N]])
// CHECK: linalg.generic
// CHECK-NOT: grove.agree_dims
func.func @two_inputs(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32>
    attributes {grove.abi.entry = 0 : i64} {
  %0 = grove.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Inputs are counted without the state arguments; a contraction ties an
// input's dimension 1 to the other's dimension 0; one equality is recorded
// once however many ops need it.
// CHECK-LABEL: func.func @after_state
// CHECK-SAME: grove.abi.equal_dims = array<i64: 1, 0, 0, 1>}
// CHECK-NOT: grove.agree_dims
func.func @after_state(%w: tensor<3xf32> {grove.state = @w}, %x: tensor<2x?xf32>,
                       %y: tensor<?x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>)
    attributes {grove.abi.entry = 0 : i64} {
  %0 = grove.matmul %x, %y : (tensor<2x?xf32>, tensor<?x5xf32>) -> tensor<2x5xf32>
  %1 = grove.matmul %x, %y : (tensor<2x?xf32>, tensor<?x5xf32>) -> tensor<2x5xf32>
  return %0, %1 : tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

// Outside an entry point, between two sizes of one input, in an entry
// another function calls (its inputs need not pass the runtime), and under
// a branch (it need not run), the check stays in the code.
// CHECK-LABEL: func.func @helper
// CHECK-NOT: grove.abi.equal_dims
// CHECK: grove.agree_dims
func.func @helper(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %0 = grove.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
// CHECK-LABEL: func.func @square
// CHECK-NOT: grove.abi.equal_dims
// CHECK: grove.agree_dims
func.func @square(%a: tensor<?x?xf32>) -> tensor<?x?xf32>
    attributes {grove.abi.entry = 0 : i64} {
  %t = grove.transpose %a [1, 0] : tensor<?x?xf32> -> tensor<?x?xf32>
  %0 = grove.add %a, %t : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
// CHECK-LABEL: func.func @called
// CHECK-NOT: grove.abi.equal_dims
// CHECK: grove.agree_dims
func.func @called(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32>
    attributes {grove.abi.entry = 0 : i64, grove.abi.called} {
  %0 = grove.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
// CHECK-LABEL: func.func @branch
// CHECK-NOT: grove.abi.equal_dims
// CHECK: scf.if
// CHECK: grove.agree_dims
func.func @branch(%c: i1, %a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32>
    attributes {grove.abi.entry = 0 : i64} {
  %r = scf.if %c -> tensor<?xf32> {
    %0 = grove.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    scf.yield %0 : tensor<?xf32>
  } else {
    scf.yield %a : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}
