//===- CollectiveBuilder.cpp - Buckets, blocks and collectives ------------===//

#include "Compressor.h"

#include "grove/Dialect/Grove/IR/GroveArith.h"
#include "grove/Dialect/Grove/Transforms/StateDecl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::grove;

int64_t mlir::grove::numElements(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

int64_t mlir::grove::elementBytes(Value v) {
  Type element = cast<RankedTensorType>(v.getType()).getElementType();
  return std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
}

int64_t mlir::grove::blockSize(int64_t size, int64_t ratio) {
  return std::max<int64_t>(1, size / ratio);
}

static Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

Value CollectiveBuilder::flatten(Value x) {
  return ReshapeOp::create(b, loc, x, ArrayRef<int64_t>{numElements(x)});
}

Value CollectiveBuilder::reshapeLike(Value flat, Type type) {
  return ReshapeOp::create(b, loc, type, flat);
}

Value CollectiveBuilder::concat(ArrayRef<Value> flats) {
  if (flats.size() == 1)
    return flats.front();
  int64_t total = 0;
  for (Value f : flats)
    total += numElements(f);
  auto type = RankedTensorType::get({total}, elementOf(flats[0]));
  return ConcatOp::create(b, loc, type, flats, b.getI64IntegerAttr(0));
}

SmallVector<Value> CollectiveBuilder::split(Value flat,
                                            ArrayRef<int64_t> sizes) {
  if (sizes.size() == 1)
    return {flat};
  SmallVector<Value> pieces;
  Type element = elementOf(flat);
  int64_t at = 0;
  for (int64_t size : sizes) {
    pieces.push_back(SliceOp::create(
        b, loc, RankedTensorType::get({size}, element), flat,
        b.getDenseI64ArrayAttr({at}), b.getDenseI64ArrayAttr({at + size}),
        b.getDenseI64ArrayAttr({1})));
    at += size;
  }
  return pieces;
}

Value CollectiveBuilder::extractBlock(Value flat, Value offset, int64_t size) {
  auto type = RankedTensorType::get({size}, elementOf(flat));
  return tensor::ExtractSliceOp::create(
      b, loc, type, flat, ArrayRef<OpFoldResult>{offset},
      ArrayRef<OpFoldResult>{b.getIndexAttr(size)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

Value CollectiveBuilder::insertBlock(Value block, Value flat, Value offset) {
  return tensor::InsertSliceOp::create(
      b, loc, block, flat, ArrayRef<OpFoldResult>{offset},
      ArrayRef<OpFoldResult>{b.getIndexAttr(numElements(block))},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

Value CollectiveBuilder::zerosLike(Value v) {
  return createSplatConstant(b, loc, cast<RankedTensorType>(v.getType()), 0.0);
}

Value CollectiveBuilder::scalar(Type element, double value) {
  return createSplatConstant(b, loc, RankedTensorType::get({}, element), value);
}

Value CollectiveBuilder::mean(Value v) {
  return AllReduceOp::create(b, loc, v, ReductionKind::Mean);
}

SmallVector<Value> CollectiveBuilder::meanBucketed(ArrayRef<Value> values,
                                                   int64_t bucketBytes) {
  SmallVector<Value> out(values.size());
  for (const SmallVector<unsigned> &bucket : bucketize(values, bucketBytes)) {
    SmallVector<Value> flats;
    SmallVector<int64_t> sizes;
    for (unsigned i : bucket) {
      flats.push_back(flatten(values[i]));
      sizes.push_back(numElements(values[i]));
    }
    SmallVector<Value> pieces = split(mean(concat(flats)), sizes);
    for (auto [i, piece] : llvm::zip(bucket, pieces))
      out[i] = reshapeLike(piece, values[i].getType());
  }
  return out;
}

Value CollectiveBuilder::worldSizeLike(Value x) {
  return GroveArith{b, loc}.worldSize(elementOf(x));
}

Value CollectiveBuilder::perRank(Value x) {
  return DivOp::create(b, loc, x, worldSizeLike(x));
}

Value CollectiveBuilder::timesRanks(Value x) {
  return MulOp::create(b, loc, x, worldSizeLike(x));
}

Value CollectiveBuilder::gather(Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  return AllGatherOp::create(
      b, loc,
      RankedTensorType::get({ShapedType::kDynamic, type.getDimSize(0)},
                            type.getElementType()),
      x);
}

Value CollectiveBuilder::isMultiple(Value t, int64_t plus, int64_t h) {
  Value v = tensor::ExtractOp::create(b, loc, t);
  Type i64 = b.getI64Type();
  if (!v.getType().isInteger(64))
    v = arith::FPToSIOp::create(b, loc, i64, v);
  if (plus)
    v = arith::AddIOp::create(b, loc, v,
                              arith::ConstantIntOp::create(b, loc, i64, plus));
  Value rem = arith::RemSIOp::create(
      b, loc, v, arith::ConstantIntOp::create(b, loc, i64, h));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem,
                               arith::ConstantIntOp::create(b, loc, i64, 0));
}

Value CollectiveBuilder::magnitude(Value x) {
  return MaxOp::create(b, loc, x,
                       MulOp::create(b, loc, x, scalar(elementOf(x), -1.0)));
}

SmallVector<int64_t> mlir::grove::getPowerOfTwoRatios() {
  return {2, 4, 8, 16, 32, 64, 128, 256};
}

SmallVector<SmallVector<unsigned>>
mlir::grove::bucketize(ArrayRef<Value> values, int64_t bucketBytes) {
  SmallVector<SmallVector<unsigned>> buckets;
  int64_t bytes = 0;
  Type element;
  for (auto [i, v] : llvm::enumerate(values)) {
    Type e = elementOf(v);
    int64_t size = numElements(v) * elementBytes(v);
    if (buckets.empty() || e != element || bytes + size > bucketBytes) {
      buckets.emplace_back();
      bytes = 0;
      element = e;
    }
    buckets.back().push_back(i);
    bytes += size;
  }
  return buckets;
}

/// The current values of `names` (grove.param symbols) at `b`.
SmallVector<Value> mlir::grove::readParams(OpBuilder &b, Location loc,
                                           ModuleOp module,
                                           ArrayRef<Attribute> names) {
  SmallVector<Value> values;
  for (Attribute name : names) {
    auto ref = cast<FlatSymbolRefAttr>(name);
    auto param = module.lookupSymbol<ParamOp>(ref.getValue());
    values.push_back(GetParamOp::create(b, loc, param.getTensorType(), ref));
  }
  return values;
}

static constexpr StringLiteral kCounterName = "collectives.step";

FailureOr<Value> CollectiveState::counterOf(func::FuncOp fn, Operation *user) {
  if (Value v = counters.lookup(fn))
    return v;
  MLIRContext *ctx = module.getContext();
  auto type = RankedTensorType::get({}, IntegerType::get(ctx, 64));
  if (failed(declareState(module, user, kCounterName, type, 0)))
    return failure();
  auto name = FlatSymbolRefAttr::get(ctx, kCounterName);
  OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
  Location loc = fn.getLoc();
  Value t = GetParamOp::create(b, loc, type, name);
  b.setInsertionPoint(fn.getBody().front().getTerminator());
  // Integer arithmetic: grove's elementwise ops are floating point.
  Value next = arith::AddIOp::create(
      b, loc, tensor::ExtractOp::create(b, loc, t),
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), 1));
  SetParamOp::create(b, loc, name,
                     tensor::FromElementsOp::create(b, loc, type, next));
  counters[fn] = t;
  return t;
}
