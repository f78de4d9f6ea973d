// RUN: grove-opt %s -split-input-file --grove-dispatch-parallel-calls | FileCheck %s

// grove-dispatch-parallel-calls (DispatchParallelCalls.cpp), on hand-written
// LLVM-dialect modules: each call of a function marked grove.parallel_body
// = N, body(lo, hi, captures...), becomes
// grove_rt_parallel_for(@body__thunk, ctx, lo, hi, N, name), where ctx is a
// stack struct of the captures allocated in the caller's entry block, the
// internal thunk void(ptr ctx, i64 lo, i64 hi) loads them back and calls the
// body, and name is an internal string @body__name holding the body's
// location, "file:line:col" (for traces), one a body. Diagnostics are in
// dispatch-parallel-calls-invalid.mlir.

// CHECK: llvm.mlir.global internal constant @body__name("dispatch-parallel-calls.mlir:{{[0-9]+}}:3\00")

// CHECK-LABEL: llvm.func internal @body(
// CHECK-SAME: %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: f32, %{{[^:]*}}: i64) {
// CHECK-NEXT: llvm.return
// The marker is consumed.
// CHECK-NOT: grove.parallel_body
// CHECK-LABEL: llvm.func internal @body__thunk(
// CHECK-SAME: %[[CTX:[^:]*]]: !llvm.ptr, %[[LO:[^:]*]]: i64, %[[HI:[^:]*]]: i64) {
// CHECK-NEXT: %[[G0:.*]] = llvm.getelementptr %[[CTX]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32, i64)>
// CHECK-NEXT: %[[F0:.*]] = llvm.load %[[G0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[G1:.*]] = llvm.getelementptr %[[CTX]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32, i64)>
// CHECK-NEXT: %[[F1:.*]] = llvm.load %[[G1]] : !llvm.ptr -> f32
// CHECK-NEXT: %[[G2:.*]] = llvm.getelementptr %[[CTX]][0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32, i64)>
// CHECK-NEXT: %[[F2:.*]] = llvm.load %[[G2]] : !llvm.ptr -> i64
// CHECK-NEXT: llvm.call @body(%[[LO]], %[[HI]], %[[F0]], %[[F1]], %[[F2]]) : (i64, i64, !llvm.ptr, f32, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }

// The struct is allocated first thing in the entry block; the captures are
// stored right before the call, which passes lo and hi through.
// CHECK-LABEL: llvm.func @entry_block(
// CHECK-SAME: %[[P:[^:]*]]: !llvm.ptr, %[[X:[^:]*]]: f32, %[[N:[^:]*]]: i64, %[[H:[^:]*]]: i64) {
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[S:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, f32, i64)> : (i64) -> !llvm.ptr
// CHECK-NEXT: %[[L:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[S0:.*]] = llvm.getelementptr %[[S]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32, i64)>
// CHECK-NEXT: llvm.store %[[P]], %[[S0]] : !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[S1:.*]] = llvm.getelementptr %[[S]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32, i64)>
// CHECK-NEXT: llvm.store %[[X]], %[[S1]] : f32, !llvm.ptr
// CHECK-NEXT: %[[S2:.*]] = llvm.getelementptr %[[S]][0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, f32, i64)>
// CHECK-NEXT: llvm.store %[[N]], %[[S2]] : i64, !llvm.ptr
// CHECK-NEXT: %[[T:.*]] = llvm.mlir.addressof @body__thunk : !llvm.ptr
// CHECK-NEXT: %[[W:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK-NEXT: %[[NA:.*]] = llvm.mlir.addressof @body__name : !llvm.ptr
// CHECK-NEXT: %[[NM:.*]] = llvm.getelementptr %[[NA]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<{{[0-9]+}} x i8>
// CHECK-NEXT: llvm.call @grove_rt_parallel_for(%[[T]], %[[S]], %[[L]], %[[H]], %[[W]], %[[NM]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.return

// A call inside a loop: the alloca is still in the entry block, so the
// stack does not grow per iteration; the stores are refreshed at each call.
// Both calls of @body share one thunk.
// CHECK-LABEL: llvm.func @in_loop(
// CHECK-SAME: %[[P:[^:]*]]: !llvm.ptr, %[[X:[^:]*]]: f32, %[[H:[^:]*]]: i64) {
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[S:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, f32, i64)> : (i64) -> !llvm.ptr
// CHECK: ^bb2:
// CHECK-NOT: llvm.alloca
// CHECK: llvm.store %[[P]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK: llvm.store %[[X]], %{{.*}} : f32, !llvm.ptr
// CHECK: llvm.store %[[IV:.*]], %{{.*}} : i64, !llvm.ptr
// CHECK-NEXT: %[[T:.*]] = llvm.mlir.addressof @body__thunk : !llvm.ptr
// CHECK-NEXT: %[[W:.*]] = llvm.mlir.constant(64 : i64) : i64
// CHECK-NEXT: %[[NA:.*]] = llvm.mlir.addressof @body__name : !llvm.ptr
// CHECK-NEXT: llvm.call @grove_rt_parallel_for(%[[T]], %[[S]], %[[IV]], %[[H]], %[[W]], %[[NA]])
// CHECK-NOT: llvm.call @body(
// The service is declared once, at the end of the module.
// CHECK: llvm.func @grove_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr)
// CHECK-NOT: @body__thunk_
// CHECK-NOT: llvm.func @grove_rt_parallel_for
module {
  llvm.func internal @body(%lo: i64, %hi: i64, %p: !llvm.ptr, %x: f32, %n: i64) attributes {grove.parallel_body = 64 : i64} {
    llvm.return
  }
  llvm.func @entry_block(%p: !llvm.ptr, %x: f32, %n: i64, %hi: i64) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    llvm.call @body(%c0, %hi, %p, %x, %n) : (i64, i64, !llvm.ptr, f32, i64) -> ()
    llvm.return
  }
  llvm.func @in_loop(%p: !llvm.ptr, %x: f32, %hi: i64) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c4 = llvm.mlir.constant(4 : i64) : i64
    llvm.br ^loop(%c0 : i64)
  ^loop(%t: i64):
    %more = llvm.icmp "slt" %t, %c4 : i64
    llvm.cond_br %more, ^body, ^done
  ^body:
    llvm.call @body(%t, %hi, %p, %x, %t) : (i64, i64, !llvm.ptr, f32, i64) -> ()
    %next = llvm.add %t, %c1 : i64
    llvm.br ^loop(%next : i64)
  ^done:
    llvm.return
  }
}

// -----

// No captures: no struct, a null context, a thunk that only forwards the
// range. Work 0 (unknown) is passed as it is. Two calls in one function get
// an alloca each (both at the top of the entry block, the later call's
// first) but share the thunk; a function without the marker is called as
// before.
// CHECK-LABEL: llvm.func internal @bare__thunk(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %[[LO:[^:]*]]: i64, %[[HI:[^:]*]]: i64) {
// CHECK-NEXT: llvm.call @bare(%[[LO]], %[[HI]]) : (i64, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func internal @pair__thunk(
// CHECK-SAME: %[[CTX:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64) {
// CHECK: llvm.getelementptr %[[CTX]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr)>
// CHECK-LABEL: llvm.func @f(
// CHECK-SAME: %[[A:[^:]*]]: !llvm.ptr, %[[B:[^:]*]]: !llvm.ptr, %[[N:[^:]*]]: i64) {
// CHECK-DAG: %[[S1:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr)> : (i64) -> !llvm.ptr
// CHECK-DAG: %[[S2:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr)> : (i64) -> !llvm.ptr
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[T0:.*]] = llvm.mlir.addressof @bare__thunk : !llvm.ptr
// CHECK-NEXT: %[[W0:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[NA0:.*]] = llvm.mlir.addressof @bare__name : !llvm.ptr
// CHECK-NEXT: %[[NM0:.*]] = llvm.getelementptr %[[NA0]]
// CHECK-NEXT: llvm.call @grove_rt_parallel_for(%[[T0]], %[[NULL]], %[[N]], %[[N]], %[[W0]], %[[NM0]])
// CHECK: llvm.store %[[A]]
// CHECK: llvm.store %[[B]]
// CHECK: %[[T1:.*]] = llvm.mlir.addressof @pair__thunk : !llvm.ptr
// CHECK-NEXT: %[[W1:.*]] = llvm.mlir.constant(5 : i64) : i64
// CHECK-NEXT: %[[NA1:.*]] = llvm.mlir.addressof @pair__name : !llvm.ptr
// CHECK-NEXT: %[[NM1:.*]] = llvm.getelementptr %[[NA1]]
// CHECK-NEXT: llvm.call @grove_rt_parallel_for(%[[T1]], %[[S2]], %[[N]], %[[N]], %[[W1]], %[[NM1]])
// CHECK: llvm.store %[[B]]
// CHECK: llvm.store %[[A]]
// CHECK: %[[T2:.*]] = llvm.mlir.addressof @pair__thunk : !llvm.ptr
// CHECK-NEXT: %[[W2:.*]] = llvm.mlir.constant(5 : i64) : i64
// CHECK-NEXT: %[[NA2:.*]] = llvm.mlir.addressof @pair__name : !llvm.ptr
// CHECK-NEXT: llvm.call @grove_rt_parallel_for(%[[T2]], %[[S1]], %[[N]], %[[N]], %[[W2]], %[[NA2]])
// CHECK-NEXT: llvm.call @plain(%[[N]], %[[N]]) : (i64, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NOT: __thunk
module {
  llvm.func internal @bare(%lo: i64, %hi: i64) attributes {grove.parallel_body = 0 : i64} {
    llvm.return
  }
  llvm.func internal @pair(%lo: i64, %hi: i64, %a: !llvm.ptr, %b: !llvm.ptr) attributes {grove.parallel_body = 5 : i64} {
    llvm.return
  }
  llvm.func internal @plain(%lo: i64, %hi: i64) {
    llvm.return
  }
  llvm.func @f(%a: !llvm.ptr, %b: !llvm.ptr, %n: i64) {
    llvm.call @bare(%n, %n) : (i64, i64) -> ()
    llvm.call @pair(%n, %n, %a, %b) : (i64, i64, !llvm.ptr, !llvm.ptr) -> ()
    llvm.call @pair(%n, %n, %b, %a) : (i64, i64, !llvm.ptr, !llvm.ptr) -> ()
    llvm.call @plain(%n, %n) : (i64, i64) -> ()
    llvm.return
  }
}

// -----

// A declaration of the service with the right type is used, not repeated;
// a symbol already named like the thunk makes the thunk take another name.
// CHECK-LABEL: llvm.func @grove_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr)
// CHECK-LABEL: llvm.func internal @body(
// CHECK: llvm.func internal @[[THUNK:body__thunk_[0-9]+]](
// CHECK: llvm.func @body__thunk()
// CHECK-LABEL: llvm.func @f(
// CHECK: llvm.mlir.addressof @[[THUNK]] : !llvm.ptr
// CHECK-NOT: llvm.func @grove_rt_parallel_for
module {
  llvm.func @grove_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr)
  llvm.func internal @body(%lo: i64, %hi: i64) attributes {grove.parallel_body = 1 : i64} {
    llvm.return
  }
  llvm.func @body__thunk()
  llvm.func @f(%n: i64) {
    llvm.call @body(%n, %n) : (i64, i64) -> ()
    llvm.return
  }
}

// -----

// A range of i32 (what an index lowers to on a 32-bit target): the runtime
// gets it sign-extended to i64, the thunk truncates the sub-ranges back for
// the body. The work may be any integer attribute; it is passed as i64.
// CHECK-LABEL: llvm.func internal @body32__thunk(
// CHECK-SAME: %[[CTX:[^:]*]]: !llvm.ptr, %[[LO:[^:]*]]: i64, %[[HI:[^:]*]]: i64) {
// CHECK-NEXT: %[[TLO:.*]] = llvm.trunc %[[LO]] : i64 to i32
// CHECK-NEXT: %[[THI:.*]] = llvm.trunc %[[HI]] : i64 to i32
// CHECK-NEXT: %[[G:.*]] = llvm.getelementptr %[[CTX]][0, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr)>
// CHECK-NEXT: %[[P:.*]] = llvm.load %[[G]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call @body32(%[[TLO]], %[[THI]], %[[P]]) : (i32, i32, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// CHECK-LABEL: llvm.func @f32(
// CHECK-SAME: %[[N:[^:]*]]: i32, %{{[^:]*}}: !llvm.ptr) {
// CHECK: %[[C3:.*]] = llvm.mlir.constant(-3 : i32) : i32
// CHECK: %[[T:.*]] = llvm.mlir.addressof @body32__thunk : !llvm.ptr
// CHECK-NEXT: %[[W:.*]] = llvm.mlir.constant(7 : i64) : i64
// CHECK-NEXT: %[[LO64:.*]] = llvm.sext %[[C3]] : i32 to i64
// CHECK-NEXT: %[[HI64:.*]] = llvm.sext %[[N]] : i32 to i64
// CHECK-NEXT: llvm.mlir.addressof @body32__name
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: llvm.call @grove_rt_parallel_for(%[[T]], %{{.*}}, %[[LO64]], %[[HI64]], %[[W]], %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, !llvm.ptr) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NOT: llvm.sext
module {
  llvm.func internal @body32(%lo: i32, %hi: i32, %p: !llvm.ptr) attributes {grove.parallel_body = 7 : i32} {
    llvm.return
  }
  llvm.func @f32(%n: i32, %p: !llvm.ptr) {
    %c = llvm.mlir.constant(-3 : i32) : i32
    llvm.call @body32(%c, %n, %p) : (i32, i32, !llvm.ptr) -> ()
    llvm.return
  }
}

// -----

// Nothing to dispatch: the module is left as it is, the marker of a body
// nobody calls included, and nothing is declared (a symbol of the reserved
// name but another type is no error then).
// CHECK-LABEL: module @untouched
// CHECK-NEXT: llvm.mlir.global external @grove_rt_parallel_for() {addr_space = 0 : i32} : i32
// CHECK-NEXT: llvm.func internal @body(%{{.*}}: i64, %{{.*}}: i64) attributes {grove.parallel_body = 7 : i64} {
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: llvm.func @f(%{{.*}}: !llvm.ptr, %{{.*}}: i64) {
// CHECK-NEXT: llvm.call %{{.*}}(%{{.*}}, %{{.*}}) : !llvm.ptr, (i64, i64) -> ()
// CHECK-NEXT: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: }
module @untouched {
  llvm.mlir.global external @grove_rt_parallel_for() : i32
  llvm.func internal @body(%lo: i64, %hi: i64) attributes {grove.parallel_body = 7 : i64} {
    llvm.return
  }
  llvm.func @f(%fn: !llvm.ptr, %n: i64) {
    llvm.call %fn(%n, %n) : !llvm.ptr, (i64, i64) -> ()
    llvm.return
  }
}
