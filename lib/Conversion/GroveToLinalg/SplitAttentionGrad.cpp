//===- SplitAttentionGrad.cpp - grove.split_attention_grad to linalg ------===//
//
// The backward of split attention (SplitAttention.cpp has the forward and
// the names), with dy = dL/dy viewed as B x K x Cg x (H·W):
//
//   pass 1     t_r[b,r,k,c] = Σ_p U[b,r,k,c,p]                reads U once
//              g_r[b,r,k,c] = Σ_p dy[b,k,c,p] · U[b,r,k,c,p]
//   s, fc1, bn+relu, fc2     the forward's steps again, at B x C size
//              (s = Σ_r t_r)
//   rsoftmax'  dl[b,k,r,c]  = a_r (g_r - Σ_r' a_r' g_r'); a kept too
//   fc2'       db2 = Σ_b dl, dW2 = Σ_b dl · h, dh = Σ_{r,c} dl · W2
//   bn'+relu'  dn = dh [h > 0]; dβ = Σ_b dn, dγ = Σ_b dn · x̂,
//              dz' = dn γ/√(σ²+ε) (z' = z/(H·W) + b1), db1 = Σ_b dz'
//   fc1'       dW1 = Σ_b dz' · s/(H·W), ds = Σ_o dz' · W1
//   pass 2     dU[b,r,k,c,p] = a_r · dy[b,k,c,p] + ds[b,k,c]/(H·W)
//
// Only pass 1 reads U and pass 2 never does: the backward reads U once and
// dy twice, where differentiating the decomposition would read U and
// several U-sized intermediates many times.
//
//===----------------------------------------------------------------------===//

#include "PopulatePatterns.h"
#include "SplitAttention.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

class SplitAttentionGradBuilder : public SplitAttentionBuilder {
public:
  using SplitAttentionBuilder::SplitAttentionBuilder;

  /// dy (B x C x H x W) as B x K x Cg x (H·W).
  Value viewResultGrad(Value dy);
  /// Pass 1, loops (b, r, k, c, p): each split's sum over the image and
  /// its inner product with dy.
  std::pair<Value, Value> splitSums(Value u5, Value dy4);
  /// s[b,k,c] = Σ_r t_r: the forward's pooled sums.
  Value sumSplits(Value sums);
  /// a and dl (both B x K x R x Cg) from the logits and g_r.
  std::pair<Value, Value> softmaxGrad(Value logits, Value g);
  Value fc2BiasGrad(Value dl);
  Value fc2WeightGrad(Value dl, Value hidden);
  Value hiddenGrad(Value dl);
  /// dγ and dβ, per (k, o).
  std::pair<Value, Value> bnGrad(Value dh, Value hidden, Value z);
  /// dz' (B x K x Ig) and db1 = γ/√(σ²+ε) dβ.
  std::pair<Value, Value> preBnGrad(Value dh, Value hidden, Value dBeta);
  Value fc1WeightGrad(Value dzp, Value pooled);
  /// Σ_o dz' · W1: the gradient of the mean s/(H·W).
  Value pooledGrad(Value dzp);
  /// Pass 2, loops (b, r, k, c, p), as B x C·R x H x W.
  Value inputGrad(Value dy4, Value a, Value ds);
  /// A B-free accumulator tensor in the element type, reshaped to `type`.
  Value result(Value v, Type type);

private:
  /// 1 / √(σ² + ε) of a (k, o) channel, in a body.
  Value inverseStd(OpBuilder &nb, Location l, Value variance) {
    Value eps = createFloat(nb, l, acc, epsilon);
    Value sd = math::SqrtOp::create(
        nb, l, arith::AddFOp::create(nb, l, toAcc(nb, l, variance), eps));
    return arith::DivFOp::create(nb, l, createFloat(nb, l, acc, 1.0), sd);
  }
  /// dh where the ReLU passed its input (h > 0), else 0.
  Value reluGrad(OpBuilder &nb, Location l, Value dh, Value hidden) {
    Value zero = createFloat(nb, l, acc, 0.0);
    Value on =
        arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, hidden, zero);
    return arith::SelectOp::create(nb, l, on, dh, zero);
  }
  Value mul(OpBuilder &nb, Location l, Value x, Value y) {
    return arith::MulFOp::create(nb, l, x, y);
  }
};

Value SplitAttentionGradBuilder::viewResultGrad(Value dy) {
  Value dy5 = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get({b, k, cg, h, w}, elt), dy,
      ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
      ArrayRef<OpFoldResult>{batch, idx(k), idx(cg), uDims[2], uDims[3]});
  return tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get({b, k, cg, hw}, elt), dy5,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2}, {3, 4}});
}

std::pair<Value, Value> SplitAttentionGradBuilder::splitSums(Value u5,
                                                             Value dy4) {
  SmallVector<int64_t> shape = {b, r, k, cg};
  Type t = RankedTensorType::get(shape, acc);
  AffineMap out = map(5, {d(0), d(1), d(2), d(3)});
  auto g = generic(
      {t, t}, {u5, dy4}, {zeros(shape), zeros(shape)},
      {AffineMap::getMultiDimIdentityMap(5, ctx),
       map(5, {d(0), d(2), d(3), d(4)}), out, out},
      {par, par, par, par, red}, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value u = toAcc(nb, l, a[0]);
        Value ug = mul(nb, l, u, toAcc(nb, l, a[1]));
        linalg::YieldOp::create(
            nb, l,
            ValueRange{fastAdd(nb, l, u, a[2]), fastAdd(nb, l, ug, a[3])});
      });
  return {g.getResult(0), g.getResult(1)};
}

Value SplitAttentionGradBuilder::sumSplits(Value sums) {
  return generic({RankedTensorType::get({b, k, cg}, acc)}, {sums},
                 {zeros({b, k, cg})},
                 {map(4, {d(0), d(3), d(1), d(2)}), map(4, {d(0), d(1), d(2)})},
                 {par, par, par, red},
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   linalg::YieldOp::create(nb, l, fastAdd(nb, l, a[0], a[1]));
                 })
      .getResult(0);
}

std::pair<Value, Value> SplitAttentionGradBuilder::softmaxGrad(Value logits,
                                                               Value g) {
  // Loops (b, k, r, c): the R logits, biases and g_r of (b, k, c) through
  // constant radix indices; this point's own split picked by its index.
  Value b2 = regroup(in.fc2Bias, {k, r, cg});
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  for (int64_t i = 0; i < r; ++i) {
    ins.push_back(logits);
    maps.push_back(map(4, {d(0), d(1), cst(i), d(3)}));
  }
  for (int64_t i = 0; i < r; ++i) {
    ins.push_back(b2);
    maps.push_back(map(4, {d(1), cst(i), d(3)}));
  }
  for (int64_t i = 0; i < r; ++i) {
    ins.push_back(g);
    maps.push_back(map(4, {d(0), cst(i), d(1), d(3)}));
  }
  SmallVector<int64_t> shape = {b, k, r, cg};
  Type t = RankedTensorType::get(shape, acc);
  maps.append(2, AffineMap::getMultiDimIdentityMap(4, ctx));
  auto op = generic(
      {t, t}, ins, {empty(shape), empty(shape)}, maps, {par, par, par, par},
      [&](OpBuilder &nb, Location l, ValueRange a) {
        SmallVector<Value> x;
        for (int64_t i = 0; i < r; ++i)
          x.push_back(
              arith::AddFOp::create(nb, l, a[i], toAcc(nb, l, a[r + i])));
        SmallVector<Value> att = radixSoftmax(nb, l, acc, x);
        ValueRange gs = a.slice(2 * r, r);
        Value dot = mul(nb, l, att[0], gs[0]);
        Value own = att[0], ownG = gs[0];
        Value split = linalg::IndexOp::create(nb, l, 2);
        for (int64_t i = 1; i < r; ++i) {
          dot = arith::AddFOp::create(nb, l, dot, mul(nb, l, att[i], gs[i]));
          Value here =
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, split,
                                    arith::ConstantIndexOp::create(nb, l, i));
          own = arith::SelectOp::create(nb, l, here, att[i], own);
          ownG = arith::SelectOp::create(nb, l, here, gs[i], ownG);
        }
        Value dl = mul(nb, l, own, arith::SubFOp::create(nb, l, ownG, dot));
        linalg::YieldOp::create(nb, l, ValueRange{own, dl});
      });
  return {op.getResult(0), op.getResult(1)};
}

Value SplitAttentionGradBuilder::fc2BiasGrad(Value dl) {
  return generic({RankedTensorType::get({k, r, cg}, acc)}, {dl},
                 {staticZeros({k, r, cg})},
                 {map(4, {d(3), d(0), d(1), d(2)}), map(4, {d(0), d(1), d(2)})},
                 {par, par, par, red},
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   linalg::YieldOp::create(nb, l, fastAdd(nb, l, a[0], a[1]));
                 })
      .getResult(0);
}

Value SplitAttentionGradBuilder::fc2WeightGrad(Value dl, Value hidden) {
  // Loops (k, r, c, o, b).
  return generic({RankedTensorType::get({k, r, cg, ig}, acc)}, {dl, hidden},
                 {staticZeros({k, r, cg, ig})},
                 {map(5, {d(4), d(0), d(1), d(2)}), map(5, {d(4), d(0), d(3)}),
                  map(5, {d(0), d(1), d(2), d(3)})},
                 {par, par, par, par, red},
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   multiplyAdd(nb, l, a);
                 })
      .getResult(0);
}

Value SplitAttentionGradBuilder::hiddenGrad(Value dl) {
  // Loops (b, k, o, r, c).
  Value w2 = regroup(in.fc2Weight, {k, r, cg, ig});
  return generic({RankedTensorType::get({b, k, ig}, acc)}, {dl, w2},
                 {zeros({b, k, ig})},
                 {map(5, {d(0), d(1), d(3), d(4)}),
                  map(5, {d(1), d(3), d(4), d(2)}), map(5, {d(0), d(1), d(2)})},
                 {par, par, par, red, red},
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   multiplyAdd(nb, l, a);
                 })
      .getResult(0);
}

std::pair<Value, Value>
SplitAttentionGradBuilder::bnGrad(Value dh, Value hidden, Value z) {
  // Loops (k, o, b); x̂ = (z/(H·W) + b1 - μ)/√(σ²+ε) as the forward has it.
  Value invHw = inverseImageSize();
  SmallVector<Value> ins = {dh, hidden, z};
  for (Value v : {in.fc1Bias, in.bnMean, in.bnVariance})
    ins.push_back(regroup(v, {k, ig}));
  AffineMap perImage = map(3, {d(2), d(0), d(1)});
  AffineMap perChannel = map(3, {d(0), d(1)});
  Type t = RankedTensorType::get({k, ig}, acc);
  auto op =
      generic({t, t}, ins, {staticZeros({k, ig}), staticZeros({k, ig})},
              {perImage, perImage, perImage, perChannel, perChannel, perChannel,
               perChannel, perChannel},
              {par, par, red}, [&](OpBuilder &nb, Location l, ValueRange a) {
                Value dn = reluGrad(nb, l, a[0], a[1]);
                Value x = mul(nb, l, a[2], invHw);
                x = arith::AddFOp::create(nb, l, x, toAcc(nb, l, a[3]));
                x = arith::SubFOp::create(nb, l, x, toAcc(nb, l, a[4]));
                Value xhat = mul(nb, l, x, inverseStd(nb, l, a[5]));
                linalg::YieldOp::create(
                    nb, l,
                    ValueRange{fastAdd(nb, l, mul(nb, l, dn, xhat), a[6]),
                               fastAdd(nb, l, dn, a[7])});
              });
  return {op.getResult(0), op.getResult(1)};
}

std::pair<Value, Value>
SplitAttentionGradBuilder::preBnGrad(Value dh, Value hidden, Value dBeta) {
  Value gamma = regroup(in.bnScale, {k, ig});
  Value variance = regroup(in.bnVariance, {k, ig});
  AffineMap id3 = AffineMap::getMultiDimIdentityMap(3, ctx);
  AffineMap perGroup = map(3, {d(1), d(2)});
  Value dzp =
      generic({RankedTensorType::get({b, k, ig}, acc)},
              {dh, hidden, gamma, variance}, {empty({b, k, ig})},
              {id3, id3, perGroup, perGroup, id3}, {par, par, par},
              [&](OpBuilder &nb, Location l, ValueRange a) {
                Value scale =
                    mul(nb, l, toAcc(nb, l, a[2]), inverseStd(nb, l, a[3]));
                linalg::YieldOp::create(
                    nb, l, mul(nb, l, reluGrad(nb, l, a[0], a[1]), scale));
              })
          .getResult(0);
  AffineMap id2 = AffineMap::getMultiDimIdentityMap(2, ctx);
  Value db1 =
      generic({RankedTensorType::get({k, ig}, acc)}, {dBeta, gamma, variance},
              {staticZeros({k, ig})}, {id2, id2, id2, id2}, {par, par},
              [&](OpBuilder &nb, Location l, ValueRange a) {
                Value scale =
                    mul(nb, l, toAcc(nb, l, a[1]), inverseStd(nb, l, a[2]));
                linalg::YieldOp::create(nb, l, mul(nb, l, a[0], scale));
              })
          .getResult(0);
  return {dzp, db1};
}

Value SplitAttentionGradBuilder::fc1WeightGrad(Value dzp, Value pooled) {
  // Loops (k, o, c, b); the pooled sums divided by H·W are the means.
  Value invHw = inverseImageSize();
  return generic({RankedTensorType::get({k, ig, cg}, acc)}, {dzp, pooled},
                 {staticZeros({k, ig, cg})},
                 {map(4, {d(3), d(0), d(1)}), map(4, {d(3), d(0), d(2)}),
                  map(4, {d(0), d(1), d(2)})},
                 {par, par, par, red},
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   Value p = mul(nb, l, mul(nb, l, a[0], a[1]), invHw);
                   linalg::YieldOp::create(nb, l, fastAdd(nb, l, p, a[2]));
                 })
      .getResult(0);
}

Value SplitAttentionGradBuilder::pooledGrad(Value dzp) {
  // Loops (b, k, c, o).
  Value w1 = regroup(in.fc1Weight, {k, ig, cg});
  return generic({RankedTensorType::get({b, k, cg}, acc)}, {dzp, w1},
                 {zeros({b, k, cg})},
                 {map(4, {d(0), d(1), d(3)}), map(4, {d(1), d(3), d(2)}),
                  map(4, {d(0), d(1), d(2)})},
                 {par, par, par, red},
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   multiplyAdd(nb, l, a);
                 })
      .getResult(0);
}

Value SplitAttentionGradBuilder::inputGrad(Value dy4, Value a, Value ds) {
  Value invHw = inverseImageSize();
  auto type = RankedTensorType::get({b, r, k, cg, hw}, elt);
  Value init = createEmpty(rewriter, loc, type,
                           {batch, idx(r), idx(k), idx(cg),
                            tensor::getMixedSize(rewriter, loc, dy4, 3)});
  Value du5 =
      generic({type}, {dy4, a, ds}, {init},
              {map(5, {d(0), d(2), d(3), d(4)}),
               map(5, {d(0), d(2), d(1), d(3)}), map(5, {d(0), d(2), d(3)}),
               AffineMap::getMultiDimIdentityMap(5, ctx)},
              {par, par, par, par, par},
              [&](OpBuilder &nb, Location l, ValueRange x) {
                Value v = mul(nb, l, x[1], toAcc(nb, l, x[0]));
                v = arith::AddFOp::create(nb, l, v, mul(nb, l, x[2], invHw));
                linalg::YieldOp::create(nb, l, castFloat(nb, l, v, elt));
              })
          .getResult(0);
  Value flat = tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get({b, r * c, hw}, elt), du5,
      ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}, {4}});
  return tensor::ExpandShapeOp::create(
      rewriter, loc, in.input.getType(), flat,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}},
      ArrayRef<OpFoldResult>{batch, idx(r * c), uDims[2], uDims[3]});
}

Value SplitAttentionGradBuilder::result(Value v, Type type) {
  auto from = cast<RankedTensorType>(v.getType());
  if (acc != elt) {
    auto to = RankedTensorType::get(from.getShape(), elt);
    AffineMap id = AffineMap::getMultiDimIdentityMap(from.getRank(), ctx);
    SmallVector<IteratorType> iterators(from.getRank(), par);
    v = generic({to}, {v},
                {createEmpty(rewriter, loc, to, getDims(rewriter, loc, v))},
                {id, id}, iterators,
                [&](OpBuilder &nb, Location l, ValueRange a) {
                  linalg::YieldOp::create(nb, l, castFloat(nb, l, a[0], elt));
                })
            .getResult(0);
  }
  return ReshapeOp::create(rewriter, loc, cast<RankedTensorType>(type), v);
}

struct SplitAttentionGradLowering : OpConversionPattern<SplitAttentionGradOp> {
  SplitAttentionGradLowering(MLIRContext *ctx, bool fcGemms)
      : OpConversionPattern(ctx), fcGemms(fcGemms) {}

  LogicalResult
  matchAndRewrite(SplitAttentionGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SplitAttentionGradBuilder build(op, adaptor, rewriter, fcGemms);
    Value u5 = build.viewU();
    Value dy4 = build.viewResultGrad(adaptor.getResultGrad());
    auto [sums, g] = build.splitSums(u5, dy4);
    Value pooled = build.sumSplits(sums);
    Value z = build.fc1(pooled);
    Value hidden = build.bnRelu(z);
    auto [a, dl] = build.softmaxGrad(build.fc2(hidden), g);
    Value dh = build.hiddenGrad(dl);
    auto [dGamma, dBeta] = build.bnGrad(dh, hidden, z);
    auto [dzp, db1] = build.preBnGrad(dh, hidden, dBeta);
    Value du = build.inputGrad(dy4, a, build.pooledGrad(dzp));
    // Braced lists evaluate in order: the IR follows the results' order.
    SmallVector<Value> weightGrads = {build.fc1WeightGrad(dzp, pooled),
                                      db1,
                                      dGamma,
                                      dBeta,
                                      build.fc2WeightGrad(dl, hidden),
                                      build.fc2BiasGrad(dl)};
    SmallVector<Value> grads = {du};
    for (auto [v, t] :
         llvm::zip(weightGrads, TypeRange(op.getResultTypes()).drop_front()))
      grads.push_back(build.result(v, t));
    rewriter.replaceOp(op, grads);
    return success();
  }

private:
  bool fcGemms;
};

} // namespace

void mlir::grove::populateSplitAttentionGradPatterns(
    RewritePatternSet &patterns, bool fcGemms) {
  patterns.add<SplitAttentionGradLowering>(patterns.getContext(), fcGemms);
}
