// RUN: grove-opt %s -split-input-file --grove-outline-parallel-loops | FileCheck %s

// Which captures of a range function grove-outline-parallel-loops records as
// unaliased (grove.noalias_args, memref-level argument indices, with the
// memref-level signature grove.memref_signature; NoAliasCaptures.cpp).
// grove-dispatch-parallel-calls later marks their pointers noalias
// (dispatch-parallel-calls-noalias.mlir). A memref is recorded when no
// other capture may overlap it, unless neither of the two is written.
// Distinct memory: different allocations or globals, different state
// arguments of an entry function. An entry's inputs may overlap each other
// and the state; a private function's arguments may be anything.

// Two allocations, one read, one written: both.
// CHECK-LABEL: func.func private @allocations__parallel_0(
// CHECK-SAME: grove.memref_signature = (index, index, memref<65536xf32>, memref<65536xf32>) -> ()
// CHECK-SAME: grove.noalias_args = array<i64: 2, 3>
func.func @allocations() -> memref<65536xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  %a = memref.alloc() : memref<65536xf32>
  %b = memref.alloc() : memref<65536xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<65536xf32>
    memref.store %v, %b[%i] : memref<65536xf32>
    scf.reduce
  }
  memref.dealloc %a : memref<65536xf32>
  return %b : memref<65536xf32>
}

// -----

// An entry's input read while its state is written: the caller may have
// passed overlapping memory, so neither; the allocation, which overlaps
// neither, is. The captures are in the order of first use: (input,
// allocation, state).
// CHECK-LABEL: func.func private @state_and_input__parallel_0(
// CHECK-SAME: grove.noalias_args = array<i64: 3>
func.func @state_and_input(%s: memref<65536xf32> {grove.state = @w},
                           %x: memref<65536xf32> {grove.name = "x"})
    attributes {grove.abi.entry = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  %g = memref.alloc() : memref<65536xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<65536xf32>
    %u = memref.load %g[%i] : memref<65536xf32>
    %w = arith.addf %v, %u : f32
    memref.store %w, %s[%i] : memref<65536xf32>
    scf.reduce
  }
  memref.dealloc %g : memref<65536xf32>
  return
}

// -----

// Captures (p, m, x, y, out): state p written in place, state m and inputs
// x and y read, allocation out written. The state buffers are disjoint
// slots of the runtime's arena, so m (read) is recorded: it is distinct
// from p, and the inputs that may overlap it are only read. p is not (an
// input may overlap it), nor are x and y (they may overlap p); out is.
// CHECK-LABEL: func.func private @states_and_read_inputs__parallel_0(
// CHECK-SAME: grove.noalias_args = array<i64: 3, 6>
func.func @states_and_read_inputs(%p: memref<65536xf32> {grove.state = @p},
                                  %m: memref<65536xf32> {grove.state = @m},
                                  %x: memref<65536xf32> {grove.name = "x"},
                                  %y: memref<65536xf32> {grove.name = "y"})
    -> memref<65536xf32> attributes {grove.abi.entry = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  %out = memref.alloc() : memref<65536xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %a = memref.load %p[%i] : memref<65536xf32>
    %b = memref.load %m[%i] : memref<65536xf32>
    %c = memref.load %x[%i] : memref<65536xf32>
    %d = memref.load %y[%i] : memref<65536xf32>
    %e = arith.addf %a, %b : f32
    %f = arith.addf %c, %d : f32
    memref.store %e, %p[%i] : memref<65536xf32>
    memref.store %f, %out[%i] : memref<65536xf32>
    scf.reduce
  }
  return %out : memref<65536xf32>
}

// -----

// Two views of one allocation, one read and one written, are rebuilt from
// one capture, which no other capture reaches: it is recorded (noalias
// concerns other pointers, not views of the same one).
// CHECK-LABEL: func.func private @views__parallel_0(
// CHECK-SAME: %{{[^:]*}}: index, %{{[^:]*}}: index, %{{[^:]*}}: memref<131072xf32>)
// CHECK-SAME: grove.noalias_args = array<i64: 2>
func.func @views() -> memref<131072xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  %a = memref.alloc() : memref<131072xf32>
  %lo = memref.subview %a[0] [65536] [1] : memref<131072xf32> to memref<65536xf32, strided<[1]>>
  %hi = memref.subview %a[65536] [65536] [1] : memref<131072xf32> to memref<65536xf32, strided<[1], offset: 65536>>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %lo[%i] : memref<65536xf32, strided<[1]>>
    memref.store %v, %hi[%i] : memref<65536xf32, strided<[1], offset: 65536>>
    scf.reduce
  }
  return %a : memref<131072xf32>
}

// -----

// A global read, an allocation written: both.
// CHECK-LABEL: func.func private @global__parallel_0(
// CHECK-SAME: grove.noalias_args = array<i64: 2, 3>
memref.global "private" constant @table : memref<65536xf32> = dense<1.0>
func.func @global() -> memref<65536xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  %t = memref.get_global @table : memref<65536xf32>
  %b = memref.alloc() : memref<65536xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %t[%i] : memref<65536xf32>
    memref.store %v, %b[%i] : memref<65536xf32>
    scf.reduce
  }
  return %b : memref<65536xf32>
}

// -----

// The arguments of a function that is not an entry may be any buffers:
// with one of them written, nothing is recorded.
// CHECK-LABEL: func.func private @private_args__parallel_0(
// CHECK-NOT: grove.noalias_args
// CHECK-SAME: {grove.parallel_body = 1 : i64}
func.func @private_args(%a: memref<65536xf32>, %b: memref<65536xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<65536xf32>
    memref.store %v, %b[%i] : memref<65536xf32>
    scf.reduce
  }
  return
}

// -----

// Two different state arguments, one of them read through an opaque op
// (here a select between them): the select's result may be
// either, so neither it nor the written state is recorded; the allocation
// is. Captures: (select, allocation, state).
// CHECK-LABEL: func.func private @unknown_root__parallel_0(
// CHECK-SAME: grove.noalias_args = array<i64: 3>
func.func @unknown_root(%p: memref<65536xf32> {grove.state = @p},
                        %q: memref<65536xf32> {grove.state = @q},
                        %c: i1) attributes {grove.abi.entry = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  %either = arith.select %c, %p, %q : memref<65536xf32>
  %g = memref.alloc() : memref<65536xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %either[%i] : memref<65536xf32>
    %u = memref.load %g[%i] : memref<65536xf32>
    %w = arith.addf %v, %u : f32
    memref.store %w, %p[%i] : memref<65536xf32>
    scf.reduce
  }
  memref.dealloc %g : memref<65536xf32>
  return
}

// -----

// A body that calls out may reach any buffer: nothing is recorded.
// CHECK-LABEL: func.func private @calls__parallel_0(
// CHECK-NOT: grove.noalias_args
// CHECK-SAME: {grove.parallel_body = 1 : i64}
func.func private @opaque(f32) -> f32
func.func @calls() -> memref<65536xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  %a = memref.alloc() : memref<65536xf32>
  %b = memref.alloc() : memref<65536xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<65536xf32>
    %w = func.call @opaque(%v) : (f32) -> f32
    memref.store %w, %b[%i] : memref<65536xf32>
    scf.reduce
  }
  memref.dealloc %a : memref<65536xf32>
  return %b : memref<65536xf32>
}

// -----

// A store through a value the body computes from its captures (a select
// between two state buffers) may write either: the body records nothing,
// not even for the input it only reads or the allocation.
// CHECK-LABEL: func.func private @computed_target__parallel_0(
// CHECK-NOT: grove.noalias_args
// CHECK-SAME: {grove.parallel_body = 1 : i64}
func.func @computed_target(%p: memref<65536xf32> {grove.state = @p},
                           %q: memref<65536xf32> {grove.state = @q},
                           %x: memref<65536xf32> {grove.name = "x"},
                           %c: i1) attributes {grove.abi.entry = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  %g = memref.alloc() : memref<65536xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<65536xf32>
    %u = memref.load %g[%i] : memref<65536xf32>
    %w = arith.addf %v, %u : f32
    %either = arith.select %c, %p, %q : memref<65536xf32>
    memref.store %w, %either[%i] : memref<65536xf32>
    scf.reduce
  }
  memref.dealloc %g : memref<65536xf32>
  return
}

// -----

// A buffer the body allocates itself aliases no capture: writing it keeps
// the captures' record (both only read here).
// CHECK-LABEL: func.func private @local_buffer__parallel_0(
// CHECK-SAME: grove.noalias_args = array<i64: 2, 3>
func.func @local_buffer() -> memref<65536xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 65536 : index
  %a = memref.alloc() : memref<65536xf32>
  %b = memref.alloc() : memref<65536xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.alloca() : memref<1xf32>
    %v = memref.load %a[%i] : memref<65536xf32>
    memref.store %v, %t[%c0] : memref<1xf32>
    %w = memref.load %t[%c0] : memref<1xf32>
    %u = memref.load %b[%i] : memref<65536xf32>
    %s = arith.addf %w, %u : f32
    scf.reduce
  }
  memref.dealloc %a : memref<65536xf32>
  return %b : memref<65536xf32>
}
