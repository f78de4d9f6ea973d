//===- Transformer.cpp - Layer norm and embeddings to linalg --------------===//
//
// grove.layer_norm and its fused gradient as a few linalg.generics over rows
// (the leading dimensions) and their elements (the trailing ones). A row's
// statistics come from one pass of shifted sums: with x0 the row's first
// element, s1 = Σ (x - x0) and s2 = Σ (x - x0)² give the mean x0 + s1/n
// and the variance s2/n - (s1/n)² without the cancellation of raw sums of
// squares when the mean is large against the spread. Sums are in the
// accumulator type (f32 for bf16/f16).
//
// grove.embedding is one linalg.generic over the result reading the table
// at each id, as grove.gather does. grove.philox_dropout is one elementwise
// generic that computes each element's Philox word from its index.
//
//===----------------------------------------------------------------------===//

#include "PopulatePatterns.h"
#include "Utils.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::grove;

namespace {

using utils::IteratorType;

/// The shapes and maps of a tensor split into k row dimensions and m
/// element dimensions, and the generics built over them.
struct Rows {
  OpBuilder &b;
  Location loc;
  Value x;
  int64_t k, m;
  Type elt, acc;
  SmallVector<OpFoldResult> dims;
  double n;

  Rows(OpBuilder &b, Location loc, Value x, int64_t m)
      : b(b), loc(loc), x(x), m(m) {
    auto type = cast<RankedTensorType>(x.getType());
    k = type.getRank() - m;
    elt = type.getElementType();
    acc = getAccumulatorType(elt);
    dims = getDims(b, loc, x);
    n = 1;
    for (int64_t d : type.getShape().take_back(m))
      n *= double(d);
  }

  int64_t rank() const { return k + m; }
  MLIRContext *ctx() { return b.getContext(); }
  AffineMap id() { return AffineMap::getMultiDimIdentityMap(rank(), ctx()); }
  /// Full iteration space -> the row dimensions.
  AffineMap rowMap() {
    return AffineMap::getMultiDimIdentityMap(rank(), ctx()).getMajorSubMap(k);
  }
  /// Full iteration space -> the element dimensions.
  AffineMap elementMap() {
    return AffineMap::getMultiDimIdentityMap(rank(), ctx()).getMinorSubMap(m);
  }
  /// The row space (k dimensions) -> the row's first element of x.
  AffineMap firstOfRow() {
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < k; ++d)
      exprs.push_back(getAffineDimExpr(d, ctx()));
    for (int64_t d = 0; d < m; ++d)
      exprs.push_back(getAffineConstantExpr(0, ctx()));
    return AffineMap::get(k, 0, exprs, ctx());
  }
  /// A row-shaped tensor of `type` filled with zeros.
  Value rowZeros(Type type) {
    auto t = RankedTensorType::get(
        cast<RankedTensorType>(x.getType()).getShape().take_front(k), type);
    return filled(b, loc, t, ArrayRef(dims).take_front(k),
                  createFloat(b, loc, type, 0.0));
  }
  Value wide(OpBuilder &nb, Location l, Value v) {
    return castFloat(nb, l, v, acc);
  }
  Value c(OpBuilder &nb, Location l, double v) {
    return createFloat(nb, l, acc, v);
  }
  /// Reducing the elements (row statistics) or the rows (column sums).
  SmallVector<IteratorType> iterators(bool reduceElements) {
    SmallVector<IteratorType> it(rank(), IteratorType::parallel);
    for (int64_t d = reduceElements ? k : 0; d < (reduceElements ? rank() : k);
         ++d)
      it[d] = IteratorType::reduction;
    return it;
  }
  SmallVector<IteratorType> parallel() {
    return SmallVector<IteratorType>(rank(), IteratorType::parallel);
  }
};

using Body = function_ref<void(OpBuilder &, Location, ValueRange)>;

SmallVector<Value> generic(OpBuilder &b, Location loc, ValueRange inputs,
                           ValueRange outputs, ArrayRef<AffineMap> maps,
                           ArrayRef<IteratorType> iterators, Body body) {
  auto op = linalg::GenericOp::create(b, loc, TypeRange(outputs), inputs,
                                      outputs, maps, iterators, body);
  return SmallVector<Value>(op.getResults());
}

/// mean and 1/sqrt(var + eps) per row from x0, s1, s2 (row tensors).
std::pair<Value, Value> rowStatistics(Rows &r, Value s1, Value s2, double eps) {
  AffineMap rows = AffineMap::getMultiDimIdentityMap(r.k, r.ctx());
  SmallVector<IteratorType> par(r.k, IteratorType::parallel);
  SmallVector<Value> out = generic(
      r.b, r.loc, ValueRange{r.x, s1, s2},
      ValueRange{r.rowZeros(r.acc), r.rowZeros(r.acc)},
      {r.firstOfRow(), rows, rows, rows, rows}, par,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value n = r.c(nb, l, r.n);
        Value m1 = arith::DivFOp::create(nb, l, a[1], n);
        Value mean = arith::AddFOp::create(nb, l, r.wide(nb, l, a[0]), m1);
        Value var =
            arith::SubFOp::create(nb, l, arith::DivFOp::create(nb, l, a[2], n),
                                  arith::MulFOp::create(nb, l, m1, m1));
        // Rounding may leave a constant row's variance just below zero.
        var = arith::MaximumFOp::create(nb, l, var, r.c(nb, l, 0.0));
        Value rstd = math::RsqrtOp::create(
            nb, l, arith::AddFOp::create(nb, l, var, r.c(nb, l, eps)));
        linalg::YieldOp::create(nb, l, ValueRange{mean, rstd});
      });
  return {out[0], out[1]};
}

/// s1 = Σ (x - x0) and s2 = Σ (x - x0)² per row, one pass; with `dy` and
/// `scale` also a = Σ dy·scale and bs = Σ dy·scale·(x - x0).
SmallVector<Value> shiftedSums(Rows &r, Value dy = {}, Value scale = {}) {
  SmallVector<Value> inputs = {r.x, r.x};
  AffineMap first = r.firstOfRow().compose(r.rowMap());
  SmallVector<AffineMap> maps = {r.id(), first};
  if (dy) {
    inputs.append({dy, scale});
    maps.append({r.id(), r.elementMap()});
  }
  SmallVector<Value> outputs = {r.rowZeros(r.acc), r.rowZeros(r.acc)};
  if (dy)
    outputs.append({r.rowZeros(r.acc), r.rowZeros(r.acc)});
  for (size_t i = 0; i < outputs.size(); ++i)
    maps.push_back(r.rowMap());
  auto fm = getReductionFastMath(r.ctx());
  return generic(
      r.b, r.loc, inputs, outputs, maps, r.iterators(/*reduceElements=*/true),
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value d = arith::SubFOp::create(nb, l, r.wide(nb, l, a[0]),
                                        r.wide(nb, l, a[1]));
        size_t o = dy ? 4 : 2;
        SmallVector<Value> next = {
            arith::AddFOp::create(nb, l, a[o], d, fm),
            arith::AddFOp::create(nb, l, a[o + 1],
                                  arith::MulFOp::create(nb, l, d, d), fm)};
        if (dy) {
          Value g = arith::MulFOp::create(nb, l, r.wide(nb, l, a[2]),
                                          r.wide(nb, l, a[3]));
          next.push_back(arith::AddFOp::create(nb, l, a[o + 2], g, fm));
          next.push_back(arith::AddFOp::create(
              nb, l, a[o + 3], arith::MulFOp::create(nb, l, g, d), fm));
        }
        linalg::YieldOp::create(nb, l, next);
      });
}

/// A tensor of x's shape (or the element shape) and element type.
Value emptyLike(Rows &r, bool elementsOnly = false) {
  auto type = cast<RankedTensorType>(r.x.getType());
  if (!elementsOnly)
    return createEmpty(r.b, r.loc, type, r.dims);
  auto t = RankedTensorType::get(type.getShape().take_back(r.m), r.elt);
  return createEmpty(r.b, r.loc, t, ArrayRef(r.dims).take_back(r.m));
}

struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Rows r(rewriter, loc, adaptor.getInput(),
           op.getScale().getType().getRank());
    SmallVector<Value> sums = shiftedSums(r);
    auto [mean, rstd] =
        rowStatistics(r, sums[0], sums[1], op.getEpsilon().convertToDouble());
    Value y = generic(
        rewriter, loc,
        ValueRange{r.x, mean, rstd, adaptor.getScale(), adaptor.getBias()},
        ValueRange{emptyLike(r)},
        {r.id(), r.rowMap(), r.rowMap(), r.elementMap(), r.elementMap(),
         r.id()},
        r.parallel(), [&](OpBuilder &nb, Location l, ValueRange a) {
          Value xhat = arith::MulFOp::create(
              nb, l, arith::SubFOp::create(nb, l, r.wide(nb, l, a[0]), a[1]),
              a[2]);
          Value v = arith::AddFOp::create(
              nb, l, arith::MulFOp::create(nb, l, xhat, r.wide(nb, l, a[3])),
              r.wide(nb, l, a[4]));
          linalg::YieldOp::create(nb, l, castFloat(nb, l, v, r.elt));
        })[0];
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// dx = rstd (dy·scale - a/n - x̂ c/n) with c = Σ dy·scale·x̂ per row;
/// dscale = Σ_rows dy·x̂, dbias = Σ_rows dy.
struct LayerNormGradLowering : OpConversionPattern<LayerNormGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dy = adaptor.getOutputGrad(), scale = adaptor.getScale();
    Rows r(rewriter, loc, adaptor.getInput(),
           op.getScale().getType().getRank());
    SmallVector<Value> sums = shiftedSums(r, dy, scale);
    auto [mean, rstd] =
        rowStatistics(r, sums[0], sums[1], op.getEpsilon().convertToDouble());
    // a/n and c/n = rstd (bs - (s1/n) a) / n per row.
    AffineMap rows = AffineMap::getMultiDimIdentityMap(r.k, r.ctx());
    SmallVector<IteratorType> par(r.k, IteratorType::parallel);
    SmallVector<Value> coef =
        generic(rewriter, loc, ValueRange{sums[0], sums[2], sums[3], rstd},
                ValueRange{r.rowZeros(r.acc), r.rowZeros(r.acc)},
                {rows, rows, rows, rows, rows, rows}, par,
                [&](OpBuilder &nb, Location l, ValueRange a) {
                  Value n = r.c(nb, l, r.n);
                  Value m1 = arith::DivFOp::create(nb, l, a[0], n);
                  Value cSum = arith::MulFOp::create(
                      nb, l, a[3],
                      arith::SubFOp::create(
                          nb, l, a[2], arith::MulFOp::create(nb, l, m1, a[1])));
                  linalg::YieldOp::create(
                      nb, l,
                      ValueRange{arith::DivFOp::create(nb, l, a[1], n),
                                 arith::DivFOp::create(nb, l, cSum, n)});
                });
    Value dx = generic(
        rewriter, loc, ValueRange{r.x, dy, scale, mean, rstd, coef[0], coef[1]},
        ValueRange{emptyLike(r)},
        {r.id(), r.id(), r.elementMap(), r.rowMap(), r.rowMap(), r.rowMap(),
         r.rowMap(), r.id()},
        r.parallel(), [&](OpBuilder &nb, Location l, ValueRange a) {
          Value xhat = arith::MulFOp::create(
              nb, l, arith::SubFOp::create(nb, l, r.wide(nb, l, a[0]), a[3]),
              a[4]);
          Value g = arith::MulFOp::create(nb, l, r.wide(nb, l, a[1]),
                                          r.wide(nb, l, a[2]));
          Value inner = arith::SubFOp::create(
              nb, l, arith::SubFOp::create(nb, l, g, a[5]),
              arith::MulFOp::create(nb, l, xhat, a[6]));
          Value v = arith::MulFOp::create(nb, l, a[4], inner);
          linalg::YieldOp::create(nb, l, castFloat(nb, l, v, r.elt));
        })[0];
    // Column sums over the rows, in the accumulator type.
    auto colType =
        RankedTensorType::get(op.getScale().getType().getShape(), r.acc);
    auto colZeros = [&] {
      return filled(rewriter, loc, colType, ArrayRef(r.dims).take_back(r.m),
                    createFloat(rewriter, loc, r.acc, 0.0));
    };
    auto fm = getReductionFastMath(r.ctx());
    SmallVector<Value> cols = generic(
        rewriter, loc, ValueRange{r.x, dy, mean, rstd},
        ValueRange{colZeros(), colZeros()},
        {r.id(), r.id(), r.rowMap(), r.rowMap(), r.elementMap(),
         r.elementMap()},
        r.iterators(/*reduceElements=*/false),
        [&](OpBuilder &nb, Location l, ValueRange a) {
          Value xhat = arith::MulFOp::create(
              nb, l, arith::SubFOp::create(nb, l, r.wide(nb, l, a[0]), a[2]),
              a[3]);
          Value g = r.wide(nb, l, a[1]);
          linalg::YieldOp::create(
              nb, l,
              ValueRange{
                  arith::AddFOp::create(
                      nb, l, a[4], arith::MulFOp::create(nb, l, g, xhat), fm),
                  arith::AddFOp::create(nb, l, a[5], g, fm)});
        });
    SmallVector<Value> results = {dx};
    for (Value col : cols) {
      if (r.acc == r.elt) {
        results.push_back(col);
        continue;
      }
      AffineMap id = AffineMap::getMultiDimIdentityMap(r.m, r.ctx());
      results.push_back(generic(
          rewriter, loc, col, emptyLike(r, /*elementsOnly=*/true), {id, id},
          SmallVector<IteratorType>(r.m, IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            linalg::YieldOp::create(nb, l, castFloat(nb, l, a[0], r.elt));
          })[0]);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// One linalg.generic over the result: the id at the leading indices picks
/// the table row, zeros for an id outside the table.
struct EmbeddingLowering : OpConversionPattern<EmbeddingOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EmbeddingOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = type.getRank();
    Value table = adaptor.getTable(), ids = adaptor.getIds();
    Value rows = tensor::DimOp::create(rewriter, loc, table, 0);
    SmallVector<OpFoldResult> dims = getDims(rewriter, loc, ids);
    dims.push_back(getDims(rewriter, loc, table)[1]);
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    Value init = createEmpty(rewriter, loc, type, dims);
    Type element = type.getElementType();
    // The ids' dimensions are the result's leading ones (none for one id).
    SmallVector<AffineExpr> lead;
    for (int64_t d = 0; d + 1 < rank; ++d)
      lead.push_back(rewriter.getAffineDimExpr(d));
    AffineMap idsMap = AffineMap::get(rank, 0, lead, ctx);
    Value out = generic(
        rewriter, loc, ids, init, {idsMap, id},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value column = linalg::IndexOp::create(b, l, rank - 1);
          linalg::YieldOp::create(
              b, l, readRowOrZero(b, l, table, args[0], rows, column, element));
        })[0];
    rewriter.replaceOp(op, out);
    return success();
  }
};

/// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
/// 3"): the four output words for counter `c` and key `k`, all i32. Ten
/// rounds of two 32x32->64 multiplies, the key bumped by the Weyl constants
/// between rounds.
std::array<Value, 4> philox(OpBuilder &b, Location loc, std::array<Value, 4> c,
                            std::array<Value, 2> k) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto constant = [&](uint32_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, int64_t(int32_t(v)));
  };
  auto mulHiLo = [&](uint32_t m, Value x) -> std::pair<Value, Value> {
    Value wide = arith::MulIOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, i64, int64_t(m)),
        arith::ExtUIOp::create(b, loc, i64, x));
    Value hi = arith::TruncIOp::create(
        b, loc, i32,
        arith::ShRUIOp::create(b, loc, wide,
                               arith::ConstantIntOp::create(b, loc, i64, 32)));
    return {hi, arith::TruncIOp::create(b, loc, i32, wide)};
  };
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] = arith::AddIOp::create(b, loc, k[0], constant(0x9E3779B9u));
      k[1] = arith::AddIOp::create(b, loc, k[1], constant(0xBB67AE85u));
    }
    auto [hi0, lo0] = mulHiLo(0xD2511F53u, c[0]);
    auto [hi1, lo1] = mulHiLo(0xCD9E8D57u, c[2]);
    c = {arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, hi1, c[1]),
                               k[0]),
         lo1,
         arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, hi0, c[3]),
                               k[1]),
         lo0};
  }
  return c;
}

/// The low and high 32-bit words of an i64.
std::pair<Value, Value> words(OpBuilder &b, Location loc, Value v) {
  Type i32 = b.getI32Type();
  Value hi = arith::ShRUIOp::create(
      b, loc, v, arith::ConstantIntOp::create(b, loc, b.getI64Type(), 32));
  return {arith::TruncIOp::create(b, loc, i32, v),
          arith::TruncIOp::create(b, loc, i32, hi)};
}

/// One elementwise generic: element i (row-major) keeps where the top 24
/// bits of Philox(counter (i, offset), key k) over 2^24 are at least the
/// rate, scaled by 1 / (1 - rate) in the element type; k is the first two
/// words of Philox(counter (stream, 0), key seed).
struct PhiloxDropoutLowering : OpConversionPattern<PhiloxDropoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PhiloxDropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank();
    MLIRContext *ctx = rewriter.getContext();
    Value x = adaptor.getInput();
    SmallVector<OpFoldResult> dims = getDims(rewriter, loc, x);
    SmallVector<Value> sizes;
    for (OpFoldResult d : dims)
      sizes.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, d));
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap scalar = AffineMap::get(rank, 0, {}, ctx);
    double rate = op.getRate().convertToDouble();
    // u >= rate with u = w / 2^24 for a 24-bit w: w >= ceil(rate 2^24).
    int64_t threshold = int64_t(std::ceil(rate * double(1 << 24)));
    int64_t stream = op.getStream();
    Type element = type.getElementType();
    Value out = generic(
        rewriter, loc, ValueRange{x, adaptor.getSeed(), adaptor.getOffset()},
        ValueRange{createEmpty(rewriter, loc, type, dims)},
        {id, scalar, scalar, id},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Type i64 = b.getI64Type();
          // The row-major index of the element.
          Value flat = arith::ConstantIndexOp::create(b, l, 0);
          for (int64_t d = 0; d < rank; ++d)
            flat = arith::AddIOp::create(
                b, l, arith::MulIOp::create(b, l, flat, sizes[d]),
                linalg::IndexOp::create(b, l, d));
          Value index = arith::IndexCastUIOp::create(b, l, i64, flat);
          auto [i0, i1] = words(b, l, index);
          auto [o0, o1] = words(b, l, a[2]);
          auto [s0, s1] = words(b, l, a[1]);
          // The stream's own key: Philox of the stream under the seed (a
          // fold-in; loop-invariant, so LLVM computes it once).
          Type i32 = b.getI32Type();
          auto word32 = [&](uint64_t v) -> Value {
            return arith::ConstantIntOp::create(b, l, i32,
                                                int64_t(int32_t(uint32_t(v))));
          };
          std::array<Value, 4> key =
              philox(b, l,
                     {word32(uint64_t(stream)), word32(uint64_t(stream) >> 32),
                      word32(0), word32(0)},
                     {s0, s1});
          Value word = philox(b, l, {i0, i1, o0, o1}, {key[0], key[1]})[0];
          Value top = arith::ShRUIOp::create(
              b, l, word,
              arith::ConstantIntOp::create(b, l, b.getI32Type(), 8));
          Value keep = arith::CmpIOp::create(
              b, l, arith::CmpIPredicate::uge, top,
              arith::ConstantIntOp::create(b, l, b.getI32Type(), threshold));
          Value scaled = arith::MulFOp::create(
              b, l, a[0], createFloat(b, l, element, 1.0 / (1.0 - rate)));
          linalg::YieldOp::create(
              b, l,
              arith::SelectOp::create(b, l, keep, scaled,
                                      createFloat(b, l, element, 0.0))
                  .getResult());
        })[0];
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

void mlir::grove::populateTransformerPatterns(RewritePatternSet &patterns) {
  patterns.add<LayerNormLowering, LayerNormGradLowering, EmbeddingLowering,
               PhiloxDropoutLowering>(patterns.getContext());
}
