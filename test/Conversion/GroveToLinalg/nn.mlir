// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s
// RUN: grove-opt %s -split-input-file --grove-common | FileCheck %s --check-prefix=COMMON

// Convolutions, normalisation, pooling (NN.cpp) and split attention
// (SplitAttention.cpp).
// Convolutions and pools become linalg's named NCHW ops on an explicitly
// padded input (tensor.pad; padding is [top, left, bottom, right], so low
// takes top/left and high bottom/right), grouped convolutions go through
// the NGCHW form between expand/collapse views, batch norm is one
// per-channel factor generic and one elementwise generic, average pooling
// divides by a count computed from linalg.index, and split attention is
// decomposed so that U is read by two linalg ops only. The COMMON prefix
// checks that last property after the whole of grove-common (fusion,
// bufferization), where it matters.

//===----------------------------------------------------------------------===//
// conv2d, groups = 1
//===----------------------------------------------------------------------===//

// Padded and strided with a dynamic batch (static output sizes): the zero
// pad, im2col - one generic that unfolds the padded input into
// col[n, c, i, j, y, x] = pad[n, c, 2y + i, 2x + j] - viewed as
// N x 27 x 16, one batched GEMM with the weights (4 x 27) shared across the
// batch, the 4 x 4 view back, then the bias along dimension 1.
// CHECK-DAG: #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$CH4:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[$UNFOLD:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:.*]]: tensor<?x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x3x8x8xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1] {
// CHECK: tensor.yield %[[ZERO]] : f32
// CHECK-NEXT: } : tensor<?x3x8x8xf32> to tensor<?x3x10x10xf32>
// CHECK: %[[COL:.*]] = linalg.generic {indexing_maps = [#[[$UNFOLD]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[PAD]] : tensor<?x3x10x10xf32>) outs(%{{.*}} : tensor<?x3x3x3x4x4xf32>)
// CHECK: %[[COL3:.*]] = tensor.collapse_shape %[[COL]] {{\[}}[0], [1, 2, 3], [4, 5]] : tensor<?x3x3x3x4x4xf32> into tensor<?x27x16xf32>
// CHECK: %[[W2:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
// CHECK: %[[Y3:.*]] = linalg.batch_matmul {{.*}} ins(%[[W2]], %[[COL3]] : tensor<4x27xf32>, tensor<?x27x16xf32>)
// CHECK: %[[CONV:.*]] = tensor.expand_shape %[[Y3]] {{\[}}[0], [1], [2, 3]] output_shape [%[[N]], 4, 4, 4] : tensor<?x4x16xf32> into tensor<?x4x4x4xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$CH4]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[CONV]], %[[B]] : tensor<?x4x4x4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[BV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[V]], %[[BV]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
func.func @conv2d(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<?x4x4x4xf32> {
  %0 = grove.conv2d %x, %w, %b {groups = 1 : i64, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
  return %0 : tensor<?x4x4x4xf32>
}

// -----

// Asymmetric padding [top 1, left 0, bottom 2, right 1] splits into low
// [1, 0] and high [2, 1]; the per-axis strides and the dilation are in the
// unfolding map; no bias.
// CHECK: #[[$DIL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 + d2 * 2, d5 * 2 + d3 * 2)>
// CHECK-LABEL: func.func @conv2d_asymmetric_dilated_nobias
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x9x9xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>)
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 0] high[0, 0, 2, 1]
// CHECK: } : tensor<1x3x9x9xf32> to tensor<1x3x12x10xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$DIL]], #{{.*}}], {{.*}} ins(%[[PAD]] : tensor<1x3x12x10xf32>) outs(%{{.*}} : tensor<1x3x3x3x8x3xf32>)
// CHECK: linalg.batch_matmul
// CHECK: %[[CONV:.*]] = tensor.expand_shape {{.*}} : tensor<1x4x24xf32> into tensor<1x4x8x3xf32>
// CHECK-NEXT: return %[[CONV]]
func.func @conv2d_asymmetric_dilated_nobias(%x: tensor<1x3x9x9xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x3xf32> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 2>, padding = array<i64: 1, 0, 2, 1>, dilations = array<i64: 2, 2>} : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x3xf32>
  return %0 : tensor<1x4x8x3xf32>
}

// -----

// A 1x1, unstrided, unpadded, ungrouped convolution is a batched GEMM with
// the weights shared across the batch (lhs map without the batch
// dimension): out[n] = W (4 x 3) @ x[n] (3 x 25); no tensor.pad, no conv op.
// CHECK: #[[$SHARED:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-LABEL: func.func @conv2d_unpadded
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x5x5xf32>, %[[W:.*]]: tensor<4x3x1x1xf32>)
// CHECK-NOT: tensor.pad
// CHECK-NOT: linalg.conv_2d
// CHECK-DAG: %[[X3:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : tensor<2x3x5x5xf32> into tensor<2x3x25xf32>
// CHECK-DAG: %[[W2:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<4x3x1x1xf32> into tensor<4x3xf32>
// CHECK: %[[Y3:.*]] = linalg.batch_matmul indexing_maps = [#[[$SHARED]], #{{.*}}, #{{.*}}] ins(%[[W2]], %[[X3]] : tensor<4x3xf32>, tensor<2x3x25xf32>)
// CHECK: tensor.expand_shape %[[Y3]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 5, 5] : tensor<2x4x25xf32> into tensor<2x4x5x5xf32>
func.func @conv2d_unpadded(%x: tensor<2x3x5x5xf32>, %w: tensor<4x3x1x1xf32>) -> tensor<2x4x5x5xf32> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x3x5x5xf32>, tensor<4x3x1x1xf32>) -> tensor<2x4x5x5xf32>
  return %0 : tensor<2x4x5x5xf32>
}

// -----

// A dynamic height: the output height (H + 1 + 1 - 3) / 2 + 1 is computed
// from the input (unsigned division) and sizes the accumulator. A padded
// height below the kernel's 3 fails the call (grove.agree_dims) and gives
// no rows instead of a wrapped-around count.
// CHECK-LABEL: func.func @conv2d_dynamic_height
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x?x8xf32>,
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[H:.*]] = tensor.dim %[[X]], %[[C2]] : tensor<1x3x?x8xf32>
// CHECK: %[[PADDED:.*]] = arith.addi %[[H]], %{{.*}} : index
// CHECK: %[[SPAN:.*]] = arith.subi %[[PADDED]], %{{.*}} : index
// CHECK: %[[K:.*]] = arith.constant 3 : index
// CHECK: %[[ENOUGH:.*]] = arith.cmpi sge, %[[PADDED]], %[[K]] : index
// CHECK: %[[REACH:.*]] = arith.maxsi %[[PADDED]], %[[K]] : index
// The message names the file without its folder (builds do not depend on
// it) and the rule; at_least makes the runtime say "of at least 3, got N".
// CHECK: grove.agree_dims %[[REACH]], %[[PADDED]], "nn.mlir:{{[0-9]+}}:{{[0-9]+}}: grove.conv2d: one window needs the input height plus padding" {at_least} : index
// CHECK: %[[Q:.*]] = arith.divui %[[SPAN]], %{{.*}} : index
// CHECK: %[[Q1:.*]] = arith.addi %[[Q]], %{{.*}} : index
// CHECK: %[[OH:.*]] = arith.select %[[ENOUGH]], %[[Q1]], %{{.*}} : index
// CHECK: tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<1x3x?x8xf32> to tensor<1x3x?x10xf32>
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor(%[[OH]]) : tensor<1x4x?x4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<1x4x?x4xf32>)
// CHECK: linalg.conv_2d_nchw_fchw
func.func @conv2d_dynamic_height(%x: tensor<1x3x?x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x4xf32> {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x?x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x4xf32>
  return %0 : tensor<1x4x?x4xf32>
}

//===----------------------------------------------------------------------===//
// conv2d, groups > 1
//===----------------------------------------------------------------------===//

// -----

// Two groups: the padded input N x 4 x 8 x 8 viewed as N x 2 x 2 x 8 x 8,
// the weight 6 x 2 x 3 x 3 as 2 x 3 x 2 x 3 x 3, linalg's NGCHW / GFCHW
// convolution into a zero-filled N x 2 x 3 x 6 x 6, collapsed back to
// N x 6 x 6 x 6, then the bias.
// CHECK-DAG: #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$CH4:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @conv2d_grouped
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x6x6xf32>, %[[W:.*]]: tensor<6x2x3x3xf32>, %[[B:.*]]: tensor<6xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x6x6xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: } : tensor<?x4x6x6xf32> to tensor<?x4x8x8xf32>
// One im2col + GEMM per group, each written into its block of channels.
// CHECK: %[[X0:.*]] = tensor.extract_slice %[[PAD]][0, 0, 0, 0] [%{{.*}}, 2, 8, 8] [1, 1, 1, 1]
// CHECK: %[[W0:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 0] [3, 2, 3, 3] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[X0]] : tensor<?x2x8x8xf32>)
// CHECK: linalg.batch_matmul
// CHECK: %[[Y0:.*]] = tensor.expand_shape {{.*}} into tensor<?x3x6x6xf32>
// CHECK: %[[ACC0:.*]] = tensor.insert_slice %[[Y0]] into %{{.*}}[0, 0, 0, 0] [%{{.*}}, 3, 6, 6] [1, 1, 1, 1]
// CHECK: %[[X1:.*]] = tensor.extract_slice %[[PAD]][0, 2, 0, 0] [%{{.*}}, 2, 8, 8] [1, 1, 1, 1]
// CHECK: %[[W1:.*]] = tensor.extract_slice %[[W]][3, 0, 0, 0] [3, 2, 3, 3] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[X1]] : tensor<?x2x8x8xf32>)
// CHECK: linalg.batch_matmul
// CHECK: %[[Y1:.*]] = tensor.expand_shape {{.*}} into tensor<?x3x6x6xf32>
// CHECK: %[[Y:.*]] = tensor.insert_slice %[[Y1]] into %[[ACC0]][0, 3, 0, 0] [%{{.*}}, 3, 6, 6] [1, 1, 1, 1]
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$CH4]], #[[$ID4]]], {{.*}} ins(%[[Y]], %[[B]] : tensor<?x6x6x6xf32>, tensor<6xf32>)
// CHECK: arith.addf
// CHECK: return %[[R]]
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @conv2d_grouped(%x: tensor<?x4x6x6xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<?x6x6x6xf32> {
  %0 = grove.conv2d %x, %w, %b {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x4x6x6xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<?x6x6x6xf32>
  return %0 : tensor<?x6x6x6xf32>
}

//===----------------------------------------------------------------------===//
// batch_norm
//===----------------------------------------------------------------------===//

// -----

// Per channel a = scale / sqrt(var + eps), s = bias - mean * a in one
// two-result generic over C (epsilon as an f32 constant), then
// x * a[c] + s[c] in one elementwise generic.
// CHECK-DAG: #[[$ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$CH4:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x5x5xf32>, %[[SCALE:.*]]: tensor<4xf32>, %[[BIAS:.*]]: tensor<4xf32>, %[[MEAN:.*]]: tensor<4xf32>, %[[VAR:.*]]: tensor<4xf32>)
// CHECK: %[[EPS:.*]] = arith.constant 1.000000e-03 : f32
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[F:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]], #[[$ID1]], #[[$ID1]], #[[$ID1]], #[[$ID1]]], iterator_types = ["parallel"]} ins(%[[SCALE]], %[[BIAS]], %[[MEAN]], %[[VAR]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%[[E0]], %[[E1]] : tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[SC:.*]]: f32, %[[BI:.*]]: f32, %[[ME:.*]]: f32, %[[VA:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[VE:.*]] = arith.addf %[[VA]], %[[EPS]] : f32
// CHECK-NEXT: %[[SD:.*]] = math.sqrt %[[VE]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.divf %[[SC]], %[[SD]] : f32
// CHECK-NEXT: %[[MA:.*]] = arith.mulf %[[ME]], %[[A]] : f32
// CHECK-NEXT: %[[SH:.*]] = arith.subf %[[BI]], %[[MA]] : f32
// CHECK-NEXT: linalg.yield %[[A]], %[[SH]] : f32, f32
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x5x5xf32>
// CHECK: %[[EMPTY:.*]] = tensor.empty(%[[N]]) : tensor<?x4x5x5xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$CH4]], #[[$CH4]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]], %[[F]]#0, %[[F]]#1 : tensor<?x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) outs(%[[EMPTY]] : tensor<?x4x5x5xf32>)
// CHECK-NEXT: ^bb0(%[[XV:.*]]: f32, %[[AV:.*]]: f32, %[[SV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[XV]], %[[AV]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[M]], %[[SV]] : f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
// CHECK: return %[[R]]
func.func @batch_norm(%x: tensor<?x4x5x5xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<?x4x5x5xf32> {
  %0 = grove.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-03 : f64} : (tensor<?x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x5x5xf32>
  return %0 : tensor<?x4x5x5xf32>
}

// -----

// Rank 2 (what the split-attention MLP uses): the channel map is d1 of two.
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$CH2:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @batch_norm_rank2
// CHECK: %[[F:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<8xf16>, tensor<8xf16>)
// CHECK: linalg.generic {indexing_maps = [#[[$ID2]], #[[$CH2]], #[[$CH2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %[[F]]#0, %[[F]]#1 : tensor<?x8xf16>, tensor<8xf16>, tensor<8xf16>)
func.func @batch_norm_rank2(%x: tensor<?x8xf16>, %s: tensor<8xf16>, %b: tensor<8xf16>, %m: tensor<8xf16>, %v: tensor<8xf16>) -> tensor<?x8xf16> {
  %0 = grove.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f64} : (tensor<?x8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<?x8xf16>
  return %0 : tensor<?x8xf16>
}

//===----------------------------------------------------------------------===//
// max_pool2d
//===----------------------------------------------------------------------===//

// -----

// Padding that never wins: -inf for the pad and the accumulator;
// pooling_nchw_max with the kernel as a window-shape tensor, generalized
// with its loops interchanged to (n, c, y, ky, kx, x): the output row is the
// innermost loop, which the host vectorizes.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d3, d5 * 2 + d4)>
// CHECK-DAG: #[[$WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d4)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// CHECK-LABEL: func.func @max_pool2d
// CHECK-SAME: (%[[X:.*]]: tensor<?x2x8x8xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x2x8x8xf32>
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NINF]] : f32
// CHECK: } : tensor<?x2x8x8xf32> to tensor<?x2x10x10xf32>
// CHECK: %[[EMPTY:.*]] = bufferization.alloc_tensor(%[[N]]) : tensor<?x2x4x4xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%[[EMPTY]] : tensor<?x2x4x4xf32>)
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$WINDOW]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%[[PAD]], %[[WIN]] : tensor<?x2x10x10xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<?x2x4x4xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[ACC]], %[[V]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK: return %[[R]]
func.func @max_pool2d(%x: tensor<?x2x8x8xf32>) -> tensor<?x2x4x4xf32> {
  %0 = grove.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x2x8x8xf32>) -> tensor<?x2x4x4xf32>
  return %0 : tensor<?x2x4x4xf32>
}

// -----

// ceil_mode: 6 + 1 + 1 rows give 4 windows of 3 every 2 only if the last
// one (rows 6..8 of the padded input) is backed by one more row of -inf:
// high padding 2, not 1.
// CHECK-LABEL: func.func @max_pool2d_ceil_mode
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 2, 2]
// CHECK: tensor.yield %[[NINF]] : f32
// CHECK: } : tensor<1x2x6x6xf32> to tensor<1x2x9x9xf32>
// CHECK: linalg.generic {{.*}} ins(%[[PAD]], %{{.*}} : tensor<1x2x9x9xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<1x2x4x4xf32>)
// CHECK: arith.maximumf
func.func @max_pool2d_ceil_mode(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %0 = grove.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, ceil_mode} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// ceil_mode with dynamic H and W: the output sizes are computed at run time
// (PyTorch's rule: one more window when it starts inside the input or the
// leading padding), and the high padding is kernel - 1 (3 - 1 rows, 2 - 1
// columns here), the most such a last window can overhang; the excess is
// never read.
// CHECK-LABEL: func.func @max_pool2d_ceil_mode_dynamic
// CHECK: arith.cmpi uge
// CHECK: arith.select
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 0] high[0, 0, 2, 1]
// CHECK: linalg.generic
// CHECK: arith.maximumf
func.func @max_pool2d_ceil_mode_dynamic(%x: tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %0 = grove.max_pool2d %x {kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 0>, ceil_mode} : (tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  return %0 : tensor<1x2x?x?xf32>
}

// -----

// ceil_mode whose windows all fit: no padding at all.
// CHECK-LABEL: func.func @max_pool2d_ceil_mode_exact
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x6x6xf32>, tensor<2x2xf32>)
func.func @max_pool2d_ceil_mode_exact(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %0 = grove.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, ceil_mode} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

//===----------------------------------------------------------------------===//
// avg_pool2d
//===----------------------------------------------------------------------===//

// -----

// Zero padding, pooling_nchw_sum from a zero fill (generalized, the output
// row innermost, as for max_pool2d), then one generic that
// divides by the count: per spatial axis start = y * 2 - 1, end =
// min(start + 3, 5 + 1), clipped to the input [0, 5) (count_include_pad
// unset), the two extents multiplied, converted, divided by.
// CHECK-DAG: #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d3, d5 * 2 + d4)>
// CHECK-DAG: #[[$WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d4)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// CHECK-LABEL: func.func @avg_pool2d
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x5x5xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[ZERO]] : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$WINDOW]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%[[PAD]], %[[WIN]] : tensor<1x2x7x7xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x2x3x3xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-DAG: %[[H:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[W:.*]] = arith.constant 5 : index
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[SUM]] : tensor<1x2x3x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[Y:.*]] = linalg.index 2 : index
// CHECK: %[[YS:.*]] = arith.muli %[[Y]], %{{.*}} : index
// CHECK: %[[START:.*]] = arith.subi %[[YS]], %{{.*}} : index
// CHECK: %[[LIMIT:.*]] = arith.addi %[[H]], %{{.*}} : index
// CHECK: %[[WEND:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK: %[[END:.*]] = arith.minsi %[[WEND]], %[[LIMIT]] : index
// CHECK: %[[CSTART:.*]] = arith.maxsi %[[START]], %{{.*}} : index
// CHECK: %[[CEND:.*]] = arith.minsi %[[END]], %[[H]] : index
// CHECK: %[[NH:.*]] = arith.subi %[[CEND]], %[[CSTART]] : index
// CHECK: %[[X3:.*]] = linalg.index 3 : index
// CHECK: arith.maxsi
// CHECK: arith.minsi %{{.*}}, %[[W]] : index
// CHECK: %[[NW:.*]] = arith.subi
// CHECK: %[[COUNT:.*]] = arith.muli %[[NH]], %[[NW]] : index
// CHECK: %[[CI:.*]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK: %[[CF:.*]] = arith.sitofp %[[CI]] : i64 to f32
// CHECK: %[[AVG:.*]] = arith.divf %[[IN]], %[[CF]] : f32
// CHECK-NEXT: linalg.yield %[[AVG]] : f32
// CHECK: return %[[R]]
func.func @avg_pool2d(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %0 = grove.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// count_include_pad: the window is clipped to the padded extent only, so
// there is no max with 0 and no min with the input size.
// CHECK-LABEL: func.func @avg_pool2d_count_include_pad
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: linalg.index 2 : index
// CHECK: %[[E0:.*]] = arith.minsi
// CHECK-NEXT: %[[NH:.*]] = arith.subi %[[E0]], %{{.*}} : index
// CHECK-NEXT: linalg.index 3 : index
// CHECK: %[[E1:.*]] = arith.minsi
// CHECK-NEXT: %[[NW:.*]] = arith.subi %[[E1]], %{{.*}} : index
// CHECK-NEXT: arith.muli %[[NH]], %[[NW]] : index
// CHECK-NOT: arith.maxsi
// CHECK: arith.divf
// CHECK-NEXT: linalg.yield
func.func @avg_pool2d_count_include_pad(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %0 = grove.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// ceil_mode without padding: one extra zero row/column backs the last
// window; the count still clips it to 5 (min with H + 0).
// CHECK-LABEL: func.func @avg_pool2d_ceil_mode
// CHECK: %[[PAD:.*]] = tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: } : tensor<1x2x5x5xf32> to tensor<1x2x6x6xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[PAD]], %{{.*}} : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x2x3x3xf32>)
// CHECK: arith.minsi
// CHECK: arith.divf
func.func @avg_pool2d_ceil_mode(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, ceil_mode, count_include_pad} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// A dynamic height: the count reads it with tensor.dim, not a constant.
// CHECK-LABEL: func.func @avg_pool2d_dynamic_height
// CHECK-SAME: (%[[X:.*]]: tensor<?x2x?x5xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK: %[[H:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x2x?x5xf32>
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<?x2x?x2xf32>)
// CHECK: linalg.index 2 : index
// CHECK: arith.addi %[[H]], %{{.*}} : index
// CHECK: arith.minsi %{{.*}}, %[[H]] : index
// CHECK: linalg.index 3 : index
func.func @avg_pool2d_dynamic_height(%x: tensor<?x2x?x5xf32>) -> tensor<?x2x?x2xf32> {
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<?x2x?x5xf32>) -> tensor<?x2x?x2xf32>
  return %0 : tensor<?x2x?x2xf32>
}

//===----------------------------------------------------------------------===//
// global_avg_pool, flatten
//===----------------------------------------------------------------------===//

// -----

// reduce_mean's lowering (buildSumOrMean): sum over [2, 3] from a zero
// fill, divide by H * W (1 * 3 * 5) converted to the accumulator type, then
// keepdims as an expand_shape.
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @global_avg_pool
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x3x5xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x3x5xf32>
// CHECK: %[[N2:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4x3x5xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = bufferization.alloc_tensor(%[[N2]]) : tensor<?x4xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<?x4xf32>)
// CHECK: %[[SUM:.*]] = linalg.reduce ins(%[[X]] : tensor<?x4x3x5xf32>) outs(%[[INIT]] : tensor<?x4xf32>) dimensions = [2, 3]
// CHECK-NEXT: (%[[IN:.*]]: f32, %[[ACC:.*]]: f32) {
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[IN]], %[[ACC]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[H:.*]] = arith.muli %[[ONE]], %[[C3]] : index
// CHECK: %[[C5:.*]] = arith.constant 5 : index
// CHECK: %[[HW:.*]] = arith.muli %[[H]], %[[C5]] : index
// CHECK: %[[HWI:.*]] = arith.index_cast %[[HW]] : index to i64
// CHECK: %[[COUNT:.*]] = arith.uitofp %[[HWI]] : i64 to f32
// CHECK: %[[MEAN:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[SUM]] : tensor<?x4xf32>)
// CHECK: arith.divf %{{.*}}, %[[COUNT]] : f32
// CHECK: %[[R:.*]] = tensor.expand_shape %[[MEAN]] {{\[}}[0], [1, 2, 3]] output_shape [%[[N]], 4, 1, 1] : tensor<?x4xf32> into tensor<?x4x1x1xf32>
// CHECK-NEXT: return %[[R]]
func.func @global_avg_pool(%x: tensor<?x4x3x5xf32>) -> tensor<?x4x1x1xf32> {
  %0 = grove.global_avg_pool %x : (tensor<?x4x3x5xf32>) -> tensor<?x4x1x1xf32>
  return %0 : tensor<?x4x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @flatten
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x1x1xf32>)
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1, 2, 3]] : tensor<?x4x1x1xf32> into tensor<?x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @flatten(%x: tensor<?x4x1x1xf32>) -> tensor<?x4xf32> {
  %0 = grove.flatten %x {axis = 1 : i64} : (tensor<?x4x1x1xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// The dimensions before the axis stay, the rest form one group.
// CHECK-LABEL: func.func @flatten_axis2
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<?x4x3x5xf32> into tensor<?x4x15xf32>
// CHECK-NEXT: return %[[R]]
func.func @flatten_axis2(%x: tensor<?x4x3x5xf32>) -> tensor<?x4x15xf32> {
  %0 = grove.flatten %x {axis = 2 : i64} : (tensor<?x4x3x5xf32>) -> tensor<?x4x15xf32>
  return %0 : tensor<?x4x15xf32>
}

//===----------------------------------------------------------------------===//
// split_attention
//===----------------------------------------------------------------------===//

// -----

// Radix 2, cardinality 2, C = 4, I = 8, U = 2 x 8 x 3 x 3
// (SplitAttention.cpp). U is viewed as B x R x K x C/K x (H·W) (expand_shape
// + collapse_shape, no copy) and read by exactly two linalg.generics: the
// pooled sum (loops b, k, c parallel; r, p reduced) and the weighted sum
// (all parallel; the radix unrolled in the body, so the result is written
// once, with no zero fill). In between, on B x C-sized tensors: fc1 as a
// reduction generic over its input channels (loops k, o, b, c), the mean,
// fc1's bias, BN and ReLU in one elementwise generic, fc2 over (k, r, c, b,
// o), and the rSoftMax over the two splits in one generic with two results.
// No GEMM call, transpose or three-pass softmax is left.
// CHECK-DAG: #[[POOLU:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d2, d4)>
// CHECK-DAG: #[[FC1S:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d3)>
// CHECK-DAG: #[[FC1W:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[FC2W:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[L0:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 0, d2)>
// CHECK-DAG: #[[L1:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 1, d2)>
// CHECK-DAG: #[[U0:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d1, d2, d3)>
// CHECK-DAG: #[[U1:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 1, d1, d2, d3)>
// CHECK-LABEL: func.func @split_attention
// CHECK-SAME: (%[[U:[^:]*]]: tensor<2x8x3x3xf32>,
// CHECK-NOT: linalg.batch_matmul
// CHECK-NOT: linalg.transpose
// CHECK: %[[U6:.*]] = tensor.expand_shape %[[U]] {{\[}}[0], [1, 2, 3], [4], [5]] output_shape [2, 2, 2, 2, 3, 3]
// CHECK: %[[U5:.*]] = tensor.collapse_shape %[[U6]] {{\[}}[0], [1], [2], [3], [4, 5]] : tensor<2x2x2x2x3x3xf32> into tensor<2x2x2x2x9xf32>
// CHECK-NOT: %[[U]]{{[^_0-9]}}
// CHECK: %[[POOL:.*]] = linalg.generic {indexing_maps = [#[[POOLU]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[U5]] : tensor<2x2x2x2x9xf32>) outs(%{{.*}} : tensor<2x2x2xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf {{.*}} fastmath<reassoc>
// CHECK-NOT: %[[U5]]{{[^_0-9]}}
// CHECK: %[[Z:.*]] = linalg.generic {indexing_maps = [#[[FC1S]], #[[FC1W]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[POOL]], %{{.*}} : tensor<2x2x2xf32>, tensor<2x4x2xf32>) outs(%{{.*}} : tensor<2x2x4xf32>)
// CHECK: %[[H:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[Z]], {{.*}}) outs(
// CHECK: math.sqrt
// CHECK: arith.maximumf
// CHECK: %[[LOGITS:.*]] = linalg.generic {indexing_maps = [{{.*}}, #[[FC2W]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[H]], %{{.*}} : tensor<2x2x4xf32>, tensor<2x2x2x4xf32>) outs(%{{.*}} : tensor<2x2x2x2xf32>)
// The softmax of two logits is a sigmoid of their difference: one exp.
// CHECK: %[[A:.*]]:2 = linalg.generic {indexing_maps = [#[[L0]], #[[L1]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[LOGITS]], %[[LOGITS]], {{.*}}) outs(
// CHECK: %[[D:.*]] = arith.subf %[[X0:.*]], %[[X1:.*]] : f32
// CHECK-NEXT: %[[ND:.*]] = arith.negf %[[D]]
// CHECK-NEXT: math.exp %[[ND]]
// CHECK-NOT: math.exp
// CHECK: %[[A0:.*]] = arith.divf
// CHECK-NEXT: %[[A1:.*]] = arith.subf %{{.*}}, %[[A0]]
// CHECK-NEXT: linalg.yield %[[A0]], %[[A1]] : f32, f32
// CHECK-NOT: linalg.fill
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[U0]], #[[U1]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[U5]], %[[U5]], %[[A]]#0, %[[A]]#1 : {{.*}}) outs(%{{.*}} : tensor<2x2x2x9xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: %[[U5]]{{[^_0-9]}}
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1, 2], [3]] : tensor<2x2x2x9xf32> into tensor<2x4x9xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 3, 3] : tensor<2x4x9xf32> into tensor<2x4x3x3xf32>
// CHECK: return %[[R]]
func.func @split_attention(%u: tensor<2x8x3x3xf32>, %w1: tensor<8x2x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) -> tensor<2x4x3x3xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 2 : i64, cardinality = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x8x3x3xf32>, tensor<8x2x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<2x4x3x3xf32>
  return %0 : tensor<2x4x3x3xf32>
}

// -----

// Radix 1: a sigmoid instead of the softmax; U viewed with R = K = 1.
// CHECK-LABEL: func.func @split_attention_radix1
// CHECK-SAME: (%[[U:[^:]*]]: tensor<2x4x3x3xf32>,
// CHECK: %[[U6:.*]] = tensor.expand_shape %[[U]] {{\[}}[0], [1, 2, 3], [4], [5]] output_shape [2, 1, 1, 4, 3, 3]
// CHECK: %[[U5:.*]] = tensor.collapse_shape %[[U6]] {{\[}}[0], [1], [2], [3], [4, 5]] : tensor<2x1x1x4x3x3xf32> into tensor<2x1x1x4x9xf32>
// CHECK: linalg.generic {{.*}} ins(%[[U5]] : tensor<2x1x1x4x9xf32>)
// CHECK-NOT: linalg.softmax
// CHECK: %[[A:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<2x1x1x4xf32>, tensor<1x1x4xf32>)
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} ins(%[[U5]], %[[A]] : tensor<2x1x1x4x9xf32>, tensor<2x1x4xf32>)
// CHECK-NOT: %[[U5]]{{[^_0-9]}}
// CHECK: return
func.func @split_attention_radix1(%u: tensor<2x4x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<4x8x1x1xf32>, %b2: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 1 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x4x3x3xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  return %0 : tensor<2x4x3x3xf32>
}

// -----

// Radix 4: the softmax over the four logits of each channel in one body
// (max, four exps, one reciprocal), four attention results, and the
// weighted sum over the four splits in one body.
// CHECK-LABEL: func.func @split_attention_radix4
// CHECK: %[[A:.*]]:4 = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-COUNT-3: arith.maximumf
// CHECK-COUNT-4: math.exp
// CHECK: arith.divf
// CHECK-NOT: math.exp
// CHECK: linalg.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32, f32
// CHECK: linalg.generic {{.*}} ins(%[[U5:[^,]*]], %[[U5]], %[[U5]], %[[U5]], %[[A]]#0, %[[A]]#1, %[[A]]#2, %[[A]]#3 : tensor<2x4x1x2x4xf32>, {{.*}}) outs(%{{.*}} : tensor<2x1x2x4xf32>)
// CHECK-COUNT-4: arith.mulf
// CHECK-COUNT-3: arith.addf
// CHECK-NEXT: linalg.yield
func.func @split_attention_radix4(%u: tensor<2x8x2x2xf32>, %w1: tensor<4x2x1x1xf32>, %b1: tensor<4xf32>, %sc: tensor<4xf32>, %sh: tensor<4xf32>, %mu: tensor<4xf32>, %var: tensor<4xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) -> tensor<2x2x2x2xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 4 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x8x2x2xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<2x2x2x2xf32>
  return %0 : tensor<2x2x2x2xf32>
}

// -----

// After the whole of grove-common the function takes memrefs; U (%arg0) is
// only viewed (expand_shape, collapse_shape, no copy), and exactly two
// linalg ops read it: the pooling reduction (through a view whose groups
// and channels grove-collapse-loop-dims merged) and the weighted sum
// (through one operand per split), which writes the result directly (no
// U-sized temporary).
// COMMON-LABEL: func.func @_grove_model_split_attention_common
// COMMON-SAME: (%[[U:arg0]]: memref<2x8x3x3xf32>,
// COMMON-NOT: memref.subview %[[U]]
// COMMON-NOT: memref.alloc{{.*}}: memref<2x2x{{.*}}x3x3xf32>
// COMMON-NOT: linalg.conv_2d
// COMMON: %[[U6:.*]] = memref.expand_shape %[[U]]
// COMMON-NOT: %[[U]]{{[^_0-9]}}
// COMMON-DAG: %[[U5:.*]] = memref.collapse_shape %[[U6]] {{\[}}[0], [1], [2], [3], [4, 5]]
// COMMON-DAG: %[[UP:.*]] = memref.collapse_shape %[[U6]] {{\[}}[0], [1], [2, 3], [4, 5]]
// COMMON-NOT: %[[U6]]{{[^_0-9]}}
// COMMON: linalg.generic {{.*}} ins(%[[UP]] :
// COMMON-NOT: %[[UP]]{{[^_0-9]}}
// COMMON-NOT: %[[U5]]{{[^_0-9]}}
// COMMON-NOT: memref.alloc{{.*}}: memref<2x2x2x2x9xf32>
// COMMON: linalg.generic {{.*}} ins(%[[U5]], %[[U5]], %{{[^)]*}}) outs(
// COMMON-NOT: %[[U]]{{[^_0-9]}}
// COMMON-NOT: %[[U5]]{{[^_0-9]}}
// COMMON-NOT: %[[UP]]{{[^_0-9]}}
// COMMON-NOT: %[[U6]]{{[^_0-9]}}
// COMMON: return
func.func @split_attention_common(%u: tensor<2x8x3x3xf32>, %w1: tensor<8x2x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) -> tensor<2x4x3x3xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 2 : i64, cardinality = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x8x3x3xf32>, tensor<8x2x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<2x4x3x3xf32>
  return %0 : tensor<2x4x3x3xf32>
}

// -----

// The primitive form a frontend emits (radix 2, cardinality 1): in
// grove-common, grove-fuse-split-attention turns it into the op above
// before the conversion, so U is viewed, never sliced (without the fusion
// each split is a memref.subview of U), and again read by two linalg ops
// only. The conversion on its own leaves the slices alone.
// CHECK-LABEL: func.func @split_attention_primitive_common
// CHECK-SAME: (%[[U:[^:]*]]: tensor<2x8x3x3xf32>,
// CHECK: tensor.extract_slice %[[U]][0, 0, 0, 0] [2, 4, 3, 3] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[U]][0, 4, 0, 0] [2, 4, 3, 3] [1, 1, 1, 1]
// CHECK: linalg.batch_matmul
// COMMON-LABEL: func.func @_grove_model_split_attention_primitive_common
// COMMON-SAME: (%[[U:arg0]]: memref<2x8x3x3xf32>,
// COMMON-NOT: memref.subview %[[U]]
// COMMON-NOT: memref.alloc{{.*}}: memref<2x2x{{.*}}x3x3xf32>
// COMMON-NOT: linalg.conv_2d
// COMMON: %[[U6:.*]] = memref.expand_shape %[[U]]
// COMMON-NOT: %[[U]]{{[^_0-9]}}
// COMMON-DAG: %[[U5:.*]] = memref.collapse_shape %[[U6]] {{\[}}[0], [1], [2], [3], [4, 5]]
// COMMON-DAG: %[[UP:.*]] = memref.collapse_shape %[[U6]] {{\[}}[0], [1], [2, 3], [4, 5]]
// COMMON-NOT: %[[U6]]{{[^_0-9]}}
// COMMON: linalg.generic {{.*}} ins(%[[UP]] :
// COMMON-NOT: %[[UP]]{{[^_0-9]}}
// COMMON-NOT: %[[U5]]{{[^_0-9]}}
// COMMON-NOT: memref.alloc{{.*}}: memref<2x2x1x4x9xf32>
// COMMON: linalg.generic {{.*}} ins(%[[U5]], %[[U5]], %{{[^)]*}}) outs(
// COMMON-NOT: %[[U]]{{[^_0-9]}}
// COMMON-NOT: %[[U5]]{{[^_0-9]}}
// COMMON-NOT: %[[UP]]{{[^_0-9]}}
// COMMON-NOT: %[[U6]]{{[^_0-9]}}
// COMMON: return
func.func @split_attention_primitive_common(%u: tensor<2x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<2x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<2x8x3x3xf32> -> tensor<2x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<2x8x3x3xf32> -> tensor<2x4x3x3xf32>
  %sum = grove.add %s0, %s1 : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %gap = grove.global_avg_pool %sum : (tensor<2x4x3x3xf32>) -> tensor<2x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %sc, %sh, %mu, %var {epsilon = 1.0e-05 : f64} : (tensor<2x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %relu = grove.relu %bn : tensor<2x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %v = grove.reshape %fc2 : tensor<2x8x1x1xf32> -> tensor<2x1x2x4xf32>
  %vt = grove.transpose %v [0, 2, 1, 3] : tensor<2x1x2x4xf32> -> tensor<2x2x1x4xf32>
  %sm = grove.softmax %vt {axis = 1 : i64} : tensor<2x2x1x4xf32>
  %att = grove.reshape %sm : tensor<2x2x1x4xf32> -> tensor<2x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<2x8x1x1xf32> -> tensor<2x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<2x4x1x1xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<2x8x1x1xf32> -> tensor<2x4x1x1xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<2x4x1x1xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %res : tensor<2x4x3x3xf32>
}

// -----

// A static zero batch or channel count: the result is empty, nothing is
// computed or padded (padding a zero-size tensor trips memref.subview's
// bounds rules after bufferization).
// CHECK-LABEL: func.func @empty_results
// CHECK-NOT: tensor.pad
// CHECK-NOT: linalg.
// CHECK: %[[A:.*]] = tensor.empty() : tensor<0x4x8x8xf32>
// CHECK: %[[B:.*]] = tensor.empty() : tensor<1x0x2x2xf32>
// CHECK: return %[[A]], %[[B]]
func.func @empty_results(%x: tensor<0x3x8x8xf32>, %w: tensor<4x3x3x3xf32>,
                         %y: tensor<1x0x4x4xf32>)
    -> (tensor<0x4x8x8xf32>, tensor<1x0x2x2xf32>) {
  %0 = grove.conv2d %x, %w {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<0x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<0x4x8x8xf32>
  %1 = grove.max_pool2d %y {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x0x4x4xf32>) -> tensor<1x0x2x2xf32>
  return %0, %1 : tensor<0x4x8x8xf32>, tensor<1x0x2x2xf32>
}

// -----

// Flattening a static 0 with a dynamic size is empty too (collapse_shape
// would fold the product to a static 0 the `?` result disagrees with).
// CHECK-LABEL: func.func @flatten_zero
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[E:.*]] = tensor.empty(%[[C0]]) : tensor<2x?xf32>
// CHECK-NOT: tensor.collapse_shape
// CHECK: return %[[E]]
func.func @flatten_zero(%x: tensor<2x0x?xf32>) -> tensor<2x?xf32> {
  %0 = grove.flatten %x {axis = 1 : i64} : (tensor<2x0x?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// ceil_mode on a dynamic width: one window needs W + 0 >= 2 - (2 - 1) = 1
// (a window may overhang by less than a stride, as in PyTorch).
// CHECK-LABEL: func.func @pool_ceil_dynamic_guard
// CHECK: grove.agree_dims %{{.*}}, %{{.*}}, "{{.*}}: grove.avg_pool2d: one window needs the input width plus padding" {at_least}
func.func @pool_ceil_dynamic_guard(%x: tensor<1x2x4x?xf32>) -> tensor<1x2x2x?xf32> {
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, ceil_mode} : (tensor<1x2x4x?xf32>) -> tensor<1x2x2x?xf32>
  return %0 : tensor<1x2x2x?xf32>
}
