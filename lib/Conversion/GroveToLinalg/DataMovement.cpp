//===- DataMovement.cpp - grove constants and shape ops to tensor/linalg --===//

#include "PopulatePatterns.h"
#include "Utils.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {

/// The sizes of the dynamic dimensions of `v`, in order.
static SmallVector<Value> getDynamicDimValues(OpBuilder &b, Location loc,
                                              Value v) {
  SmallVector<Value> dims;
  auto type = cast<RankedTensorType>(v.getType());
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dims.push_back(tensor::DimOp::create(b, loc, v, d));
  return dims;
}

/// Splat constants above this many bytes are filled at run time.
constexpr int64_t kMaxSplatConstantBytes = 1 << 16;

struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // A large splat is a fill: as a constant it becomes a global written out
    // element by element (a 2^46-element splat made LLVM run out of memory,
    // a 1 GiB one took 37 s and a 1 GiB library).
    auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (splat && type && type.hasStaticShape() &&
        type.getNumElements() *
                std::max<int64_t>(1, type.getElementTypeBitWidth() / 8) >
            kMaxSplatConstantBytes) {
      Location loc = op.getLoc();
      Value empty = createEmpty(
          rewriter, loc, type,
          getAsIndexOpFoldResult(rewriter.getContext(), type.getShape()));
      Value value = arith::ConstantOp::create(rewriter, loc,
                                              splat.getSplatValue<TypedAttr>());
      rewriter.replaceOpWithNewOp<linalg::FillOp>(op, value, empty);
      return success();
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, cast<TypedAttr>(op.getValue()));
    return success();
  }
};

/// Reshape as collapse-to-1-D then expand: always valid for row-major
/// order, and both steps are views after bufferization (no copy), unlike
/// tensor.reshape, whose dynamic form does not lower to LLVM.
struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType outType = op.getType();
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    // No elements (a static zero in the input): an empty result whose one
    // dynamic size, if any, is 0 (the verifier keeps the other static sizes
    // non-zero then). A collapse of `?x0` to `?` would be typed as a static 0
    // that memref.collapse_shape rejects.
    if (llvm::is_contained(inType.getShape(), 0)) {
      SmallVector<OpFoldResult> dims;
      for (int64_t d : outType.getShape())
        dims.push_back(rewriter.getIndexAttr(ShapedType::isDynamic(d) ? 0 : d));
      rewriter.replaceOp(op, createEmpty(rewriter, loc, outType, dims));
      return success();
    }
    if (inType.getRank() == 0 || outType.getRank() == 0) {
      // One element: the other side has only unit dimensions (a dynamic
      // one is 1 too), so work on the all-ones static shape and cast.
      auto ones = [](RankedTensorType t) {
        return RankedTensorType::get(SmallVector<int64_t>(t.getRank(), 1),
                                     t.getElementType());
      };
      Value result;
      if (inType.getRank() == 0) {
        RankedTensorType staticOut = ones(outType);
        result = tensor::ExpandShapeOp::create(
            rewriter, loc, staticOut, input, ArrayRef<ReassociationIndices>{},
            getAsIndexOpFoldResult(rewriter.getContext(),
                                   staticOut.getShape()));
        if (staticOut != outType)
          result = tensor::CastOp::create(rewriter, loc, outType, result);
      } else {
        Value in = input;
        if (!inType.hasStaticShape())
          in = tensor::CastOp::create(rewriter, loc, ones(inType), in);
        result = tensor::CollapseShapeOp::create(
            rewriter, loc, outType, in, ArrayRef<ReassociationIndices>{});
      }
      rewriter.replaceOp(op, result);
      return success();
    }

    // Element count, and the flat vector.
    Value count = arith::ConstantIndexOp::create(rewriter, loc, 1);
    for (OpFoldResult d : getDims(rewriter, loc, input))
      count = arith::MulIOp::create(
          rewriter, loc, count,
          getValueOrCreateConstantIndexOp(rewriter, loc, d));
    int64_t inCount = inType.hasStaticShape() ? inType.getNumElements()
                                              : ShapedType::kDynamic;
    auto flatType = RankedTensorType::get({inCount}, inType.getElementType());
    Value flat = input;
    if (inType.getRank() != 1)
      flat = tensor::CollapseShapeOp::create(
          rewriter, loc, flatType, input,
          ArrayRef<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, inType.getRank()))});

    // The one dynamic result dimension (if any) is the element count divided
    // by the product of the static ones.
    int64_t staticProduct = getStaticProduct(outType.getShape());
    SmallVector<OpFoldResult> outShape;
    for (int64_t d : outType.getShape()) {
      if (!ShapedType::isDynamic(d)) {
        outShape.push_back(rewriter.getIndexAttr(d));
        continue;
      }
      // The verifier rules out a zero static product here. A count that
      // the static dimensions do not divide is a run-time error; the view
      // then covers the largest whole prefix.
      if (inCount != ShapedType::kDynamic) {
        // The verifier checked divisibility.
        outShape.push_back(rewriter.getIndexAttr(inCount / staticProduct));
        continue;
      }
      if (staticProduct == 1) {
        outShape.push_back(count);
        continue;
      }
      Value product =
          arith::ConstantIndexOp::create(rewriter, loc, staticProduct);
      Value size = arith::DivUIOp::create(rewriter, loc, count, product);
      Value used = arith::MulIOp::create(rewriter, loc, size, product);
      agreeDims(rewriter, loc, count, used,
                "grove.reshape element count divisible by " +
                    Twine(staticProduct));
      flat = sliceToSizes(rewriter, loc, flat, {used});
      outShape.push_back(size);
    }
    // A static input fixes every result size: expand to the static shape
    // (expand_shape cannot make a dynamic size from a static one) and cast.
    RankedTensorType expandType = outType;
    if (inCount != ShapedType::kDynamic)
      expandType = RankedTensorType::get(
          llvm::to_vector(llvm::map_range(
              outShape,
              [](OpFoldResult d) { return *getConstantIntValue(d); })),
          outType.getElementType());
    Value result;
    if (outType.getRank() == 1)
      result = flat;
    else
      result = tensor::ExpandShapeOp::create(
          rewriter, loc, expandType, flat,
          ArrayRef<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, outType.getRank()))},
          outShape);
    if (result.getType() != outType)
      result = tensor::CastOp::create(rewriter, loc, outType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<OpFoldResult> inDims =
        getDims(rewriter, loc, adaptor.getInput());
    SmallVector<OpFoldResult> outDims;
    for (int64_t p : op.getPermutation())
      outDims.push_back(inDims[p]);
    Value init = createEmpty(rewriter, loc, op.getType(), outDims);
    auto transpose = linalg::TransposeOp::create(
        rewriter, loc, adaptor.getInput(), init, op.getPermutation());
    rewriter.replaceOp(op, transpose.getResult()[0]);
    return success();
  }
};

/// One linalg.generic reading index n - 1 - i along each reversed axis.
struct ReverseLowering : OpConversionPattern<ReverseOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReverseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = type.getRank();
    SmallVector<AffineExpr> reads;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr i = getAffineDimExpr(d, ctx);
      reads.push_back(
          llvm::is_contained(op.getAxes(), d) ? type.getDimSize(d) - 1 - i : i);
    }
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, reads, ctx),
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    Value init = createEmpty(rewriter, loc, type,
                             getDims(rewriter, loc, adaptor.getInput()));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, adaptor.getInput(), init, maps, iterators,
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct ConcatLowering : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxisAttr().getInt();
    // Inputs empty along the axis add nothing (and their offset may be the
    // end, which tensor.insert_slice rejects).
    SmallVector<Value> inputs;
    for (Value in : adaptor.getInputs())
      if (cast<RankedTensorType>(in.getType()).getDimSize(axis) != 0)
        inputs.push_back(in);
    if (inputs.empty()) {
      rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
          op, op.getType(),
          ValueRange(
              getDynamicDimValues(rewriter, loc, adaptor.getInputs().front())));
      return success();
    }
    // Every dimension but the axis must agree; dynamic ones are checked at
    // run time and the inputs cut to the agreed size.
    int64_t rank = op.getType().getRank();
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis || !op.getType().isDynamicDim(d) || inputs.size() < 2)
        continue;
      Value agreed = tensor::DimOp::create(rewriter, loc, inputs[0], d);
      for (auto [i, in] : llvm::enumerate(ArrayRef(inputs).drop_front()))
        agreed = agreeDims(rewriter, loc, agreed,
                           tensor::DimOp::create(rewriter, loc, in, d),
                           "grove.concat inputs 0 and " + Twine(i + 1) +
                               ", dimension " + Twine(d));
      for (Value &in : inputs) {
        SmallVector<OpFoldResult> sizes = getDims(rewriter, loc, in);
        sizes[d] = agreed;
        in = sliceToSizes(rewriter, loc, in, sizes);
      }
    }
    // Result sizes: the first input's, with the axis summed over inputs.
    SmallVector<OpFoldResult> outDims = getDims(rewriter, loc, inputs.front());
    Value total = arith::ConstantIndexOp::create(rewriter, loc, 0);
    SmallVector<Value> offsets;
    for (Value in : inputs) {
      offsets.push_back(total);
      OpFoldResult size = getDims(rewriter, loc, in)[axis];
      total = arith::AddIOp::create(
          rewriter, loc, total,
          getValueOrCreateConstantIndexOp(rewriter, loc, size));
    }
    outDims[axis] = total;
    Value result = createEmpty(rewriter, loc, op.getType(), outDims);
    if (llvm::is_contained(op.getType().getShape(), 0)) {
      rewriter.replaceOp(op, result);
      return success();
    }
    for (auto [in, offset] : llvm::zip(inputs, offsets)) {
      SmallVector<OpFoldResult> offs(rank, rewriter.getIndexAttr(0));
      offs[axis] = offset;
      SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
      result = tensor::InsertSliceOp::create(
          rewriter, loc, in, result, offs, getDims(rewriter, loc, in), strides);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    SmallVector<OpFoldResult> inDims = getDims(rewriter, loc, input);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    RankedTensorType outType = op.getType();
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      int64_t start = op.getStarts()[d], stride = op.getStrides()[d];
      // An empty slice may start at the end; tensor.extract_slice wants an
      // in-bounds offset, and any offset selects nothing.
      if (outType.getDimSize(d) == 0)
        start = 0;
      offsets.push_back(rewriter.getIndexAttr(start));
      strides.push_back(rewriter.getIndexAttr(stride));
      if (!outType.isDynamicDim(d)) {
        sizes.push_back(rewriter.getIndexAttr(outType.getDimSize(d)));
        continue;
      }
      // ceildiv(max(dim - start, 0), stride), for a dynamic dimension sliced
      // to its end; a start past the end selects nothing (numpy).
      Value dim = getValueOrCreateConstantIndexOp(rewriter, loc, inDims[d]);
      Value begin = arith::MinSIOp::create(
          rewriter, loc, dim,
          arith::ConstantIndexOp::create(rewriter, loc, start));
      offsets.back() = begin;
      Value span = arith::SubIOp::create(rewriter, loc, dim, begin);
      Value size = arith::CeilDivUIOp::create(
          rewriter, loc, span,
          arith::ConstantIndexOp::create(rewriter, loc, stride));
      sizes.push_back(size);
    }
    if (llvm::is_contained(outType.getShape(), 0)) {
      // Nothing to read (and extract_slice rejects offsets into an empty
      // dimension).
      rewriter.replaceOp(op, createEmpty(rewriter, loc, outType, sizes));
      return success();
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, outType, input, offsets, sizes, strides);
    return success();
  }
};

struct BroadcastToLowering : OpConversionPattern<BroadcastToOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BroadcastToOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType outType = op.getType();
    SmallVector<OpFoldResult> dims;
    unsigned next = 0;
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    for (int64_t d : outType.getShape()) {
      if (!ShapedType::isDynamic(d)) {
        dims.push_back(rewriter.getIndexAttr(d));
        continue;
      }
      // A negative size is a run-time error; the code goes on with 0.
      Value size = adaptor.getDynamicSizes()[next++];
      Value clamped = arith::MaxSIOp::create(rewriter, loc, size, zero);
      agreeDims(rewriter, loc, size, clamped,
                "grove.broadcast_to size operand " + Twine(next - 1) +
                    " is non-negative");
      dims.push_back(clamped);
    }
    // A dynamic input dimension that is not stretched must equal the size
    // operand of its result dimension; checked at run time.
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    int64_t lead = outType.getRank() - inType.getRank();
    SmallVector<OpFoldResult> inSizes = getDims(rewriter, loc, input);
    for (int64_t i = 0; i < inType.getRank(); ++i) {
      if (!inType.isDynamicDim(i))
        continue;
      Value agreed = agreeDims(
          rewriter, loc,
          getValueOrCreateConstantIndexOp(rewriter, loc, inSizes[i]),
          getValueOrCreateConstantIndexOp(rewriter, loc, dims[lead + i]),
          "grove.broadcast_to input dimension " + Twine(i) +
              " and its size operand");
      inSizes[i] = agreed;
      dims[lead + i] = agreed;
    }
    input = sliceToSizes(rewriter, loc, input, inSizes);
    Value init = createEmpty(rewriter, loc, outType, dims);
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps = {
        getBroadcastMap(ctx, op.getInput().getType().getShape(),
                        outType.getShape()),
        AffineMap::getMultiDimIdentityMap(outType.getRank(), ctx)};
    SmallVector<utils::IteratorType> iters(outType.getRank(),
                                           utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, outType, input, init, maps, iters,
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// One linalg.generic over the result: each row reads its index and then
/// the input's element (tensor.extract), or zero where the index is
/// negative or past the input's rows.
struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    MLIRContext *ctx = rewriter.getContext();
    int64_t rank = type.getRank();
    Value input = adaptor.getInput();
    Value rows = tensor::DimOp::create(rewriter, loc, input, 0);
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, getAffineDimExpr(0, ctx)),
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<OpFoldResult> dims = getDims(rewriter, loc, input);
    dims[0] = tensor::DimOp::create(rewriter, loc, adaptor.getIndices(), 0)
                  .getResult();
    Value init = createEmpty(rewriter, loc, type, dims);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Type element = type.getElementType();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, adaptor.getIndices(), init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          // linalg.index must be the generic's own child.
          SmallVector<Value> rest;
          for (int64_t d = 1; d < rank; ++d)
            rest.push_back(linalg::IndexOp::create(b, l, d));
          linalg::YieldOp::create(
              b, l, readRowOrZero(b, l, input, args[0], rows, rest, element));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// `offset` (an i32 read from the offsets) relative to `base`
/// (offsets[0]), clamped to [0, rows]: a segment's first or end row.
Value segmentRow(OpBuilder &b, Location loc, Value offset, Value base,
                 Value rows) {
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value rel = arith::SubIOp::create(b, loc, offset, base);
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), rel);
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, i, c0),
                                rows);
}

/// grove.segment_sum. Offsets are read relative to offsets[0] by the code
/// that sums (on a device they live in device memory, where host code
/// cannot read), clamped to the input's rows; without segments nothing is
/// read. Two forms:
///  - `rowLoops` (the host): an scf.forall over the segments, each zeroing
///    its row and adding its input rows to it with linalg.add on row
///    slices, so the columns are the innermost loop, which LLVM widens. A
///    consumer reads the summed rows from memory.
///  - otherwise one linalg.generic over the result whose body loops over
///    the element's segment (scf.for): a GPU thread an element; it fuses
///    into its elementwise consumers, but a loop inside every element is
///    scalar code on a CPU (an embedding's optimizer update fused with it
///    was).
struct SegmentSumLowering : OpConversionPattern<SegmentSumOp> {
  SegmentSumLowering(MLIRContext *ctx, bool rowLoops)
      : OpConversionPattern(ctx), rowLoops(rowLoops) {}

  LogicalResult
  matchAndRewrite(SegmentSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), offsets = adaptor.getOffsets();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value count = arith::MaxSIOp::create(
        rewriter, loc,
        arith::SubIOp::create(rewriter, loc,
                              tensor::DimOp::create(rewriter, loc, offsets, 0),
                              one),
        zero);
    SmallVector<OpFoldResult> dims = getDims(rewriter, loc, input);
    dims[0] = count;
    Value result =
        rowLoops
            ? buildRowLoops(rewriter, loc, op.getType(), input, offsets, dims)
            : buildGeneric(rewriter, loc, op.getType(), input, offsets, dims);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  static Value buildRowLoops(OpBuilder &b, Location loc, RankedTensorType type,
                             Value input, Value offsets,
                             ArrayRef<OpFoldResult> dims) {
    int64_t rank = type.getRank();
    Value rows = tensor::DimOp::create(b, loc, input, 0);
    Value init = createEmpty(b, loc, type, dims);
    auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{dims[0]},
                                        ValueRange{init}, std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    Value p = forall.getInductionVars()[0];
    Value out = forall.getRegionIterArgs()[0];
    Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
    auto offsetAt = [&](Value at) {
      return tensor::ExtractOp::create(b, loc, offsets, ValueRange{at});
    };
    Value base = offsetAt(c0);
    Value lo = segmentRow(b, loc, offsetAt(p), base, rows);
    Value hi = segmentRow(
        b, loc, offsetAt(arith::AddIOp::create(b, loc, p, c1)), base, rows);
    // Row slices keep their leading 1: [at, 0, ...] of sizes [1, dims...].
    SmallVector<OpFoldResult> sizes(dims.begin(), dims.end());
    sizes[0] = b.getIndexAttr(1);
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    auto rowAt = [&](Value at) {
      SmallVector<OpFoldResult> offs(rank, b.getIndexAttr(0));
      offs[0] = at;
      return offs;
    };
    Value row =
        tensor::ExtractSliceOp::create(b, loc, out, rowAt(p), sizes, strides);
    Value zeroElt =
        arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
    row = linalg::FillOp::create(b, loc, zeroElt, row).getResult(0);
    auto loop = scf::ForOp::create(
        b, loc, lo, hi, c1, ValueRange{row},
        [&](OpBuilder &f, Location fl, Value e, ValueRange acc) {
          Value x = tensor::ExtractSliceOp::create(f, fl, input, rowAt(e),
                                                   sizes, strides);
          Value sum =
              linalg::AddOp::create(f, fl, ValueRange{acc[0], x}, acc[0])
                  .getResult(0);
          scf::YieldOp::create(f, fl, sum);
        });
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, loop.getResult(0), out,
                                          rowAt(p), sizes, strides);
    return forall.getResult(0);
  }

  /// offsets[p] and offsets[p + 1] come in as two shifted views of the
  /// offsets.
  static Value buildGeneric(OpBuilder &b, Location loc, RankedTensorType type,
                            Value input, Value offsets,
                            ArrayRef<OpFoldResult> dims) {
    MLIRContext *ctx = b.getContext();
    int64_t rank = type.getRank();
    Value rows = tensor::DimOp::create(b, loc, input, 0);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto view = [&](Value start) {
      return tensor::ExtractSliceOp::create(
          b, loc, offsets, ArrayRef<OpFoldResult>{start},
          ArrayRef<OpFoldResult>{dims[0]}, ArrayRef<OpFoldResult>{one});
    };
    Value starts = view(zero), ends = view(one);
    Value init = createEmpty(b, loc, type, dims);
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, getAffineDimExpr(0, ctx)),
        AffineMap::get(rank, 0, getAffineDimExpr(0, ctx)),
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    Type element = type.getElementType();
    auto generic = linalg::GenericOp::create(
        b, loc, type, ValueRange{starts, ends}, init, maps, iterators,
        [&](OpBuilder &g, Location l, ValueRange args) {
          Value c0 = arith::ConstantIndexOp::create(g, l, 0);
          Value base = tensor::ExtractOp::create(g, l, offsets, ValueRange{c0});
          Value lo = segmentRow(g, l, args[0], base, rows);
          Value hi = segmentRow(g, l, args[1], base, rows);
          SmallVector<Value> at = {Value()};
          for (int64_t d = 1; d < rank; ++d)
            at.push_back(linalg::IndexOp::create(g, l, d));
          Value c1 = arith::ConstantIndexOp::create(g, l, 1);
          Value acc0 = arith::ConstantOp::create(g, l, g.getZeroAttr(element));
          auto loop = scf::ForOp::create(
              g, l, lo, hi, c1, ValueRange{acc0},
              [&](OpBuilder &f, Location fl, Value e, ValueRange acc) {
                SmallVector<Value> idx(at);
                idx[0] = e;
                Value x = tensor::ExtractOp::create(f, fl, input, idx);
                scf::YieldOp::create(
                    f, fl, arith::AddFOp::create(f, fl, acc[0], x).getResult());
              });
          linalg::YieldOp::create(g, l, loop.getResult(0));
        });
    return generic.getResult(0);
  }

  bool rowLoops;
};

} // namespace

void mlir::grove::populateDataMovementPatterns(RewritePatternSet &patterns,
                                               bool segmentSumRows) {
  patterns.add<ConstantLowering, ReshapeLowering, TransposeLowering,
               ReverseLowering, ConcatLowering, SliceLowering,
               BroadcastToLowering, GatherLowering>(patterns.getContext());
  patterns.add<SegmentSumLowering>(patterns.getContext(), segmentSumRows);
}
