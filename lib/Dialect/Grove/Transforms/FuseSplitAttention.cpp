//===- FuseSplitAttention.cpp - ResNeSt's attention into one op -----------===//
//
// Two patterns, rooted at the final sum (radix above 1) and at the gating
// product (radix 1), walk up from there and check every step of the
// SplAtConv2d attention as the pass description lists it; any deviation
// leaves the IR alone. It matches structure, not
// names, so it serves whatever frontend emitted the primitive ops: the
// MLP's batch norm may be missing where an exporter folded it into fc1
// (torch.onnx.export in eval mode does), and is then the identity; a sum
// may add a zero (Python's sum() starts from 0).
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEFUSESPLITATTENTION
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

/// A slice of channels [begin, begin + count) of a rank-4 tensor, whole
/// along every other dimension.
struct ChannelSlice {
  Value source;
  int64_t begin = 0, count = 0;
};

std::optional<ChannelSlice> getChannelSlice(Value v) {
  auto slice = v.getDefiningOp<SliceOp>();
  if (!slice)
    return std::nullopt;
  auto in = cast<RankedTensorType>(slice.getInput().getType());
  if (in.getRank() != 4 ||
      !llvm::all_of(slice.getStrides(), [](int64_t s) { return s == 1; }))
    return std::nullopt;
  ArrayRef<int64_t> starts = slice.getStarts(), limits = slice.getLimits();
  for (int d : {0, 2, 3}) {
    bool toEnd = limits[d] == -1 ||
                 (!in.isDynamicDim(d) && limits[d] == in.getDimSize(d));
    if (starts[d] != 0 || !toEnd)
      return std::nullopt;
  }
  int64_t limit = limits[1];
  if (limit == -1 && !in.isDynamicDim(1))
    limit = in.getDimSize(1);
  if (limit <= starts[1])
    return std::nullopt;
  return ChannelSlice{slice.getInput(), starts[1], limit - starts[1]};
}

/// The leaves of a tree of single-use grove.add ops rooted at `root`. An
/// added zero is no leaf: Python's sum() starts from 0, and exporters keep
/// that `+ 0`.
void collectSumLeaves(Value v, bool isRoot, SmallVectorImpl<Value> &leaves,
                      SmallVectorImpl<Operation *> &inner) {
  auto add = v.getDefiningOp<AddOp>();
  if (!add || !(isRoot || v.hasOneUse())) {
    leaves.push_back(v);
    return;
  }
  Value lhs = add.getLhs(), rhs = add.getRhs();
  bool lhsWhole = lhs.getType() == add.getType();
  bool rhsWhole = rhs.getType() == add.getType();
  if (lhsWhole && rhsWhole) {
    inner.push_back(add);
    collectSumLeaves(lhs, false, leaves, inner);
    collectSumLeaves(rhs, false, leaves, inner);
  } else if (lhsWhole && isZeros(rhs)) {
    inner.push_back(add);
    collectSumLeaves(lhs, false, leaves, inner);
  } else if (rhsWhole && isZeros(lhs)) {
    inner.push_back(add);
    collectSumLeaves(rhs, false, leaves, inner);
  } else {
    leaves.push_back(v);
  }
}

/// A 1x1, unstrided, unpadded, undilated grouped convolution with bias.
Conv2DOp getPointwiseConv(Value v, int64_t groups) {
  auto conv = v.getDefiningOp<Conv2DOp>();
  if (!conv || !conv.getBias() || conv.getGroupsAttr().getInt() != groups)
    return nullptr;
  ArrayRef<int64_t> w = conv.getWeight().getType().getShape();
  auto ones = [](ArrayRef<int64_t> a) {
    return llvm::all_of(a, [](int64_t x) { return x == 1; });
  };
  auto zeros = [](ArrayRef<int64_t> a) {
    return llvm::all_of(a, [](int64_t x) { return x == 0; });
  };
  if (w[2] != 1 || w[3] != 1 || !ones(conv.getStrides()) ||
      !ones(conv.getDilations()) || !zeros(conv.getPadding()))
    return nullptr;
  return conv;
}

/// What the attention MLP feeds on and is made of.
struct Mlp {
  Value pooledInput; // the operand of global_avg_pool
  Conv2DOp fc1, fc2;
  BatchNormOp bn; // null where fc1 has it folded in
  SmallVector<Operation *> ops;
};

/// Matches fc2(relu(bn(fc1(global_avg_pool(x))))) ending at `fc2Out`, or
/// the same without bn, with every intermediate used once.
std::optional<Mlp> matchMlp(Value fc2Out, int64_t cardinality) {
  Mlp m;
  m.fc2 = getPointwiseConv(fc2Out, cardinality);
  if (!m.fc2 || !fc2Out.hasOneUse())
    return std::nullopt;
  auto relu = m.fc2.getInput().getDefiningOp<ReluOp>();
  if (!relu || !relu->hasOneUse())
    return std::nullopt;
  Value fc1Out = relu.getInput();
  m.bn = fc1Out.getDefiningOp<BatchNormOp>();
  if (m.bn) {
    if (!m.bn->hasOneUse())
      return std::nullopt;
    fc1Out = m.bn.getInput();
  }
  m.fc1 = getPointwiseConv(fc1Out, cardinality);
  if (!m.fc1 || !m.fc1->hasOneUse())
    return std::nullopt;
  auto gap = m.fc1.getInput().getDefiningOp<GlobalAvgPoolOp>();
  if (!gap || !gap->hasOneUse())
    return std::nullopt;
  m.pooledInput = gap.getInput();
  m.ops = {m.fc2, relu, m.fc1, gap};
  if (m.bn)
    m.ops.push_back(m.bn);
  return m;
}

/// The batch norm's operands (scale, shift, mean, variance) and epsilon:
/// the MLP's, or an exact identity (1, 0, 0, 1 and epsilon 0) where the
/// exporter folded it into fc1.
std::pair<SmallVector<Value, 4>, FloatAttr>
getBatchNorm(PatternRewriter &rewriter, Location loc, Mlp mlp) {
  if (mlp.bn)
    return {{mlp.bn.getScale(), mlp.bn.getBias(), mlp.bn.getMean(),
             mlp.bn.getVariance()},
            mlp.bn.getEpsilonAttr()};
  auto type = cast<RankedTensorType>(mlp.fc1.getBias().getType());
  auto splat = [&](double v) -> Value {
    Attribute value = rewriter.getFloatAttr(type.getElementType(), v);
    return ConstantOp::create(rewriter, loc,
                              DenseElementsAttr::get(type, value));
  };
  Value one = splat(1.0), zero = splat(0.0);
  return {{one, zero, zero, one}, rewriter.getF64FloatAttr(0.0)};
}

/// Replaces `root` with the fused op; the pattern's ops are then dead and
/// the driver erases them.
LogicalResult replaceWithSplitAttention(PatternRewriter &rewriter,
                                        Operation *root, Value u, int64_t radix,
                                        int64_t cardinality, Mlp mlp) {
  auto result = cast<RankedTensorType>(root->getResult(0).getType());
  auto [bn, epsilon] = getBatchNorm(rewriter, root->getLoc(), mlp);
  rewriter.replaceOpWithNewOp<SplitAttentionOp>(
      root, result, u, mlp.fc1.getWeight(), mlp.fc1.getBias(), bn[0], bn[1],
      bn[2], bn[3], mlp.fc2.getWeight(), mlp.fc2.getBias(),
      rewriter.getI64IntegerAttr(radix),
      rewriter.getI64IntegerAttr(cardinality), epsilon);
  return success();
}

/// R > 1, rooted at the final sum of the weighted splits.
struct FuseSplitAttentionRadixN : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  /// R > 1: Σ_j slice_j(att) · slice_j(U) with att the rSoftMax of the MLP
  /// on global_avg_pool(Σ_j slice_j(U)).
  LogicalResult matchAndRewrite(AddOp root,
                                PatternRewriter &rewriter) const override {
    // Every add is tried: a partial sum fails the coverage checks below, and
    // a sum feeding a larger one (a residual) still matches on its own.
    SmallVector<Value> products;
    SmallVector<Operation *> outerAdds;
    collectSumLeaves(root.getResult(), true, products, outerAdds);
    int64_t radix = products.size();
    if (radix < 2)
      return failure();
    if (radix > kMaxSplitAttentionRadix)
      return rewriter.notifyMatchFailure(root, "radix above the op's limit");
    // Each product: a 1x1 attention slice times a slice of U.
    Value u, att;
    int64_t channels = 0;
    SmallVector<Value> uSlices(radix), attSlices(radix);
    SmallVector<Operation *> muls;
    for (Value p : products) {
      auto mul = p.getDefiningOp<MulOp>();
      if (!mul || !p.hasOneUse())
        return rewriter.notifyMatchFailure(root, "a term is not a product");
      std::optional<ChannelSlice> a = getChannelSlice(mul.getLhs());
      std::optional<ChannelSlice> s = getChannelSlice(mul.getRhs());
      Value aValue = mul.getLhs(), sValue = mul.getRhs();
      // The attention is the reshaped softmax (U may be 1x1 spatially too).
      auto isAttention = [](const std::optional<ChannelSlice> &c) {
        auto reshape = c->source.getDefiningOp<ReshapeOp>();
        return reshape && reshape.getInput().getDefiningOp<SoftmaxOp>();
      };
      if (a && s && !isAttention(a)) {
        std::swap(a, s);
        std::swap(aValue, sValue);
      }
      if (!a || !s || !isAttention(a) || a->begin != s->begin ||
          a->count != s->count)
        return rewriter.notifyMatchFailure(root, "unmatched slices");
      if ((u && u != s->source) || (att && att != a->source) ||
          (channels && channels != s->count))
        return rewriter.notifyMatchFailure(root, "slices of different tensors");
      u = s->source;
      att = a->source;
      channels = s->count;
      if (a->begin % channels != 0 || a->begin / channels >= radix)
        return rewriter.notifyMatchFailure(root, "slices do not tile");
      int64_t j = a->begin / channels;
      if (uSlices[j])
        return rewriter.notifyMatchFailure(root, "a split appears twice");
      uSlices[j] = sValue;
      attSlices[j] = aValue;
      if (!aValue.hasOneUse())
        return rewriter.notifyMatchFailure(root, "attention slice reused");
      muls.push_back(mul);
    }
    auto uType = cast<RankedTensorType>(u.getType());
    if (uType.getDimSize(1) != radix * channels)
      return rewriter.notifyMatchFailure(root, "splits do not cover U");

    // att = reshape(softmax_1(transpose_[0,2,1,3](reshape(fc2)))).
    if (!llvm::all_of(att.getUsers(),
                      [](Operation *user) { return isa<SliceOp>(user); }) ||
        llvm::range_size(att.getUsers()) != static_cast<size_t>(radix))
      return rewriter.notifyMatchFailure(root, "attention used elsewhere");
    auto back = att.getDefiningOp<ReshapeOp>();
    auto softmax = back ? back.getInput().getDefiningOp<SoftmaxOp>() : nullptr;
    int64_t axis = softmax ? softmax.getAxisAttr().getInt() : 0;
    if (!softmax || !softmax->hasOneUse() || (axis != 1 && axis != -3))
      return rewriter.notifyMatchFailure(root, "no softmax over the radix");
    auto transpose = softmax.getInput().getDefiningOp<TransposeOp>();
    if (!transpose || !transpose->hasOneUse() ||
        transpose.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3})
      return rewriter.notifyMatchFailure(root, "no radix-major transpose");
    auto view = transpose.getInput().getDefiningOp<ReshapeOp>();
    if (!view || !view->hasOneUse())
      return rewriter.notifyMatchFailure(root, "no cardinal-major view");
    ArrayRef<int64_t> v = view.getType().getShape();
    if (v.size() != 4 || v[2] != radix || v[1] * v[3] != channels)
      return rewriter.notifyMatchFailure(root, "view disagrees with radix");
    int64_t cardinality = v[1];
    std::optional<Mlp> mlp = matchMlp(view.getInput(), cardinality);
    if (!mlp)
      return rewriter.notifyMatchFailure(root, "no attention MLP");
    // The attention is B x R·C x 1 x 1 for U's batch (not, say, one batch
    // row's attention broadcast over all of them).
    auto fc2Type = cast<RankedTensorType>(view.getInput().getType());
    if (back.getType() != fc2Type ||
        fc2Type.getDimSize(0) != uType.getDimSize(0))
      return rewriter.notifyMatchFailure(root, "attention shape differs");

    // The pooled tensor is the sum of the same U slices, each used only
    // there and in its product.
    SmallVector<Value> pooledTerms;
    SmallVector<Operation *> innerAdds;
    collectSumLeaves(mlp->pooledInput, false, pooledTerms, innerAdds);
    if (!mlp->pooledInput.hasOneUse() ||
        pooledTerms.size() != static_cast<size_t>(radix))
      return rewriter.notifyMatchFailure(root, "pooling a different sum");
    for (Value s : uSlices) {
      if (!llvm::is_contained(pooledTerms, s) ||
          llvm::range_size(s.getUsers()) != 2)
        return rewriter.notifyMatchFailure(root, "a split is used elsewhere");
    }
    return replaceWithSplitAttention(rewriter, root, u, radix, cardinality,
                                     *mlp);
  }
};

/// R = 1, rooted at the product of the gate and U.
struct FuseSplitAttentionRadix1 : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  /// sigmoid(MLP(global_avg_pool(U))) · U.
  LogicalResult matchAndRewrite(MulOp root,
                                PatternRewriter &rewriter) const override {
    for (auto [att, u] : {std::pair(root.getLhs(), root.getRhs()),
                          std::pair(root.getRhs(), root.getLhs())}) {
      auto sigmoid = att.getDefiningOp<SigmoidOp>();
      if (!sigmoid || !att.hasOneUse())
        continue;
      auto fc2 = sigmoid.getInput().getDefiningOp<Conv2DOp>();
      if (!fc2)
        continue;
      int64_t cardinality = fc2.getGroupsAttr().getInt();
      std::optional<Mlp> mlp = matchMlp(sigmoid.getInput(), cardinality);
      if (!mlp || mlp->pooledInput != u)
        continue;
      auto uType = cast<RankedTensorType>(u.getType());
      auto attType = cast<RankedTensorType>(att.getType());
      if (uType.getRank() != 4 || root.getType() != uType ||
          attType.getDimSize(0) != uType.getDimSize(0) ||
          attType.getDimSize(1) != uType.getDimSize(1))
        continue;
      return replaceWithSplitAttention(rewriter, root, u, 1, cardinality, *mlp);
    }
    return rewriter.notifyMatchFailure(root, "not radix-1 split attention");
  }
};

struct GroveFuseSplitAttentionPass
    : grove::impl::GroveFuseSplitAttentionBase<GroveFuseSplitAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseSplitAttentionRadixN, FuseSplitAttentionRadix1>(
        &getContext());
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace
