//===- SplitAttention.cpp - grove.split_attention to linalg ---------------===//
//
// The attention part of ResNeSt's SplAtConv2d becomes six linalg.generics,
// each of which every target maps onto one loop nest (host) or one kernel
// (GPU), with K = cardinality, R = radix, Cg = C/K, Ig = I/K and U viewed
// (no copy) as B x R x K x Cg x (H·W):
//
//   pool      s[b,k,c]     = Σ_{r,p} U[b,r,k,c,p]            pass 1 over U
//   fc1       z[b,k,o]     = Σ_c s[b,k,c] · W1[k,o,c]
//   bn+relu   h[b,k,o]     = max(0, (z/(H·W) + b1 − μ)·γ/√(σ²+ε) + β)
//   fc2       l[b,k,r,c]   = Σ_o h[b,k,o] · W2[k,r,c,o]
//   rsoftmax  a_r[b,k,c]   = softmax over r of l[b,k,r,c] + b2[k,r,c]
//                            (a sigmoid when R = 1), all R in one body
//                            (for R = 2 one exp: a_0 = sigmoid(l_0 - l_1))
//   output    y[b,k,c,p]   = Σ_r a_r[b,k,c] · U[b,r,k,c,p]   pass 2 over U
//
// The radix is a static attribute, so the softmax and the weighted sum
// unroll it: every output element is written once (no zero fill of the
// result, no transposes, no softmax in three passes). The FCs are generics
// too, so the GPU's op stays a handful of kernels; on the host (option
// `split-attention-gemm`) one-group f32 FCs are GEMM library calls from
// batch 2 on. Between the passes over U everything is B x C-sized and
// computed in f32 for f16/bf16 inputs.
//
//===----------------------------------------------------------------------===//

#include "SplitAttention.h"
#include "PopulatePatterns.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::grove;

/// The largest FC weight (elements) that split attention multiplies with the
/// GEMM library at batch 1 (docs/perf.md, "Split attention").
static constexpr int64_t kLibraryGemvElements = 64 * 1024;

Value SplitAttentionBuilder::viewU() {
  Value u6 = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({b, r, k, cg, h, w}, elt), in.input,
      ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}, {4}, {5}},
      ArrayRef<OpFoldResult>{batch, idx(r), idx(k), idx(cg), uDims[2],
                             uDims[3]});
  return tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get({b, r, k, cg, hw}, elt), u6,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3}, {4, 5}});
}

Value SplitAttentionBuilder::pool(Value u5) {
  return generic({RankedTensorType::get({b, k, cg}, acc)}, {u5},
                 {zeros({b, k, cg})},
                 {map(5, {d(0), d(3), d(1), d(2), d(4)}),
                  map(5, {d(0), d(1), d(2)})},
                 {par, par, par, red, red},
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   linalg::YieldOp::create(
                       nb, l, fastAdd(nb, l, toAcc(nb, l, a[0]), a[1]));
                 })
      .getResult(0);
}

// The FCs with one cardinal group in f32 (when `fcGemms`): GEMMs (batch x C
// times C x I), for the GEMM library's kernels, which keep each weight in a
// register across several images. At batch 1 they are matrix-vector
// products bound by streaming the weights: up to kLibraryGemvElements of
// them the library's kernel on one core is the faster (waking the second
// core costs about what it saves there); above, the loops stream them on
// the whole thread team.
Value SplitAttentionBuilder::fc(int64_t weightElements,
                                function_ref<Value()> gemm,
                                function_ref<Value()> loops) {
  if (!fcGemms || k != 1 || !elt.isF32())
    return loops();
  if (weightElements <= kLibraryGemvElements)
    return gemm();
  std::optional<int64_t> staticBatch = getConstantIntValue(batch);
  if (staticBatch)
    return *staticBatch > 1 ? gemm() : loops();
  if (!several)
    several = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::sgt,
        getValueOrCreateConstantIndexOp(rewriter, loc, batch),
        arith::ConstantIndexOp::create(rewriter, loc, 1));
  auto branch = [](function_ref<Value()> build) {
    return [build](OpBuilder &nb, Location l) {
      scf::YieldOp::create(nb, l, build());
    };
  };
  return scf::IfOp::create(rewriter, loc, several, branch(gemm), branch(loops))
      .getResult(0);
}

// x (B x 1 x cols) times weight (rows x cols)^T, as B x resultShape.
Value SplitAttentionBuilder::fcGemm(Value x, Value weight, int64_t rows,
                                    int64_t cols,
                                    ArrayRef<int64_t> resultShape) {
  Value x2 = tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get({b, cols}, acc), x,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  Value mm =
      MatmulOp::create(rewriter, loc, RankedTensorType::get({b, rows}, acc), x2,
                       regroup(weight, {rows, cols}),
                       /*transpose_lhs=*/false, /*transpose_rhs=*/true);
  ReassociationIndices rest;
  for (size_t i = 1; i < resultShape.size(); ++i)
    rest.push_back(i);
  return tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(resultShape, acc), mm,
      ArrayRef<ReassociationIndices>{{0}, rest}, batchDims(resultShape));
}

Value SplitAttentionBuilder::fc1(Value pooled) {
  return fc(
      inter * cg,
      [&] {
        return fcGemm(pooled, in.fc1Weight, ig, cg, {b, k, ig});
      },
      [&] {
        Value w1 = regroup(in.fc1Weight, {k, ig, cg});
        return generic({RankedTensorType::get({b, k, ig}, acc)}, {pooled, w1},
                       {zeros({b, k, ig})},
                       {map(4, {d(2), d(0), d(3)}), map(4, {d(0), d(1), d(3)}),
                        map(4, {d(2), d(0), d(1)})},
                       {par, par, par, red},
                       [&](OpBuilder &nb, Location l, ValueRange a) {
                         multiplyAdd(nb, l, a);
                       })
            .getResult(0);
      });
}

Value SplitAttentionBuilder::inverseImageSize() {
  if (invHw)
    return invHw;
  Value hwIndex = arith::MulIOp::create(
      rewriter, loc, getValueOrCreateConstantIndexOp(rewriter, loc, uDims[2]),
      getValueOrCreateConstantIndexOp(rewriter, loc, uDims[3]));
  invHw = arith::DivFOp::create(
      rewriter, loc, createFloat(rewriter, loc, acc, 1.0),
      arith::SIToFPOp::create(rewriter, loc, acc,
                              arith::IndexCastOp::create(rewriter, loc,
                                                         rewriter.getI64Type(),
                                                         hwIndex)));
  return invHw;
}

Value SplitAttentionBuilder::bnRelu(Value z) {
  Value invHw = inverseImageSize();
  Value eps = createFloat(rewriter, loc, acc, epsilon);
  SmallVector<Value> hIns = {z};
  for (Value v : {in.fc1Bias, in.bnMean, in.bnVariance, in.bnScale, in.bnBias})
    hIns.push_back(regroup(v, {k, ig}));
  AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
  AffineMap perGroup = map(3, {d(1), d(2)});
  return generic({RankedTensorType::get({b, k, ig}, acc)}, hIns,
                 {empty({b, k, ig})},
                 {id3, perGroup, perGroup, perGroup, perGroup, perGroup, id3},
                 {par, par, par},
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   Value x = arith::MulFOp::create(nb, l, a[0], invHw);
                   x = arith::AddFOp::create(nb, l, x, toAcc(nb, l, a[1]));
                   x = arith::SubFOp::create(nb, l, x, toAcc(nb, l, a[2]));
                   Value sd = math::SqrtOp::create(
                       nb, l,
                       arith::AddFOp::create(nb, l, toAcc(nb, l, a[3]), eps));
                   Value y = arith::MulFOp::create(
                       nb, l, x,
                       arith::DivFOp::create(nb, l, toAcc(nb, l, a[4]), sd));
                   y = arith::AddFOp::create(nb, l, y, toAcc(nb, l, a[5]));
                   Value zero = createFloat(nb, l, acc, 0.0);
                   linalg::YieldOp::create(
                       nb, l,
                       arith::MaximumFOp::create(nb, l, y, zero).getResult());
                 })
      .getResult(0);
}

Value SplitAttentionBuilder::fc2(Value hidden) {
  return fc(
      r * c * ig,
      [&] {
        return fcGemm(hidden, in.fc2Weight, r * cg, ig, {b, k, r, cg});
      },
      [&] {
        Value w2 = regroup(in.fc2Weight, {k, r, cg, ig});
        return generic({RankedTensorType::get({b, k, r, cg}, acc)},
                       {hidden, w2}, {zeros({b, k, r, cg})},
                       {map(5, {d(3), d(0), d(4)}),
                        map(5, {d(0), d(1), d(2), d(4)}),
                        map(5, {d(3), d(0), d(1), d(2)})},
                       {par, par, par, par, red},
                       [&](OpBuilder &nb, Location l, ValueRange a) {
                         multiplyAdd(nb, l, a);
                       })
            .getResult(0);
      });
}

SmallVector<Value> mlir::grove::radixSoftmax(OpBuilder &nb, Location l,
                                             Type acc, ArrayRef<Value> x) {
  int64_t r = x.size();
  Value one = createFloat(nb, l, acc, 1.0);
  // sigmoid(x) = 1 / (1 + exp(-x)); exp overflowing to +inf gives 0.
  auto sigmoid = [&](Value v) -> Value {
    Value e = math::ExpOp::create(nb, l, arith::NegFOp::create(nb, l, v));
    return arith::DivFOp::create(nb, l, one,
                                 arith::AddFOp::create(nb, l, one, e));
  };
  if (r == 1)
    return {sigmoid(x[0])};
  if (r == 2) {
    // The softmax of two logits with one exp: a0 = sigmoid(x0 - x1).
    Value a0 = sigmoid(arith::SubFOp::create(nb, l, x[0], x[1]));
    return {a0, arith::SubFOp::create(nb, l, one, a0)};
  }
  Value m = x[0];
  for (int64_t i = 1; i < r; ++i)
    m = arith::MaximumFOp::create(nb, l, m, x[i]);
  SmallVector<Value> e;
  Value sum;
  for (int64_t i = 0; i < r; ++i) {
    e.push_back(
        math::ExpOp::create(nb, l, arith::SubFOp::create(nb, l, x[i], m)));
    sum = i ? arith::AddFOp::create(nb, l, sum, e[i]).getResult() : e[i];
  }
  Value inv = arith::DivFOp::create(nb, l, one, sum);
  SmallVector<Value> results;
  for (int64_t i = 0; i < r; ++i)
    results.push_back(arith::MulFOp::create(nb, l, e[i], inv));
  return results;
}

linalg::GenericOp SplitAttentionBuilder::rSoftmax(Value logits) {
  Value b2 = regroup(in.fc2Bias, {k, r, cg});
  SmallVector<Value> sIns;
  SmallVector<AffineMap> sMaps;
  for (int64_t i = 0; i < r; ++i) {
    sIns.push_back(logits);
    sMaps.push_back(map(3, {d(0), d(1), cst(i), d(2)}));
  }
  for (int64_t i = 0; i < r; ++i) {
    sIns.push_back(b2);
    sMaps.push_back(map(3, {d(1), cst(i), d(2)}));
  }
  SmallVector<Value> sOuts;
  SmallVector<Type> sTypes;
  for (int64_t i = 0; i < r; ++i) {
    sOuts.push_back(empty({b, k, cg}));
    sTypes.push_back(sOuts.back().getType());
    sMaps.push_back(AffineMap::getMultiDimIdentityMap(3, ctx));
  }
  return generic(sTypes, sIns, sOuts, sMaps, {par, par, par},
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   SmallVector<Value> x;
                   for (int64_t i = 0; i < r; ++i)
                     x.push_back(arith::AddFOp::create(nb, l, a[i],
                                                       toAcc(nb, l, a[r + i])));
                   linalg::YieldOp::create(nb, l, radixSoftmax(nb, l, acc, x));
                 });
}

Value SplitAttentionBuilder::apply(Value u5, linalg::GenericOp softmax) {
  SmallVector<Value> oIns;
  SmallVector<AffineMap> oMaps;
  for (int64_t i = 0; i < r; ++i) {
    oIns.push_back(u5);
    oMaps.push_back(map(4, {d(0), cst(i), d(1), d(2), d(3)}));
  }
  for (int64_t i = 0; i < r; ++i) {
    oIns.push_back(softmax.getResult(i));
    oMaps.push_back(map(4, {d(0), d(1), d(2)}));
  }
  oMaps.push_back(AffineMap::getMultiDimIdentityMap(4, ctx));
  auto outType = RankedTensorType::get({b, k, cg, hw}, elt);
  Value outInit = createEmpty(
      rewriter, loc, outType,
      {batch, idx(k), idx(cg), tensor::getMixedSize(rewriter, loc, u5, 4)});
  return generic({outType}, oIns, {outInit}, oMaps, {par, par, par, par},
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   Value sum;
                   for (int64_t i = 0; i < r; ++i) {
                     Value p = arith::MulFOp::create(nb, l, toAcc(nb, l, a[i]),
                                                     a[r + i]);
                     sum = i ? arith::AddFOp::create(nb, l, sum, p).getResult()
                             : p;
                   }
                   linalg::YieldOp::create(nb, l, castFloat(nb, l, sum, elt));
                 })
      .getResult(0);
}

void SplitAttentionBuilder::replace(Value out) {
  Value flat = tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get({b, c, hw}, elt), out,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}});
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
      op, op->getResult(0).getType(), flat,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}},
      ArrayRef<OpFoldResult>{batch, idx(c), uDims[2], uDims[3]});
}

namespace {

struct SplitAttentionLowering : OpConversionPattern<SplitAttentionOp> {
  SplitAttentionLowering(MLIRContext *ctx, bool fcGemms)
      : OpConversionPattern(ctx), fcGemms(fcGemms) {}

  LogicalResult
  matchAndRewrite(SplitAttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SplitAttentionBuilder build(op, adaptor, rewriter, fcGemms);
    Value u5 = build.viewU();
    Value pooled = build.pool(u5);
    Value hidden = build.bnRelu(build.fc1(pooled));
    linalg::GenericOp softmax = build.rSoftmax(build.fc2(hidden));
    build.replace(build.apply(u5, softmax));
    return success();
  }

private:
  bool fcGemms;
};

} // namespace

void mlir::grove::populateSplitAttentionPatterns(RewritePatternSet &patterns,
                                                 bool fcGemms) {
  patterns.add<SplitAttentionLowering>(patterns.getContext(), fcGemms);
  populateSplitAttentionGradPatterns(patterns, fcGemms);
}
