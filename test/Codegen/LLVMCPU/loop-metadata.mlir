// RUN: grove-opt %s --grove-host-loop-metadata --mlir-print-local-scope | FileCheck %s
// RUN: grove-opt %s --grove-host-loop-metadata | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

// grove-host-loop-metadata (LoopHints.cpp), on hand-written LLVM-dialect
// functions: a branch carrying the discardable llvm.loop_annotation (put on
// an scf.for by grove-host-loop-hints, moved to the back edge by scf-to-cf;
// see loop-hints.mlir) gets it as its loop_annotation property. When the
// annotation lists parallelAccesses groups, every load and store of the loop
// whose back edge the branch is (the loop headed by the branch's successor,
// all its blocks) joins those groups, after any it already had; accesses
// outside that loop are untouched. Attributes are printed inline
// (--mlir-print-local-scope); a distinct group prints as the same
// distinct[N] wherever it appears, so captured numbers tie the accesses to
// the annotation.

#old = #llvm.access_group<id = distinct[0]<>>
#g1 = #llvm.access_group<id = distinct[1]<>>
#g2 = #llvm.access_group<id = distinct[2]<>>
#g3 = #llvm.access_group<id = distinct[3]<>>
#g4 = #llvm.access_group<id = distinct[4]<>>
#unroll = #llvm.loop_unroll<disable = true>
#par1 = #llvm.loop_annotation<unroll = #unroll, parallelAccesses = #g1>
#par2 = #llvm.loop_annotation<unroll = #unroll, parallelAccesses = #g2>
#par3 = #llvm.loop_annotation<unroll = #unroll, parallelAccesses = #g3>
#par4 = #llvm.loop_annotation<unroll = #unroll, parallelAccesses = #g4>
#plain = #llvm.loop_annotation<unroll = #unroll>

// The loop shape scf-to-cf produces: header, body, back edge from the body.
// The load before the loop and the store after it get no group; the load
// that already had one keeps it, the new group after it.
// CHECK-LABEL: llvm.func @simple(
// CHECK-SAME: %[[A:[^:]*]]: !llvm.ptr, %[[B:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64)
// CHECK: %[[PRE:.*]] = llvm.load %[[A]] : !llvm.ptr -> f32
// CHECK-NEXT: llvm.br ^bb1
// CHECK: ^bb2:
// CHECK-NEXT: %[[PA:.*]] = llvm.getelementptr %[[A]]
// CHECK-NEXT: llvm.load %[[PA]] {access_groups = [#llvm.access_group<id = distinct[[[G:[0-9]+]]]<>>]} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.load %[[PA]] {access_groups = [#llvm.access_group<id = distinct[[[OLD:[0-9]+]]]<>>, #llvm.access_group<id = distinct[[[G]]]<>>]} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.fadd
// CHECK-NEXT: %[[PB:.*]] = llvm.getelementptr %[[B]]
// CHECK-NEXT: llvm.store %{{.*}}, %[[PB]] {access_groups = [#llvm.access_group<id = distinct[[[G]]]<>>]} : f32, !llvm.ptr
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[[[G]]]<>>>}
// CHECK-NEXT: ^bb3:
// CHECK-NEXT: llvm.store %[[PRE]], %[[B]] : f32, !llvm.ptr
// CHECK-NEXT: llvm.return
llvm.func @simple(%a: !llvm.ptr, %b: !llvm.ptr, %n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %pre = llvm.load %a : !llvm.ptr -> f32
  llvm.br ^header(%c0 : i64)
^header(%i: i64):
  %more = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %more, ^body, ^exit
^body:
  %pa = llvm.getelementptr %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %pa : !llvm.ptr -> f32
  %w = llvm.load %pa {access_groups = [#old]} : !llvm.ptr -> f32
  %s = llvm.fadd %v, %w : f32
  %pb = llvm.getelementptr %b[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %s, %pb : f32, !llvm.ptr
  %next = llvm.add %i, %c1 : i64
  llvm.br ^header(%next : i64) {llvm.loop_annotation = #par1}
^exit:
  llvm.store %pre, %b : f32, !llvm.ptr
  llvm.return
}

// Without parallelAccesses the annotation only moves: no access changes,
// the existing group of the second load included.
// CHECK-LABEL: llvm.func @plain(
// CHECK-NOT: llvm.loop_annotation
// CHECK: ^bb2:
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.load %{{.*}} {access_groups = [#llvm.access_group<id = distinct[[[OLD]]]<>>]} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.fadd
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
// CHECK-NOT: llvm.loop_annotation
// CHECK: llvm.return
llvm.func @plain(%a: !llvm.ptr, %b: !llvm.ptr, %n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^header(%c0 : i64)
^header(%i: i64):
  %more = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %more, ^body, ^exit
^body:
  %pa = llvm.getelementptr %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %pa : !llvm.ptr -> f32
  %w = llvm.load %pa {access_groups = [#old]} : !llvm.ptr -> f32
  %s = llvm.fadd %v, %w : f32
  llvm.store %s, %pa : f32, !llvm.ptr
  %next = llvm.add %i, %c1 : i64
  llvm.br ^header(%next : i64) {llvm.loop_annotation = #plain}
^exit:
  llvm.return
}

// A rotated loop whose back edge is a llvm.cond_br: one successor is the
// header (the block itself), the other the exit, whose accesses stay out.
// CHECK-LABEL: llvm.func @cond_br_latch(
// CHECK: ^bb1(%{{.*}}: i64):
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: llvm.load %{{.*}} {access_groups = [#llvm.access_group<id = distinct[[[G:[0-9]+]]]<>>]} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} {access_groups = [#llvm.access_group<id = distinct[[[G]]]<>>]} : f32, !llvm.ptr
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.icmp
// CHECK-NEXT: llvm.cond_br %{{.*}}, ^bb1(%{{.*}} : i64), ^bb2 {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[[[G]]]<>>>}
// CHECK-NEXT: ^bb2:
// CHECK-NEXT: llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK-NEXT: llvm.return
llvm.func @cond_br_latch(%a: !llvm.ptr, %n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^body(%c0 : i64)
^body(%i: i64):
  %p = llvm.getelementptr %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v = llvm.load %p : !llvm.ptr -> f32
  llvm.store %v, %p : f32, !llvm.ptr
  %next = llvm.add %i, %c1 : i64
  %more = llvm.icmp "slt" %next, %n : i64
  llvm.cond_br %more, ^body(%next : i64), ^exit {llvm.loop_annotation = #par2}
^exit:
  %last = llvm.load %a : !llvm.ptr -> f32
  llvm.store %last, %a : f32, !llvm.ptr
  llvm.return
}

// A nest whose inner loop is annotated, its body a diamond: every block of
// the inner loop joins the group (both arms and the latch), the outer
// loop's own accesses do not. A second inner loop after the first has its
// own group and gets only that.
// CHECK-LABEL: llvm.func @nest(
// CHECK: ^bb1(%{{.*}}: i64):
// CHECK: ^bb2:
// CHECK-NEXT: llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.br ^bb3
// CHECK: ^bb4:
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: llvm.load %{{.*}} {access_groups = [#llvm.access_group<id = distinct[[[G3:[0-9]+]]]<>>]} : !llvm.ptr -> i1
// CHECK-NEXT: llvm.cond_br %{{.*}}, ^bb5, ^bb6
// CHECK-NEXT: ^bb5:
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} {access_groups = [#llvm.access_group<id = distinct[[[G3]]]<>>]} : f32, !llvm.ptr
// CHECK-NEXT: llvm.br ^bb7
// CHECK-NEXT: ^bb6:
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} {access_groups = [#llvm.access_group<id = distinct[[[G3]]]<>>]} : f32, !llvm.ptr
// CHECK-NEXT: llvm.br ^bb7
// CHECK-NEXT: ^bb7:
// CHECK-NEXT: llvm.load %{{.*}} {access_groups = [#llvm.access_group<id = distinct[[[G3]]]<>>]} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.br ^bb3(%{{.*}} : i64) {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[[[G3]]]<>>>}
// CHECK-NEXT: ^bb8:
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK-NEXT: llvm.br ^bb9
// CHECK: ^bb10:
// CHECK-NEXT: llvm.load %{{.*}} {access_groups = [#llvm.access_group<id = distinct[[[G4:[0-9]+]]]<>>]} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} {access_groups = [#llvm.access_group<id = distinct[[[G4]]]<>>]} : f32, !llvm.ptr
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.br ^bb9(%{{.*}} : i64) {loop_annotation = #llvm.loop_annotation<unroll = <disable = true>, parallelAccesses = <id = distinct[[[G4]]]<>>>}
// CHECK-NEXT: ^bb11:
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.br ^bb1(%{{.*}} : i64){{$}}
// CHECK-NEXT: ^bb12:
// CHECK-NEXT: llvm.return
llvm.func @nest(%a: !llvm.ptr, %m: !llvm.ptr, %n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %zero = llvm.mlir.constant(0.0 : f32) : f32
  llvm.br ^outer(%c0 : i64)
^outer(%i: i64):
  %omore = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %omore, ^obody, ^done
^obody:
  %x = llvm.load %a : !llvm.ptr -> f32
  llvm.br ^inner(%c0 : i64)
^inner(%j: i64):
  %imore = llvm.icmp "slt" %j, %n : i64
  llvm.cond_br %imore, ^ibody, ^iexit
^ibody:
  %pm = llvm.getelementptr %m[%j] : (!llvm.ptr, i64) -> !llvm.ptr, i1
  %flag = llvm.load %pm : !llvm.ptr -> i1
  llvm.cond_br %flag, ^then, ^else
^then:
  llvm.store %x, %a : f32, !llvm.ptr
  llvm.br ^latch
^else:
  llvm.store %zero, %a : f32, !llvm.ptr
  llvm.br ^latch
^latch:
  %y = llvm.load %a : !llvm.ptr -> f32
  %jnext = llvm.add %j, %c1 : i64
  llvm.br ^inner(%jnext : i64) {llvm.loop_annotation = #par3}
^iexit:
  llvm.store %x, %a : f32, !llvm.ptr
  llvm.br ^second(%c0 : i64)
^second(%k: i64):
  %smore = llvm.icmp "slt" %k, %n : i64
  llvm.cond_br %smore, ^sbody, ^oexit
^sbody:
  %z = llvm.load %a : !llvm.ptr -> f32
  llvm.store %z, %a : f32, !llvm.ptr
  %knext = llvm.add %k, %c1 : i64
  llvm.br ^second(%knext : i64) {llvm.loop_annotation = #par4}
^oexit:
  %inext = llvm.add %i, %c1 : i64
  llvm.br ^outer(%inext : i64)
^done:
  llvm.return
}

// The attribute on anything but a branch is dropped, so that the module
// leaves the pass without it; declarations are skipped.
// CHECK-LABEL: llvm.func @stray(
// CHECK-NEXT: llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK-NEXT: llvm.return
// CHECK: llvm.func @declaration(!llvm.ptr)
// CHECK-NOT: llvm.loop_annotation =
llvm.func @stray(%a: !llvm.ptr) -> f32 {
  %v = llvm.load %a {llvm.loop_annotation = #par1} : !llvm.ptr -> f32
  llvm.return %v : f32
}
llvm.func @declaration(!llvm.ptr)

// In LLVM IR: !llvm.loop metadata on the back edges, listing the parallel
// accesses, and !llvm.access.group on the accesses.
// LLVMIR-LABEL: define void @simple(
// LLVMIR-NEXT: load float, ptr %{{.*}}, align 4{{$}}
// LLVMIR: load float, ptr %{{.*}}, align 4, !llvm.access.group ![[G:[0-9]+]]{{$}}
// LLVMIR-NEXT: load float, ptr %{{.*}}, align 4, !llvm.access.group ![[BOTH:[0-9]+]]{{$}}
// LLVMIR: store float %{{.*}}, ptr %{{.*}}, align 4, !llvm.access.group ![[G]]{{$}}
// LLVMIR: br label %{{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// LLVMIR: store float %{{.*}}, ptr %{{.*}}, align 4{{$}}
// LLVMIR-DAG: ![[LOOP]] = distinct !{![[LOOP]], ![[UNROLL:[0-9]+]], ![[PA:[0-9]+]]}
// LLVMIR-DAG: ![[UNROLL]] = !{!"llvm.loop.unroll.disable"}
// LLVMIR-DAG: ![[PA]] = !{!"llvm.loop.parallel_accesses", ![[G]]}
// LLVMIR-DAG: ![[G]] = distinct !{}
// LLVMIR-DAG: ![[BOTH]] = !{![[OLD:[0-9]+]], ![[G]]}
// LLVMIR-DAG: ![[OLD]] = distinct !{}
