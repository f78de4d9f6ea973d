//===- TileAttention.cpp - Attention over key tiles, online softmax -------===//
//
// grove.attention and grove.attention_grad become scf.for loops over tiles
// of the keys whose bodies are grove ops on [B·H, Sq, tile] scores, so no
// [B, H, Sq, Sk] tensor ever exists (FlashAttention's scheme, on whatever
// the matmuls lower to: BLAS on the host, cuBLAS on CUDA). The forward
// keeps, per query row, the running maximum m, the running sum l of
// exp(s - m) and the unnormalised output, rescaling them by exp(m_old -
// m_new) as each tile raises the maximum; the backward recomputes each
// row's log-sum-exp in a first sweep and each tile's probabilities in a
// second (FlashAttention-2's backward), accumulating dQ and writing each
// tile's dK and dV in place.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveArith.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir::grove {
#define GEN_PASS_DEF_GROVETILEATTENTION
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// The shared pieces: [B, H, S, D] operands collapsed to [B·H, S, D] in the
/// compute type (f32 for bf16/f16), the scores of one key tile, and the
/// rank-3 helpers the two sweeps are written in.
struct Attention {
  GroveArith a;
  Type compute;
  double scale;
  bool causal;
  int64_t tile;
  /// B and H (for the mask's rank-4 broadcast and the results).
  OpFoldResult batch, heads;
  Value q, k, v, mask; // collapsed, in the compute type; mask rank 4

  OpBuilder &b() { return a.b; }
  Location loc() { return a.loc; }

  Value toCompute(Value x) {
    auto type = tensorOf(x);
    if (type.getElementType() == compute)
      return x;
    return ConvertOp::create(b(), loc(), type.clone(compute), x);
  }
  Value collapse(Value x) {
    return tensor::CollapseShapeOp::create(
        b(), loc(), x, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  }
  /// [B·H, S, D] back to [B, H, S, D] of type `type`'s shape.
  Value expand(Value x, RankedTensorType type) {
    SmallVector<OpFoldResult> shape = {batch, heads};
    SmallVector<OpFoldResult> rest = tensor::getMixedSizes(b(), loc(), x);
    shape.append(rest.begin() + 1, rest.end());
    SmallVector<int64_t> staticShape;
    for (OpFoldResult s : shape)
      staticShape.push_back(
          getConstantIntValue(s).value_or(ShapedType::kDynamic));
    auto expanded =
        RankedTensorType::get(staticShape, tensorOf(x).getElementType());
    Value e = tensor::ExpandShapeOp::create(
        b(), loc(), expanded, x,
        SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}}, shape);
    if (e.getType() != type)
      e = tensor::CastOp::create(b(), loc(), type, e);
    return e;
  }
  Value dim(Value x, int64_t d) { return a.dim(x, d); }
  /// A tensor of `like`'s shape with dimension 2 of size 1, every element
  /// `value` (the per-row running statistics).
  Value rowsFilled(Value like, double value) {
    auto type = tensorOf(like);
    SmallVector<int64_t> shape = {type.getDimSize(0), type.getDimSize(1), 1};
    SmallVector<Value> sizes;
    for (int64_t d : {0, 1})
      if (type.isDynamicDim(d))
        sizes.push_back(dim(like, d));
    return BroadcastToOp::create(b(), loc(), a.scalarOf(compute, value), shape,
                                 sizes);
  }
  /// A tensor of `like`'s type filled with zeros.
  Value zerosLike(Value like) {
    auto type = tensorOf(like);
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(dim(like, d));
    return BroadcastToOp::create(b(), loc(), a.scalarOf(compute, 0.0),
                                 type.getShape(), sizes);
  }
  /// Rows [start, start + size) of dimension 1 of a rank-3 tensor.
  Value rowsOf(Value x, Value start, Value size) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b(), loc(), x);
    sizes[1] = size;
    SmallVector<OpFoldResult> offsets = {b().getIndexAttr(0), start,
                                         b().getIndexAttr(0)};
    SmallVector<OpFoldResult> strides(3, b().getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b(), loc(), x, offsets, sizes,
                                          strides);
  }
  Value insertRows(Value tileValue, Value into, Value start) {
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(b(), loc(), tileValue);
    SmallVector<OpFoldResult> offsets = {b().getIndexAttr(0), start,
                                         b().getIndexAttr(0)};
    SmallVector<OpFoldResult> strides(3, b().getIndexAttr(1));
    return tensor::InsertSliceOp::create(b(), loc(), tileValue, into, offsets,
                                         sizes, strides);
  }
  Value reduceRows(Value x, bool max) {
    if (max)
      return ReduceMaxOp::create(b(), loc(), x, ArrayRef<int64_t>{2},
                                 /*keepdims=*/true);
    return ReduceSumOp::create(b(), loc(), x, ArrayRef<int64_t>{2},
                               /*keepdims=*/true);
  }
  Value matmul(Value x, Value y, bool tl, bool tr) {
    return MatmulOp::create(b(), loc(), x, y, tl, tr);
  }
  Value max(Value x, Value y) { return MaxOp::create(b(), loc(), x, y); }
  Value log(Value x) { return LogOp::create(b(), loc(), x); }
  /// Zeros of [B·H, rows of `rowsLike`, dimension 2 of `colsLike`].
  Value zeros(Value rowsLike, Value colsLike) {
    auto r = tensorOf(rowsLike), c = tensorOf(colsLike);
    SmallVector<int64_t> shape = {r.getDimSize(0), r.getDimSize(1),
                                  c.getDimSize(2)};
    SmallVector<Value> sizes;
    if (r.isDynamicDim(0))
      sizes.push_back(dim(rowsLike, 0));
    if (r.isDynamicDim(1))
      sizes.push_back(dim(rowsLike, 1));
    if (c.isDynamicDim(2))
      sizes.push_back(dim(colsLike, 2));
    return BroadcastToOp::create(b(), loc(), a.scalarOf(compute, 0.0), shape,
                                 sizes);
  }

  /// 0 where key `start + j` may be seen by query i (j <= i), -inf above:
  /// an [Sq, size] bias (top-left aligned, torch's is_causal).
  Value causalBias(Value start, Value size) {
    MLIRContext *ctx = b().getContext();
    int64_t rows = tensorOf(q).getDimSize(1);
    auto type = RankedTensorType::get({rows, ShapedType::kDynamic}, compute);
    SmallVector<Value> sizes;
    if (ShapedType::isDynamic(rows))
      sizes.push_back(dim(q, 1));
    sizes.push_back(size);
    Value init =
        tensor::EmptyOp::create(b(), loc(), type.getShape(), compute, sizes);
    AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
    auto generic = linalg::GenericOp::create(
        b(), loc(), type, ValueRange{}, init, ArrayRef<AffineMap>{id},
        SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location l, ValueRange) {
          Value i = linalg::IndexOp::create(nb, l, 0);
          Value j = arith::AddIOp::create(nb, l, start,
                                          linalg::IndexOp::create(nb, l, 1));
          Value above =
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ugt, j, i);
          auto value = [&](double v) {
            return arith::ConstantOp::create(nb, l, nb.getFloatAttr(compute, v))
                .getResult();
          };
          linalg::YieldOp::create(
              nb, l,
              arith::SelectOp::create(
                  nb, l, above, value(-std::numeric_limits<double>::infinity()),
                  value(0.0))
                  .getResult());
        });
    return generic.getResult(0);
  }

  /// scale · Q K_tileᵀ + mask + causal bias: [B·H, Sq, size].
  Value scores(Value start, Value size) {
    Value kt = rowsOf(k, start, size);
    Value s = a.mul(matmul(q, kt, false, true), a.scalarOf(compute, scale));
    if (mask) {
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b(), loc(), mask);
      sizes[3] = size;
      SmallVector<OpFoldResult> offsets = {
          b().getIndexAttr(0), b().getIndexAttr(0), b().getIndexAttr(0), start};
      SmallVector<OpFoldResult> strides(4, b().getIndexAttr(1));
      Value mt = tensor::ExtractSliceOp::create(b(), loc(), mask, offsets,
                                                sizes, strides);
      auto st = tensorOf(s);
      auto full = RankedTensorType::get(
          {getConstantIntValue(batch).value_or(ShapedType::kDynamic),
           getConstantIntValue(heads).value_or(ShapedType::kDynamic),
           st.getDimSize(1), st.getDimSize(2)},
          compute);
      Value s4 = expand(s, full);
      s = collapse(a.add(s4, mt));
    }
    if (causal)
      s = a.add(s, causalBias(start, size));
    return s;
  }

  /// The current tile's size: min(tile, length - start).
  Value tileSize(Value start, Value length) {
    Value t = arith::ConstantIndexOp::create(b(), loc(), tile);
    return arith::MinSIOp::create(
        b(), loc(), t, arith::SubIOp::create(b(), loc(), length, start));
  }

  /// `m` where finite, else 0: exp(s - m) is then 0 for s = -inf even when a
  /// whole tile is masked, and exp(m_old - m) is 0 for the first tile.
  Value finiteOrZero(Value m) {
    Value inf = a.scalarOf(compute, std::numeric_limits<double>::infinity());
    Value finite = a.step(a.add(m, inf));
    return SelectOp::create(b(), loc(), finite, m, zerosLike(m));
  }

  /// One sweep over the key tiles; `body` gets the tile's start and size
  /// and the loop-carried values and returns their next values.
  SmallVector<Value>
  sweep(ValueRange init,
        function_ref<SmallVector<Value>(Value, Value, ValueRange)> body) {
    Value length = dim(k, 1);
    Value zero = arith::ConstantIndexOp::create(b(), loc(), 0);
    Value step = arith::ConstantIndexOp::create(b(), loc(), tile);
    auto loop = scf::ForOp::create(
        b(), loc(), zero, length, step, init,
        [&](OpBuilder &nb, Location l, Value start, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b());
          b().setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          SmallVector<Value> next =
              body(start, tileSize(start, length), carried);
          scf::YieldOp::create(b(), loc(), next);
        });
    return SmallVector<Value>(loop.getResults());
  }

  /// One tile's step of the online softmax from the running maximum `m0`
  /// and sum `l0`: the tile's unnormalised probabilities, the factor
  /// exp(m0 - m) that rescales what came before, the new maximum and sum.
  struct Online {
    Value p, correction, m, l;
  };
  Online online(Value s, Value m0, Value l0) {
    Value m = max(m0, reduceRows(s, /*max=*/true));
    Value safe = finiteOrZero(m);
    Value p = a.exp(a.sub(s, safe));
    Value correction = a.exp(a.sub(m0, safe));
    Value l = a.add(a.mul(l0, correction), reduceRows(p, /*max=*/false));
    return {p, correction, m, l};
  }

  /// The row statistics of softmax(scores): the running maximum and sum.
  std::pair<Value, Value> statistics() {
    SmallVector<Value> out =
        sweep({rowsFilled(q, -std::numeric_limits<double>::infinity()),
               rowsFilled(q, 0.0)},
              [&](Value start, Value size, ValueRange c) -> SmallVector<Value> {
                Online step = online(scores(start, size), c[0], c[1]);
                return {step.m, step.l};
              });
    return {out[0], out[1]};
  }
};

Attention makeAttention(OpBuilder &b, Location loc, Value query, Value key,
                        Value value, Value mask, double scale, bool causal,
                        int64_t tile) {
  Type element = tensorOf(query).getElementType();
  Type compute = element.isF64() ? element : b.getF32Type();
  Attention at{{b, loc}, compute,        scale,          causal,
               tile,     OpFoldResult(), OpFoldResult(), Value(),
               Value(),  Value(),        Value()};
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, query);
  at.batch = sizes[0];
  at.heads = sizes[1];
  at.q = at.collapse(at.toCompute(query));
  at.k = at.collapse(at.toCompute(key));
  at.v = at.collapse(at.toCompute(value));
  if (mask)
    at.mask = at.toCompute(mask);
  return at;
}

LogicalResult tileForward(AttentionOp op, IRRewriter &rewriter) {
  rewriter.setInsertionPoint(op);
  Attention at = makeAttention(
      rewriter, op.getLoc(), op.getQuery(), op.getKey(), op.getValue(),
      op.getMask(), op.getScaleOrDefault(), op.getCausal(), op.getKeyTile());
  GroveArith x{rewriter, op.getLoc()};
  // The unnormalised output [B·H, Sq, Dv] starts at zero.
  Value acc0 = at.zeros(at.q, at.v);
  SmallVector<Value> out = at.sweep(
      {at.rowsFilled(at.q, -std::numeric_limits<double>::infinity()),
       at.rowsFilled(at.q, 0.0), acc0},
      [&](Value start, Value size, ValueRange c) -> SmallVector<Value> {
        Attention::Online step = at.online(at.scores(start, size), c[0], c[1]);
        Value pv =
            at.matmul(step.p, at.rowsOf(at.v, start, size), false, false);
        Value acc = x.add(x.mul(c[2], step.correction), pv);
        return {step.m, step.l, acc};
      });
  Value o = x.div(out[2], out[1]);
  RankedTensorType type = op.getType();
  if (type.getElementType() != at.compute)
    o = ConvertOp::create(rewriter, op.getLoc(),
                          tensorOf(o).clone(type.getElementType()), o);
  rewriter.replaceOp(op, at.expand(o, type));
  return success();
}

LogicalResult tileBackward(AttentionGradOp op, IRRewriter &rewriter) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  double scale = op.getScaleOrDefault();
  Attention at =
      makeAttention(rewriter, loc, op.getQuery(), op.getKey(), op.getValue(),
                    op.getMask(), scale, op.getCausal(), op.getKeyTile());
  GroveArith x{rewriter, loc};
  Value dO = at.collapse(at.toCompute(op.getOutputGrad()));
  Value o = at.collapse(at.toCompute(op.getOutput()));
  // Δ = rowsum(dO ∘ O); the log-sum-exp of each row from a first sweep.
  Value delta = at.reduceRows(x.mul(dO, o), /*max=*/false);
  auto [m, l] = at.statistics();
  Value lse = x.add(at.finiteOrZero(m), at.log(l));
  SmallVector<Value> grads = at.sweep(
      {at.zerosLike(at.q), at.zerosLike(at.k), at.zerosLike(at.v)},
      [&](Value start, Value size, ValueRange c) -> SmallVector<Value> {
        Value kt = at.rowsOf(at.k, start, size);
        Value vt = at.rowsOf(at.v, start, size);
        Value p = x.exp(x.sub(at.scores(start, size), lse));
        Value dv = at.matmul(p, dO, /*tl=*/true, false);
        Value dp = at.matmul(dO, vt, false, /*tr=*/true);
        Value ds = x.mul(p, x.sub(dp, delta));
        Value scaleC = x.scalarOf(at.compute, scale);
        Value dq = x.add(c[0], x.mul(at.matmul(ds, kt, false, false), scaleC));
        Value dk = x.mul(at.matmul(ds, at.q, /*tl=*/true, false), scaleC);
        return {dq, at.insertRows(dk, c[1], start),
                at.insertRows(dv, c[2], start)};
      });
  SmallVector<Value> results;
  for (auto [g, operand] :
       llvm::zip(grads, SmallVector<Value>{op.getQuery(), op.getKey(),
                                           op.getValue()})) {
    RankedTensorType type = tensorOf(operand);
    if (type.getElementType() != at.compute)
      g = ConvertOp::create(rewriter, loc,
                            tensorOf(g).clone(type.getElementType()), g);
    results.push_back(at.expand(g, type));
  }
  rewriter.replaceOp(op, results);
  return success();
}

struct GroveTileAttentionPass
    : grove::impl::GroveTileAttentionBase<GroveTileAttentionPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      LogicalResult result =
          isa<AttentionOp>(op)
              ? tileForward(cast<AttentionOp>(op), rewriter)
              : tileBackward(cast<AttentionGradOp>(op), rewriter);
      if (failed(result))
        return signalPassFailure();
    }
  }
};

} // namespace
