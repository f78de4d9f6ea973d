// RUN: grove-opt %s -split-input-file --convert-linalg-to-gpu-launch=warp-reductions=false | FileCheck %s
// RUN: grove-opt %s -split-input-file --convert-linalg-to-gpu-launch=warp-reductions=false --canonicalize | FileCheck %s --check-prefix=CANON
// RUN: grove-opt %s -split-input-file --convert-linalg-to-gpu-launch="block-size=128 warp-reductions=false" | FileCheck %s --check-prefix=B128

// convert-linalg-to-gpu-launch (LinalgToGPULaunch.cpp) on memref linalg ops,
// a thread per output point (warp-reductions=false; the warp-per-point
// kernels of long innermost reductions are in linalg-to-gpu-launch-warp.mlir,
// and the default takes them for the dynamic row reductions below).
// The plain run checks the launch the pass builds: the parallel iteration
// space (dynamic sizes included) linearized onto a 1-D grid of
// ceildiv(total, block) blocks of `block` threads, the global id
// block_id.x * block + thread_id.x, the bounds guard and the delinearized
// point. When every output is indexed by parallel loops only (the usual
// case) each output element belongs to one thread: it is loaded once, the
// reduction loops carry it as an scf.for iter_arg (a register), and it is
// stored once after them; the inputs are loaded in the innermost loop. An
// output indexed by a reduction loop falls back to scf.parallel (or plain
// loops) with a load and a store of the output in every iteration. CANON
// checks, after canonicalization, which index each operand is read and
// written with: consecutive threads walk the innermost parallel index,
// reductions are sequential loops inside the thread, and the load of an
// output the body does not read is gone. B128 checks the block-size option.
// The diagnostics are in linalg-to-gpu-launch-invalid.mlir.

// A 2-D elementwise generic with a broadcast operand (bias add + relu, the
// fused form grove-to-cuda produces): one launch over M * N threads.
// CHECK-LABEL: func.func @elementwise_broadcast
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK: %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[M:.*]] = memref.dim %[[X]], %[[I0]] : memref<?x?xf32>
// CHECK-NEXT: %[[I1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[N:.*]] = memref.dim %[[X]], %[[I1]] : memref<?x?xf32>
// CHECK-NOT: gpu.launch
// CHECK: %[[TOTAL:.*]] = arith.muli %[[M]], %[[N]] : index
// CHECK-NEXT: %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK-NEXT: %[[GRID:.*]] = arith.ceildivui %[[TOTAL]], %[[BLOCK]] : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %[[GRID]], %{{[a-z0-9_]+}} = %[[ONE]], %{{[a-z0-9_]+}} = %[[ONE]])
// CHECK-SAME: threads(%[[TX:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %[[BLOCK]], %{{[a-z0-9_]+}} = %[[ONE]], %{{[a-z0-9_]+}} = %[[ONE]])
// CHECK-NEXT: %[[BASE:.*]] = arith.muli %[[BX]], %[[BLOCK]] : index
// CHECK-NEXT: %[[GID:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[GID]], %[[TOTAL]] : index
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: %[[P:.*]]:2 = affine.delinearize_index %[[GID]] into (%[[M]], %[[N]]) : index, index
// The output is loaded first whether or not the body reads it (here it does
// not: canonicalization drops the load, see CANON); no reduction, no loop.
// CHECK-NEXT: memref.load %[[Y]][%[[P]]#0, %[[P]]#1] : memref<?x?xf32>
// CHECK-NEXT: %[[XV:.*]] = memref.load %[[X]][%[[P]]#0, %[[P]]#1] : memref<?x?xf32>
// CHECK-NEXT: %[[BV:.*]] = memref.load %[[B]][%[[P]]#1] : memref<?xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[XV]], %[[BV]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[S]], %{{.*}} : f32
// CHECK-NEXT: memref.store %[[R]], %[[Y]][%[[P]]#0, %[[P]]#1] : memref<?x?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
// CHECK-NEXT: }
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.
// CHECK: return

// Thread (i, j) reads x[i, j] and bias[j], writes y[i, j].
// CANON-LABEL: func.func @elementwise_broadcast
// CANON-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CANON-DAG: %[[M:.*]] = memref.dim %[[X]], %c0
// CANON-DAG: %[[N:.*]] = memref.dim %[[X]], %c1
// CANON: %[[TOTAL:.*]] = arith.muli %[[M]], %[[N]] : index
// CANON: %[[GID:.*]] = arith.addi
// CANON: arith.cmpi ult, %[[GID]], %[[TOTAL]] : index
// CANON: %[[P:.*]]:2 = affine.delinearize_index %[[GID]] into (%[[M]], %[[N]]) : index, index
// The unread output's load is gone: the next op is the load of x.
// CANON-NEXT: %[[XV:.*]] = memref.load %[[X]][%[[P]]#0, %[[P]]#1] : memref<?x?xf32>
// CANON-NEXT: %[[BV:.*]] = memref.load %[[B]][%[[P]]#1] : memref<?xf32>
// CANON-NEXT: %[[S:.*]] = arith.addf %[[XV]], %[[BV]] : f32
// CANON-NEXT: %[[R:.*]] = arith.maximumf %[[S]], %{{.*}} : f32
// CANON-NEXT: memref.store %[[R]], %[[Y]][%[[P]]#0, %[[P]]#1] : memref<?x?xf32>

// The block size option replaces every 256.
// B128-LABEL: func.func @elementwise_broadcast
// B128-NOT: 256
// B128: %[[BLOCK:.*]] = arith.constant 128 : index
// B128-NEXT: %[[GRID:.*]] = arith.ceildivui %{{.*}}, %[[BLOCK]] : index
// B128-NOT: 256
// B128: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %[[GRID]], {{[^)]*}}) threads(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %[[BLOCK]],
// B128-NEXT: arith.muli %[[BX]], %[[BLOCK]] : index
// B128-NOT: 256
// B128: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @elementwise_broadcast(%x: memref<?x?xf32>, %b: memref<?xf32>, %y: memref<?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<?x?xf32>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A named op is generalized first: a fill is one thread per element.
// CHECK-LABEL: func.func @fill
// CHECK-SAME: (%[[Y:.*]]: memref<?x16xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK-NEXT: %[[GRID:.*]] = arith.ceildivui %[[TOTAL:.*]], %[[BLOCK]] : index
// CHECK: gpu.launch blocks({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[GRID]], {{.*}}) threads({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[BLOCK]],
// CHECK-SAME: function(@fill_k0_map)
// CHECK: arith.cmpi ult, %{{.*}}, %[[TOTAL]] : index
// CHECK-NEXT: scf.if
// CHECK-NEXT: %[[P:.*]]:2 = affine.delinearize_index %{{.*}} into (%{{.*}}, 16) : index, index
// CHECK-NEXT: memref.load %[[Y]][%[[P]]#0, %[[P]]#1] : memref<?x16xf32>
// The scalar input is used as it is, not loaded.
// CHECK-NEXT: memref.store %[[ZERO]], %[[Y]][%[[P]]#0, %[[P]]#1] : memref<?x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: linalg.fill

// CANON-LABEL: func.func @fill
// CANON-SAME: (%[[Y:.*]]: memref<?x16xf32>)
// CANON: %[[M:.*]] = memref.dim %[[Y]], %c0
// CANON: %[[TOTAL:.*]] = arith.muli %[[M]], %c16 : index
// CANON: %[[P:.*]]:2 = affine.delinearize_index %{{.*}} into (%[[M]], 16) : index, index
// CANON-NEXT: memref.store %{{.*}}, %[[Y]][%[[P]]#0, %[[P]]#1] : memref<?x16xf32>
// CANON-NEXT: }
// CANON-NEXT: gpu.terminator
func.func @fill(%y: memref<?x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<?x16xf32>)
  return
}

// -----

// A row reduction (over dim 1): one thread per row, the reduction a
// sequential loop inside the guarded body whose iter_arg is the row's
// accumulator: y[row] is loaded once before the loop and stored once after
// it, never inside.
// CHECK-LABEL: func.func @row_reduction
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?xf32>)
// CHECK: %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[M:.*]] = memref.dim %[[X]], %[[I0]] : memref<?x?xf32>
// CHECK-NEXT: %[[I1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[N:.*]] = memref.dim %[[X]], %[[I1]] : memref<?x?xf32>
// The thread count is M itself (1 x M folds).
// CHECK-NOT: arith.muli
// CHECK: %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK-NEXT: %[[GRID:.*]] = arith.ceildivui %[[M]], %[[BLOCK]] : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: gpu.launch blocks({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[GRID]], %{{[a-z0-9_]+}} = %[[ONE]], %{{[a-z0-9_]+}} = %[[ONE]]) threads({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[BLOCK]], %{{[a-z0-9_]+}} = %[[ONE]], %{{[a-z0-9_]+}} = %[[ONE]])
// CHECK: arith.cmpi ult, %{{.*}}, %[[M]] : index
// CHECK-NEXT: scf.if
// CHECK-NEXT: %[[ROW:.*]] = affine.delinearize_index %{{.*}} into (%[[M]]) : index
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[Y]][%[[ROW]]] : memref<?xf32>
// CHECK-NEXT: %[[SUM:.*]] = scf.for %[[K:[a-z0-9_]+]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[ACC:[a-z0-9_]+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[K]]] : memref<?x?xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[V]], %[[ACC]] : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %[[Y]][%[[ROW]]] : memref<?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.reduce

// CANON-LABEL: func.func @row_reduction
// CANON-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?xf32>)
// CANON-DAG: %[[M:.*]] = memref.dim %[[X]], %c0
// CANON-DAG: %[[N:.*]] = memref.dim %[[X]], %c1
// CANON: %[[GRID:.*]] = arith.ceildivui %[[M]], %c256 : index
// CANON: gpu.launch blocks({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[GRID]],
// CANON: %[[ROW:.*]] = arith.addi
// CANON-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %[[M]] : index
// CANON-NEXT: scf.if %[[IN]] {
// CANON-NEXT: %[[INIT:.*]] = memref.load %[[Y]][%[[ROW]]] : memref<?xf32>
// CANON-NEXT: %[[SUM:.*]] = scf.for %[[K:[a-z0-9_]+]] = %c0 to %[[N]] step %c1 iter_args(%[[ACC:[a-z0-9_]+]] = %[[INIT]]) -> (f32) {
// CANON-NEXT: %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[K]]] : memref<?x?xf32>
// CANON-NEXT: %[[S:.*]] = arith.addf %[[V]], %[[ACC]] : f32
// CANON-NEXT: scf.yield %[[S]] : f32
// CANON-NEXT: }
// CANON-NEXT: memref.store %[[SUM]], %[[Y]][%[[ROW]]] : memref<?xf32>
// CANON-NEXT: }
// CANON-NEXT: gpu.terminator
func.func @row_reduction(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  linalg.reduce ins(%x : memref<?x?xf32>) outs(%y : memref<?xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A fill that only initialises a fresh buffer for a row reduction is folded
// into the reduction's kernel: the accumulator starts from the fill's value
// (no load of y), the fill's own launch is gone, and the buffer is read
// after the reduction as before.
// CHECK-LABEL: func.func @fill_folded_into_reduction
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[Y:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK: %[[ROW:.*]] = affine.delinearize_index
// CHECK-NOT: memref.load %[[Y]]
// CHECK-NEXT: %[[SUM:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (f32) {
// CHECK: memref.store %[[SUM]], %[[Y]][%[[ROW]]] : memref<?xf32>
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.load %[[Y]]
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: memref.dealloc %[[Y]]
func.func @fill_folded_into_reduction(%x: memref<?x?xf32>, %out: memref<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %y = memref.alloc(%m) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<?xf32>)
  linalg.reduce ins(%x : memref<?x?xf32>) outs(%y : memref<?xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  linalg.copy ins(%y : memref<?xf32>) outs(%out : memref<?xf32>)
  memref.dealloc %y : memref<?xf32>
  return
}

// -----

// Not folded: the filled buffer is read between the fill and the reduction
// (the reduction must see the fill's values, written by the fill's kernel);
// a function argument (written by the caller) is not folded either.
// CHECK-LABEL: func.func @fill_not_folded
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[OUT:.*]]: memref<?xf32>, %[[ARG:.*]]: memref<?xf32>)
// CHECK: %[[Y:.*]] = memref.alloc
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK: gpu.launch
// CHECK: memref.load %[[Y]]
// CHECK: gpu.launch
// CHECK: %[[INIT:.*]] = memref.load %[[Y]]
// CHECK-NEXT: scf.for %{{.*}} iter_args(%{{.*}} = %[[INIT]])
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[ARG]]
// CHECK: gpu.launch
// CHECK: %[[INIT2:.*]] = memref.load %[[ARG]]
// CHECK-NEXT: scf.for %{{.*}} iter_args(%{{.*}} = %[[INIT2]])
func.func @fill_not_folded(%x: memref<?x?xf32>, %out: memref<?xf32>, %arg: memref<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %y = memref.alloc(%m) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<?xf32>)
  linalg.copy ins(%y : memref<?xf32>) outs(%out : memref<?xf32>)
  linalg.reduce ins(%x : memref<?x?xf32>) outs(%y : memref<?xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  linalg.fill ins(%zero : f32) outs(%arg : memref<?xf32>)
  linalg.reduce ins(%x : memref<?x?xf32>) outs(%arg : memref<?xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  memref.dealloc %y : memref<?xf32>
  return
}

// -----

// A column reduction (over dim 0): the parallel dim is moved outermost, so
// it is still one launch over the N columns, each thread looping over the
// M rows of its column.
// CHECK-LABEL: func.func @column_reduction
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?xf32>)
// CHECK: %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[M:.*]] = memref.dim %[[X]], %[[I0]] : memref<?x?xf32>
// CHECK-NEXT: %[[I1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[N:.*]] = memref.dim %[[X]], %[[I1]] : memref<?x?xf32>
// CHECK: %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK-NEXT: %[[GRID:.*]] = arith.ceildivui %[[N]], %[[BLOCK]] : index
// CHECK: gpu.launch blocks({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[GRID]], {{.*}}) threads({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[BLOCK]],
// CHECK: %[[COL:.*]] = affine.delinearize_index %{{.*}} into (%[[N]]) : index
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[Y]][%[[COL]]] : memref<?xf32>
// CHECK-NEXT: %[[MAX:.*]] = scf.for %[[K:[a-z0-9_]+]] = %{{.*}} to %[[M]] step %{{.*}} iter_args(%[[ACC:[a-z0-9_]+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[K]], %[[COL]]] : memref<?x?xf32>
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[V]], %[[ACC]] : f32
// CHECK-NEXT: scf.yield %[[R]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[MAX]], %[[Y]][%[[COL]]] : memref<?xf32>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.reduce

// Thread j reads x[k, j] for k = 0 .. M: neighbouring threads, neighbouring
// columns.
// CANON-LABEL: func.func @column_reduction
// CANON-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?xf32>)
// CANON-DAG: %[[M:.*]] = memref.dim %[[X]], %c0
// CANON-DAG: %[[N:.*]] = memref.dim %[[X]], %c1
// CANON: %[[GRID:.*]] = arith.ceildivui %[[N]], %c256 : index
// CANON: gpu.launch blocks({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[GRID]],
// CANON: %[[COL:.*]] = arith.addi
// CANON-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[COL]], %[[N]] : index
// CANON-NEXT: scf.if %[[IN]] {
// CANON-NEXT: %[[INIT:.*]] = memref.load %[[Y]][%[[COL]]] : memref<?xf32>
// CANON-NEXT: %[[MAX:.*]] = scf.for %[[K:[a-z0-9_]+]] = %c0 to %[[M]] step %c1 iter_args(%[[ACC:[a-z0-9_]+]] = %[[INIT]]) -> (f32) {
// CANON-NEXT: %[[V:.*]] = memref.load %[[X]][%[[K]], %[[COL]]] : memref<?x?xf32>
// CANON-NEXT: %[[R:.*]] = arith.maximumf %[[V]], %[[ACC]] : f32
// CANON-NEXT: scf.yield %[[R]] : f32
// CANON-NEXT: }
// CANON-NEXT: memref.store %[[MAX]], %[[Y]][%[[COL]]] : memref<?xf32>
func.func @column_reduction(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  linalg.reduce ins(%x : memref<?x?xf32>) outs(%y : memref<?xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.maximumf %a, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A 3-D generic whose reduction dim sits between its parallel dims
// (d0 parallel, d1 reduction, d2 parallel): the two parallel dims are
// linearized, innermost (d2) fastest, the reduction loops inside.
// CHECK-LABEL: func.func @middle_reduction
// CHECK: gpu.launch
// CHECK: affine.delinearize_index %{{.*}} into (%{{.*}}, %{{.*}}) : index, index
// CHECK-NEXT: memref.load
// CHECK-NEXT: scf.for {{.*}} iter_args(
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.reduce
// CANON-LABEL: func.func @middle_reduction
// CANON-SAME: (%[[X:.*]]: memref<?x?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CANON-DAG: %[[D0:.*]] = memref.dim %[[X]], %c0
// CANON-DAG: %[[D1:.*]] = memref.dim %[[X]], %c1
// CANON-DAG: %[[D2:.*]] = memref.dim %[[X]], %c2
// CANON: %[[TOTAL:.*]] = arith.muli %[[D0]], %[[D2]] : index
// CANON: arith.cmpi ult, %{{.*}}, %[[TOTAL]] : index
// CANON: %[[P:.*]]:2 = affine.delinearize_index %{{.*}} into (%[[D0]], %[[D2]]) : index, index
// CANON-NEXT: %[[INIT:.*]] = memref.load %[[Y]][%[[P]]#0, %[[P]]#1] : memref<?x?xf32>
// CANON-NEXT: %[[SUM:.*]] = scf.for %[[K:[a-z0-9_]+]] = %c0 to %[[D1]] step %c1 iter_args(%[[ACC:[a-z0-9_]+]] = %[[INIT]]) -> (f32) {
// CANON-NEXT: %[[V:.*]] = memref.load %[[X]][%[[P]]#0, %[[K]], %[[P]]#1] : memref<?x?x?xf32>
// CANON-NEXT: %[[S:.*]] = arith.addf %[[V]], %[[ACC]] : f32
// CANON-NEXT: scf.yield %[[S]] : f32
// CANON-NEXT: }
// CANON-NEXT: memref.store %[[SUM]], %[[Y]][%[[P]]#0, %[[P]]#1] : memref<?x?xf32>
// CANON-NOT: gpu.launch
// CANON: return
func.func @middle_reduction(%x: memref<?x?x?xf32>, %y: memref<?x?xf32>) {
  linalg.reduce ins(%x : memref<?x?x?xf32>) outs(%y : memref<?x?xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Two outputs and linalg.index: a column argmax (reduction d0, parallel d1).
// One thread per column, both outputs carried as iter_args of the one loop
// over the rows and stored once after it; linalg.index 0 (the row, renumbered
// by the interchange) is the loop's induction variable.
// CHECK-LABEL: func.func @column_argmax
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[V:.*]]: memref<?xf32>, %[[I:.*]]: memref<?xi64>)
// CHECK: gpu.launch
// CHECK: %[[COL:.*]] = affine.delinearize_index
// CHECK-NEXT: %[[V0:.*]] = memref.load %[[V]][%[[COL]]] : memref<?xf32>
// CHECK-NEXT: %[[I0:.*]] = memref.load %[[I]][%[[COL]]] : memref<?xi64>
// CHECK-NEXT: %[[R:.*]]:2 = scf.for %{{.*}} iter_args(%{{[a-z0-9_]+}} = %[[V0]], %{{[a-z0-9_]+}} = %[[I0]]) -> (f32, i64) {
// CHECK-NOT: memref.store
// CHECK-NOT: linalg.index
// CHECK: scf.yield %{{.*}}, %{{.*}} : f32, i64
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[R]]#0, %[[V]][%[[COL]]] : memref<?xf32>
// CHECK-NEXT: memref.store %[[R]]#1, %[[I]][%[[COL]]] : memref<?xi64>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: linalg.

// CANON-LABEL: func.func @column_argmax
// CANON-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[V:.*]]: memref<?xf32>, %[[I:.*]]: memref<?xi64>)
// CANON-DAG: %[[M:.*]] = memref.dim %[[X]], %c0
// CANON-DAG: %[[N:.*]] = memref.dim %[[X]], %c1
// CANON: %[[COL:.*]] = arith.addi
// CANON-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[COL]], %[[N]] : index
// CANON-NEXT: scf.if %[[IN]] {
// CANON-NEXT: %[[V0:.*]] = memref.load %[[V]][%[[COL]]] : memref<?xf32>
// CANON-NEXT: %[[I0:.*]] = memref.load %[[I]][%[[COL]]] : memref<?xi64>
// CANON-NEXT: %[[R:.*]]:2 = scf.for %[[K:[a-z0-9_]+]] = %c0 to %[[M]] step %c1 iter_args(%[[MAX:[a-z0-9_]+]] = %[[V0]], %[[ARG:[a-z0-9_]+]] = %[[I0]]) -> (f32, i64) {
// CANON-NEXT: %[[A:.*]] = memref.load %[[X]][%[[K]], %[[COL]]] : memref<?x?xf32>
// CANON-NEXT: %[[KI:.*]] = arith.index_cast %[[K]] : index to i64
// CANON-NEXT: %[[GT:.*]] = arith.cmpf ogt, %[[A]], %[[MAX]] : f32
// CANON-NEXT: %[[NM:.*]] = arith.select %[[GT]], %[[A]], %[[MAX]] : f32
// CANON-NEXT: %[[NA:.*]] = arith.select %[[GT]], %[[KI]], %[[ARG]] : i64
// CANON-NEXT: scf.yield %[[NM]], %[[NA]] : f32, i64
// CANON-NEXT: }
// CANON-NEXT: memref.store %[[R]]#0, %[[V]][%[[COL]]] : memref<?xf32>
// CANON-NEXT: memref.store %[[R]]#1, %[[I]][%[[COL]]] : memref<?xi64>
func.func @column_argmax(%x: memref<?x?xf32>, %v: memref<?xf32>, %i: memref<?xi64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<?x?xf32>) outs(%v, %i : memref<?xf32>, memref<?xi64>) {
  ^bb0(%a: f32, %m: f32, %j: i64):
    %k = linalg.index 0 : index
    %ki = arith.index_cast %k : index to i64
    %gt = arith.cmpf ogt, %a, %m : f32
    %nm = arith.select %gt, %a, %m : f32
    %nj = arith.select %gt, %ki, %j : i64
    linalg.yield %nm, %nj : f32, i64
  }
  return
}

// -----

// A full reduction has no parallel loop: a single-thread launch (1x1x1
// blocks of 1x1x1 threads), no guard, the sizes read on the host; inside,
// the whole loop nest with the scalar accumulator threaded through both
// loops' iter_args, stored once after them.
// CHECK-LABEL: func.func @full_reduction
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<f32>)
// CHECK: %[[M:.*]] = memref.dim %[[X]]
// CHECK: %[[N:.*]] = memref.dim %[[X]]
// CHECK-NOT: gpu.launch
// CHECK: %[[GRID:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[BLOCK:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: gpu.launch blocks({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[GRID]], %{{[a-z0-9_]+}} = %[[ONE]], %{{[a-z0-9_]+}} = %[[ONE]]) threads({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[BLOCK]], %{{[a-z0-9_]+}} = %[[ONE]], %{{[a-z0-9_]+}} = %[[ONE]])
// CHECK-SAME: function(@full_reduction_k0_serial)
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[Y]][] : memref<f32>
// CHECK-NEXT: %[[R:.*]] = scf.for %[[I:[a-z0-9_]+]] = %{{.*}} to %[[M]] step %{{.*}} iter_args(%[[A0:[a-z0-9_]+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[R1:.*]] = scf.for %[[J:[a-z0-9_]+]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[A1:[a-z0-9_]+]] = %[[A0]]) -> (f32) {
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[V]], %[[A1]] : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[R1]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[R]], %[[Y]][] : memref<f32>
// CHECK-NEXT: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @full_reduction(%x: memref<?x?xf32>, %y: memref<f32>) {
  linalg.reduce ins(%x : memref<?x?xf32>) outs(%y : memref<f32>) dimensions = [0, 1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A rank-0 elementwise op: also a single thread.
// CHECK-LABEL: func.func @rank0
// CHECK-SAME: (%[[X:.*]]: memref<f32>, %[[Y:.*]]: memref<f32>)
// CHECK: %[[GRID:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[BLOCK:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: gpu.launch blocks({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[GRID]], %{{[a-z0-9_]+}} = %[[ONE]], %{{[a-z0-9_]+}} = %[[ONE]]) threads({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[BLOCK]], %{{[a-z0-9_]+}} = %[[ONE]], %{{[a-z0-9_]+}} = %[[ONE]])
// CHECK-NEXT: memref.load %[[Y]][] : memref<f32>
// CHECK-NEXT: %[[V:.*]] = memref.load %[[X]][] : memref<f32>
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[V]] : f32
// CHECK-NEXT: memref.store %[[NEG]], %[[Y]][] : memref<f32>
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: linalg.generic

// CANON-LABEL: func.func @rank0
// CANON-SAME: (%[[X:.*]]: memref<f32>, %[[Y:.*]]: memref<f32>)
// CANON: gpu.launch
// CANON-NEXT: %[[V:.*]] = memref.load %[[X]][] : memref<f32>
// CANON-NEXT: %[[NEG:.*]] = arith.negf %[[V]] : f32
// CANON-NEXT: memref.store %[[NEG]], %[[Y]][] : memref<f32>
// CANON-NEXT: gpu.terminator
func.func @rank0(%x: memref<f32>, %y: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%x : memref<f32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// The fallback: the verifier accepts an output indexed by a reduction loop
// (here d1 indexes y), and then a thread does not own its output elements
// across the reduction, so there is no register accumulation: the op goes
// through scf.parallel over its parallel loops (the ub - lb, ceildiv step
// counts below come from it), linearized the same way, with the reduction a
// plain scf.for (no iter_args) that loads and stores y in every iteration.
// CHECK-LABEL: func.func @output_indexed_by_reduction
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK: %[[M:.*]] = memref.dim %[[X]],
// CHECK: %[[N:.*]] = memref.dim %[[X]],
// CHECK-NOT: gpu.launch
// The count of rows, M - 0 over step 1, folds to M.
// CHECK: gpu.launch
// CHECK: arith.cmpi ult, %{{.*}}, %[[M]] : index
// CHECK-NEXT: scf.if
// CHECK-NEXT: affine.delinearize_index %{{.*}} into (%[[M]]) : index
// CHECK-NOT: memref.
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{[a-z0-9_]+}} {
// CHECK: memref.load %[[X]]
// CHECK: memref.load %[[Y]]
// CHECK: arith.addf
// CHECK-NEXT: memref.store %{{.*}}, %[[Y]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: linalg.generic

// CANON-LABEL: func.func @output_indexed_by_reduction
// CANON-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CANON-DAG: %[[M:.*]] = memref.dim %[[X]], %c0
// CANON-DAG: %[[N:.*]] = memref.dim %[[X]], %c1
// CANON: %[[ROW:.*]] = arith.addi
// CANON-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %[[M]] : index
// CANON-NEXT: scf.if %[[IN]] {
// CANON-NEXT: scf.for %[[K:[a-z0-9_]+]] = %c0 to %[[N]] step %c1 {
// CANON-NEXT: %[[V:.*]] = memref.load %[[X]][%[[ROW]], %[[K]]] : memref<?x?xf32>
// CANON-NEXT: %[[O:.*]] = memref.load %[[Y]][%[[ROW]], %[[K]]] : memref<?x?xf32>
// CANON-NEXT: %[[S:.*]] = arith.addf %[[V]], %[[O]] : f32
// CANON-NEXT: memref.store %[[S]], %[[Y]][%[[ROW]], %[[K]]] : memref<?x?xf32>
// CANON-NEXT: }
// CANON-NEXT: }
func.func @output_indexed_by_reduction(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The fallback with no parallel loop: a single-thread launch around the
// plain loop nest (linalgOpToLoops), the sizes read inside the kernel, y
// loaded and stored in every iteration.
// CHECK-LABEL: func.func @output_indexed_by_reduction_only
// CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>)
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ONE2:.*]] = arith.constant 1 : index
// CHECK-NEXT: gpu.launch blocks({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[ONE]], %{{[a-z0-9_]+}} = %[[ONE2]], %{{[a-z0-9_]+}} = %[[ONE2]]) threads({{[^)]*}}) in (%{{[a-z0-9_]+}} = %[[ONE]], %{{[a-z0-9_]+}} = %[[ONE2]], %{{[a-z0-9_]+}} = %[[ONE2]])
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[N:.*]] = memref.dim %[[X]], %[[C0]] : memref<?xf32>
// CHECK-NOT: memref.load
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{[a-z0-9_]+}} {
// CHECK: memref.load %[[X]]
// CHECK: memref.load %[[Y]]
// CHECK: arith.addf
// CHECK-NEXT: memref.store %{{.*}}, %[[Y]]
// CHECK-NEXT: }
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: linalg.generic

// CANON-LABEL: func.func @output_indexed_by_reduction_only
// CANON-SAME: (%[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>)
// CANON: gpu.launch
// CANON-NEXT: %[[N:.*]] = memref.dim %[[X]], %c0 : memref<?xf32>
// CANON-NEXT: scf.for %[[K:[a-z0-9_]+]] = %c0 to %[[N]] step %c1 {
// CANON-NEXT: %[[V:.*]] = memref.load %[[X]][%[[K]]] : memref<?xf32>
// CANON-NEXT: %[[O:.*]] = memref.load %[[Y]][%[[K]]] : memref<?xf32>
// CANON-NEXT: %[[S:.*]] = arith.addf %[[V]], %[[O]] : f32
// CANON-NEXT: memref.store %[[S]], %[[Y]][%[[K]]] : memref<?xf32>
// CANON-NEXT: }
// CANON-NEXT: gpu.terminator
func.func @output_indexed_by_reduction_only(%x: memref<?xf32>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A copy out of a strided view (what grove-legalize-memref makes of a
// non-contiguous memref.copy): a kernel reading through the layout.
// CHECK-LABEL: func.func @copy_strided
// CHECK-SAME: (%[[SRC:.*]]: memref<4x8xf32, strided<[16, 1], offset: ?>>, %[[DST:.*]]: memref<4x8xf32>)
// CHECK: %[[BLOCK:.*]] = arith.constant 256 : index
// CHECK: gpu.launch
// CHECK: affine.delinearize_index
// CHECK: %[[V:.*]] = memref.load %[[SRC]][%{{.*}}, %{{.*}}] : memref<4x8xf32, strided<[16, 1], offset: ?>>
// CHECK: memref.store %[[V]], %[[DST]][%{{.*}}, %{{.*}}] : memref<4x8xf32>
// CHECK-NOT: linalg.copy

// All sizes static: 32 threads in one block.
// CANON-LABEL: func.func @copy_strided
// CANON-SAME: (%[[SRC:.*]]: memref<4x8xf32, strided<[16, 1], offset: ?>>, %[[DST:.*]]: memref<4x8xf32>)
// CANON: gpu.launch blocks(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c1, %{{[a-z0-9_]+}} = %c1, %{{[a-z0-9_]+}} = %c1) threads(%[[TX:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c256,
// CANON-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[TX]], %c32 : index
// CANON-NEXT: scf.if %[[IN]] {
// CANON-NEXT: %[[P:.*]]:2 = affine.delinearize_index %[[TX]] into (4, 8) : index, index
// CANON-NEXT: %[[V:.*]] = memref.load %[[SRC]][%[[P]]#0, %[[P]]#1]
// CANON-NEXT: memref.store %[[V]], %[[DST]][%[[P]]#0, %[[P]]#1]
func.func @copy_strided(%src: memref<4x8xf32, strided<[16, 1], offset: ?>>, %dst: memref<4x8xf32>) {
  linalg.copy ins(%src : memref<4x8xf32, strided<[16, 1], offset: ?>>) outs(%dst : memref<4x8xf32>)
  return
}

// -----

// Two ops, two launches, in program order.
// CHECK-LABEL: func.func @two_ops
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: arith.mulf
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @two_ops(%x: memref<?xf32>, %y: memref<?xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%y : memref<?xf32>)
  linalg.mul ins(%x, %y : memref<?xf32>, memref<?xf32>) outs(%y : memref<?xf32>)
  return
}

// -----

// An op already inside a launch is device code: left alone.
// CHECK-LABEL: func.func @inside_launch
// CHECK: gpu.launch
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @inside_launch(%y: memref<16xf32>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    linalg.fill ins(%zero : f32) outs(%y : memref<16xf32>)
    gpu.terminator
  }
  return
}

// -----

// The output is also an input: each iteration must re-read what the last
// one stored, so the accumulator cannot live in a register - the general
// path (no iter_args) is kept.
// CANON-LABEL: func.func @output_also_input
// CANON-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?xf32>)
// CANON: scf.if
// CANON-NEXT: scf.for %[[K:[a-z0-9_]+]] = %c0 to %{{.*}} step %c1 {
// CANON-NEXT: memref.load %[[X]]
// CANON-NEXT: memref.load %[[Y]]
// CANON-NEXT: memref.load %[[Y]]
// CANON: memref.store %{{.*}}, %[[Y]]
// CANON-NEXT: }
func.func @output_also_input(%x: memref<?x?xf32>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %y : memref<?x?xf32>, memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %o : f32
    linalg.yield %t : f32
  }
  return
}
