// RUN: grove-opt %s -split-input-file -verify-diagnostics --grove-dispatch-parallel-calls

// One case per diagnostic of grove-dispatch-parallel-calls
// (DispatchParallelCalls.cpp), on hand-written LLVM-dialect modules.

// The runtime's symbol declared with another type.
module {
  // expected-error @+1 {{symbol @grove_rt_parallel_for is reserved for the runtime service of type '!llvm.func<void (ptr, ptr, i64, i64, i64, ptr)>'}}
  llvm.func @grove_rt_parallel_for(!llvm.ptr, i64, i64)
  llvm.func internal @body(%lo: i64, %hi: i64) attributes {grove.parallel_body = 1 : i64} {
    llvm.return
  }
  llvm.func @f(%n: i64) {
    llvm.call @body(%n, %n) : (i64, i64) -> ()
    llvm.return
  }
}

// -----

// Or as something that is not a function at all.
module {
  // expected-error @+1 {{symbol @grove_rt_parallel_for is reserved for the runtime service}}
  llvm.mlir.global external @grove_rt_parallel_for() : i32
  llvm.func internal @body(%lo: i64, %hi: i64) attributes {grove.parallel_body = 1 : i64} {
    llvm.return
  }
  llvm.func @f(%n: i64) {
    llvm.call @body(%n, %n) : (i64, i64) -> ()
    llvm.return
  }
}

// -----

// A body without a range (fewer than two parameters).
module {
  llvm.func internal @body(%lo: i64) attributes {grove.parallel_body = 1 : i64} {
    llvm.return
  }
  llvm.func @f(%n: i64) {
    // expected-error @+1 {{'llvm.call' op does not match the parallel body it calls (an integer grove.parallel_body work, integer (lo, hi) of at most 64 bits, then the captures)}}
    llvm.call @body(%n) : (i64) -> ()
    llvm.return
  }
}

// -----

// A call with more operands than the body has parameters (possible only
// through a variadic body): the extra operand has no field in the thunk.
module {
  llvm.func internal @body(%lo: i64, %hi: i64, ...) attributes {grove.parallel_body = 1 : i64} {
    llvm.return
  }
  llvm.func @f(%n: i64, %x: f32) {
    // expected-error @+1 {{'llvm.call' op does not match the parallel body it calls}}
    llvm.call @body(%n, %n, %x) vararg(!llvm.func<void (i64, i64, ...)>) : (i64, i64, f32) -> ()
    llvm.return
  }
}

// -----

// The marker without a work (a unit attribute, as bodies were once marked)
// is rejected by the dialect, which declares the attribute, not read as an
// integer.
module {
  // expected-error @+1 {{'grove.parallel_body' must be an integer, got unit}}
  llvm.func internal @body(%lo: i64, %hi: i64) attributes {grove.parallel_body} {
    llvm.return
  }
  llvm.func @f(%n: i64) {
    llvm.call @body(%n, %n) : (i64, i64) -> ()
    llvm.return
  }
}

// -----

// A work that is not an integer.
module {
  // expected-error @+1 {{'grove.parallel_body' must be an integer, got "a lot"}}
  llvm.func internal @body(%lo: i64, %hi: i64) attributes {grove.parallel_body = "a lot"} {
    llvm.return
  }
  llvm.func @f(%n: i64) {
    llvm.call @body(%n, %n) : (i64, i64) -> ()
    llvm.return
  }
}

// -----

// lo and hi of different types.
module {
  llvm.func internal @body(%lo: i64, %hi: i32) attributes {grove.parallel_body = 1 : i64} {
    llvm.return
  }
  llvm.func @f(%n: i64, %m: i32) {
    // expected-error @+1 {{'llvm.call' op does not match the parallel body it calls}}
    llvm.call @body(%n, %m) : (i64, i32) -> ()
    llvm.return
  }
}

// -----

// A range wider than the runtime's i64.
module {
  llvm.func internal @body(%lo: i128, %hi: i128) attributes {grove.parallel_body = 1 : i64} {
    llvm.return
  }
  llvm.func @f(%n: i128) {
    // expected-error @+1 {{'llvm.call' op does not match the parallel body it calls}}
    llvm.call @body(%n, %n) : (i128, i128) -> ()
    llvm.return
  }
}

// -----

// A range that is not an integer.
module {
  llvm.func internal @body(%lo: f32, %hi: f32) attributes {grove.parallel_body = 1 : i64} {
    llvm.return
  }
  llvm.func @f(%x: f32) {
    // expected-error @+1 {{'llvm.call' op does not match the parallel body it calls}}
    llvm.call @body(%x, %x) : (f32, f32) -> ()
    llvm.return
  }
}

// -----

// Unaliased arguments recorded without the memref-level signature.
module {
  // expected-error @+1 {{has grove.noalias_args without a function type as grove.memref_signature}}
  llvm.func internal @body(%lo: i64, %hi: i64, %p: !llvm.ptr) attributes {grove.parallel_body = 1 : i64, grove.noalias_args = array<i64: 2>} {
    llvm.return
  }
  llvm.func @f(%n: i64, %p: !llvm.ptr) {
    llvm.call @body(%n, %n, %p) : (i64, i64, !llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// A signature that does not explode into the body's arguments (a rank-1
// memref is five).
module {
  // expected-error @+1 {{has 3 arguments where its memref signature '(index, index, memref<?xf32>) -> ()' explodes into 7}}
  llvm.func internal @body(%lo: i64, %hi: i64, %p: !llvm.ptr) attributes {grove.parallel_body = 1 : i64, grove.noalias_args = array<i64: 2>, grove.memref_signature = (index, index, memref<?xf32>) -> ()} {
    llvm.return
  }
  llvm.func @f(%n: i64, %p: !llvm.ptr) {
    llvm.call @body(%n, %n, %p) : (i64, i64, !llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// An index that names no memref of the signature.
module {
  // expected-error @+1 {{has no memref argument 1 to mark noalias}}
  llvm.func internal @body(%lo: i64, %hi: i64, %p: !llvm.ptr) attributes {grove.parallel_body = 1 : i64, grove.noalias_args = array<i64: 1>, grove.memref_signature = (index, index, !llvm.ptr) -> ()} {
    llvm.return
  }
  llvm.func @f(%n: i64, %p: !llvm.ptr) {
    llvm.call @body(%n, %n, %p) : (i64, i64, !llvm.ptr) -> ()
    llvm.return
  }
}
