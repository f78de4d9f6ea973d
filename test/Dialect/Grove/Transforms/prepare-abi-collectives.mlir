// RUN: grove-opt %s -split-input-file --grove-prepare-abi | FileCheck %s

// grove-prepare-abi records what each entry exchanges with the other ranks
// (#grove.abi_collectives): grove-insert-collectives' options, moved off the
// function, and every collective in program order, through the functions
// the entry calls and inside regions; the ranks compare them before a call
// (docs/distributed.md, "Agreement").

// CHECK-LABEL: module @dp attributes
// CHECK-SAME: #grove.abi_entry<name = "step", args = [#grove.abi_tensor<name = "g", type = tensor<4xf32>>, #grove.abi_tensor<name = "h", type = tensor<2x3xf16>>, #grove.abi_tensor<name = "c", type = tensor<i1>>], outputs = [], collectives = <config = "grove-insert-collectives{compressor=none}", ops = ["all_reduce mean tensor<4xf32>", "all_gather tensor<2x3xf16>", "all_reduce sum tensor<2x3xf16>", "broadcast root 1 tensor<4xf32>"]>>
// CHECK-SAME: #grove.abi_entry<name = "eval", args = [#grove.abi_tensor<name = "arg0", type = tensor<4xf32>>], outputs = [#grove.abi_tensor<name = "out0", type = tensor<4xf32>>]>]>
// CHECK-NOT: grove.collectives
module @dp {
  func.func private @share(%x: tensor<4xf32>) -> tensor<4xf32>
      attributes {grove.collectives = "ignored: the entry's own wins"} {
    %b = grove.broadcast %x {root = 1} : tensor<4xf32>
    return %b : tensor<4xf32>
  }
  func.func @step(%g: tensor<4xf32> {grove.name = "g"},
                  %h: tensor<2x3xf16> {grove.name = "h"},
                  %c: tensor<i1> {grove.name = "c"})
      attributes {grove.collectives = "grove-insert-collectives{compressor=none}"} {
    %m = grove.all_reduce mean %g : tensor<4xf32>
    %all = grove.all_gather %h : (tensor<2x3xf16>) -> tensor<?x2x3xf16>
    %p = tensor.extract %c[] : tensor<i1>
    scf.if %p {
      %s = grove.all_reduce sum %h : tensor<2x3xf16>
    }
    %b = func.call @share(%m) : (tensor<4xf32>) -> tensor<4xf32>
    return
  }
  // No collectives: no key, nothing to agree on.
  func.func @eval(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
