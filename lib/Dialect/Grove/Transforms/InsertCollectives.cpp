//===- InsertCollectives.cpp - Data-parallel optimizer steps --------------===//
//
// grove-insert-collectives (Passes.td; docs/distributed.md). Every rank runs
// the same code, so the collectives this pass writes meet in program order;
// what it adds is grove ops and state, which later passes lower like any
// other: buckets are grove.concat of flattened gradients, blocks are
// tensor slices at offsets grove.random_block draws, and the every-H-steps
// synchronisations are scf.if on a step count.
//
//===----------------------------------------------------------------------===//

#include "CollectiveCostModel.h"

#include "grove/Dialect/Grove/IR/GroveArith.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"
#include "grove/Dialect/Grove/Transforms/StateDecl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringSwitch.h"

#include <cstdio>
#include <optional>
#include <string>

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEINSERTCOLLECTIVES
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

constexpr StringLiteral kCounterName = "collectives.step";

enum class ErrorMode { None, Feedback, Reset };

struct Config {
  Compressor compressor = Compressor::None;
  ErrorMode error = ErrorMode::None;
  int64_t ratio = 32, periodRatio = 4, syncPeriod = 1, bucketBytes = 0,
          seed = 0;
  /// ratio=auto: the cost model picks each bucket's ratio.
  bool autoRatio = false;
  /// PowerSGD's rank.
  int64_t matrixRank = 1;
  NetworkModel network;
};

int64_t numElements(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

/// GRBS's block: 1/ratio of `size` elements, rounded down (so that a step
/// never sends more than 1/ratio), at least one.
int64_t blockSize(int64_t size, int64_t ratio) {
  return std::max<int64_t>(1, size / ratio);
}

int64_t elementBytes(Value v) {
  Type element = cast<RankedTensorType>(v.getType()).getElementType();
  return std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
}

/// A compressed collective of a flat bucket: the average over the ranks of
/// what each sent, decompressed, and what this rank sent, decompressed
/// (the error-feedback residual keeps the difference from the input).
struct Compressed {
  Value averaged, local;
};

/// Builds at one insertion point and location: flattening, buckets, blocks.
struct Builder {
  OpBuilder &b;
  Location loc;

  Value flatten(Value x) {
    return ReshapeOp::create(b, loc, x, ArrayRef<int64_t>{numElements(x)});
  }
  Value reshapeLike(Value flat, Type type) {
    return ReshapeOp::create(b, loc, type, flat);
  }
  Value concat(ArrayRef<Value> flats) {
    if (flats.size() == 1)
      return flats.front();
    int64_t total = 0;
    for (Value f : flats)
      total += numElements(f);
    auto type = RankedTensorType::get(
        {total}, cast<RankedTensorType>(flats[0].getType()).getElementType());
    return ConcatOp::create(b, loc, type, flats, b.getI64IntegerAttr(0));
  }
  /// `flat` cut into consecutive pieces of `sizes` elements.
  SmallVector<Value> split(Value flat, ArrayRef<int64_t> sizes) {
    if (sizes.size() == 1)
      return {flat};
    SmallVector<Value> pieces;
    Type element = cast<RankedTensorType>(flat.getType()).getElementType();
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
  Value extractBlock(Value flat, Value offset, int64_t size) {
    auto type = RankedTensorType::get(
        {size}, cast<RankedTensorType>(flat.getType()).getElementType());
    return tensor::ExtractSliceOp::create(
        b, loc, type, flat, ArrayRef<OpFoldResult>{offset},
        ArrayRef<OpFoldResult>{b.getIndexAttr(size)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  }
  Value insertBlock(Value block, Value flat, Value offset) {
    return tensor::InsertSliceOp::create(
        b, loc, block, flat, ArrayRef<OpFoldResult>{offset},
        ArrayRef<OpFoldResult>{b.getIndexAttr(numElements(block))},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  }
  Value zerosLike(Value v) {
    return createSplatConstant(b, loc, cast<RankedTensorType>(v.getType()),
                               0.0);
  }
  Value mean(Value v) {
    return AllReduceOp::create(b, loc, v, ReductionKind::Mean);
  }
  /// The mean over ranks of each of `values`, through one collective a
  /// group of consecutive values of one element type up to `bucketBytes`.
  SmallVector<Value> meanBucketed(ArrayRef<Value> values, int64_t bucketBytes);
  /// Compresses the flat bucket `e` and averages it across the ranks.
  Compressed compress(const Config &config, int64_t ratio, Value e,
                      Value counter, unsigned stream);
  /// The world size as a rank-0 tensor of `x`'s element type.
  Value worldSizeLike(Value x) {
    return GroveArith{b, loc}.worldSize(
        cast<RankedTensorType>(x.getType()).getElementType());
  }
  /// `x` divided by the world size.
  Value perRank(Value x) { return DivOp::create(b, loc, x, worldSizeLike(x)); }
  /// `x` times the world size.
  Value timesRanks(Value x) {
    return MulOp::create(b, loc, x, worldSizeLike(x));
  }
  /// Rank-1 `x` gathered from every rank: tensor<? x size>.
  Value gather(Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    return AllGatherOp::create(
        b, loc,
        RankedTensorType::get({ShapedType::kDynamic, type.getDimSize(0)},
                              type.getElementType()),
        x);
  }
  /// Whether the i64 count `t` (rank 0) plus `plus` is a multiple of `h`.
  Value isMultiple(Value t, int64_t plus, int64_t h) {
    Value v = tensor::ExtractOp::create(b, loc, t);
    Type i64 = b.getI64Type();
    if (!v.getType().isInteger(64))
      v = arith::FPToSIOp::create(b, loc, i64, v);
    if (plus)
      v = arith::AddIOp::create(
          b, loc, v, arith::ConstantIntOp::create(b, loc, i64, plus));
    Value rem = arith::RemSIOp::create(
        b, loc, v, arith::ConstantIntOp::create(b, loc, i64, h));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rem,
                                 arith::ConstantIntOp::create(b, loc, i64, 0));
  }
};

Compressed Builder::compress(const Config &config, int64_t ratio, Value e,
                             Value counter, unsigned stream) {
  auto type = cast<RankedTensorType>(e.getType());
  int64_t size = type.getNumElements();
  // The cost model may leave a bucket dense.
  if (ratio == 1)
    return {mean(e), e};
  switch (config.compressor) {
  case Compressor::None:
    return {mean(e), e};
  case Compressor::FP16:
  case Compressor::BF16: {
    // Each rank sends e / n, so that the sum in half precision is the mean
    // and overflows only where the mean would.
    Type half = config.compressor == Compressor::FP16 ? Type(b.getF16Type())
                                                      : Type(b.getBF16Type());
    auto halfType = RankedTensorType::get({size}, half);
    Value h = ConvertOp::create(b, loc, halfType, perRank(e));
    Value sum = AllReduceOp::create(b, loc, h, ReductionKind::Sum);
    Value own = ConvertOp::create(b, loc, type, h);
    return {ConvertOp::create(b, loc, type, sum), timesRanks(own)};
  }
  case Compressor::GRBS: {
    int64_t k = blockSize(size, ratio);
    Value offset =
        RandomBlockOp::create(b, loc, counter, config.seed, stream, size, k);
    Value blk = extractBlock(e, offset, k);
    return {insertBlock(mean(blk), zerosLike(e), offset),
            insertBlock(blk, zerosLike(e), offset)};
  }
  case Compressor::RandK: {
    // The same k indices on every rank: one dense all-reduce of the values.
    int64_t k = blockSize(size, ratio);
    Value indices = RandomIndicesOp::create(
        b, loc, RankedTensorType::get({k}, b.getI32Type()), counter,
        config.seed, stream, size);
    Value values = GatherOp::create(b, loc, e, indices);
    return {
        ScatterAddOp::create(b, loc, type, zerosLike(e), indices, mean(values)),
        ScatterAddOp::create(b, loc, type, zerosLike(e), indices, values)};
  }
  case Compressor::TopK: {
    int64_t k = blockSize(size, ratio);
    auto top = TopKOp::create(b, loc,
                              RankedTensorType::get({k}, type.getElementType()),
                              RankedTensorType::get({k}, b.getI32Type()), e, k);
    Value all =
        ScatterAddOp::create(b, loc, type, zerosLike(e),
                             gather(top.getIndices()), gather(top.getValues()));
    return {perRank(all),
            ScatterAddOp::create(b, loc, type, zerosLike(e), top.getIndices(),
                                 top.getValues())};
  }
  case Compressor::Sign: {
    // EF-signSGD: each rank sends sign(e) scaled by mean |e|.
    Value magnitude = MaxOp::create(
        b, loc, e,
        MulOp::create(b, loc, e,
                      createSplatConstant(
                          b, loc,
                          RankedTensorType::get({}, type.getElementType()),
                          -1.0)));
    Value scale = ReduceMeanOp::create(
        b, loc, RankedTensorType::get({1}, type.getElementType()), magnitude,
        b.getDenseI64ArrayAttr({0}), /*keepdims=*/true);
    int64_t words = (size + 31) / 32;
    Value packed = PackSignsOp::create(
        b, loc, RankedTensorType::get({words}, b.getI32Type()), e);
    Value scales = ReshapeOp::create(b, loc, gather(scale),
                                     ArrayRef<int64_t>{ShapedType::kDynamic});
    Value averaged =
        MeanOfSignsOp::create(b, loc, type, gather(packed), scales);
    Value own = MeanOfSignsOp::create(
        b, loc, type,
        ReshapeOp::create(b, loc, packed, ArrayRef<int64_t>{1, words}), scale);
    return {averaged, own};
  }
  case Compressor::PowerSGD:
    break; // the caller's powerSGD() compresses (ratio 1 returned above)
  }
  llvm_unreachable("unknown compressor");
}

/// Groups `values` in order into runs of one element type and at most
/// `bucketBytes` (a value larger alone is a run of its own).
SmallVector<SmallVector<unsigned>> bucketize(ArrayRef<Value> values,
                                             int64_t bucketBytes) {
  SmallVector<SmallVector<unsigned>> buckets;
  int64_t bytes = 0;
  Type element;
  for (auto [i, v] : llvm::enumerate(values)) {
    Type e = cast<RankedTensorType>(v.getType()).getElementType();
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

SmallVector<Value> Builder::meanBucketed(ArrayRef<Value> values,
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

class InsertCollectivesPass
    : public grove::impl::GroveInsertCollectivesBase<InsertCollectivesPass> {
public:
  using Base::Base;
  void runOnOperation() override;

private:
  LogicalResult parseOptions(Config &config);
  /// The function's step counter before this call's step: read at the
  /// start of `fn`, incremented before its return (one per function).
  FailureOr<Value> counterOf(func::FuncOp fn, Operation *user);
  LogicalResult averageGradients(OptimizerOpInterface opt,
                                 const Config &config);
  LogicalResult averageModelBlocks(OptimizerOpInterface opt,
                                   const Config &config);
  LogicalResult localAdaAlter(AdaAlterOp opt, const Config &config);
  /// PowerSGD (rank r, warm start) on the flat bucket `e` holding tensors
  /// of `types` (`sizes` elements each): each matrix-shaped one whose
  /// factors are smaller is sent as P = M Q and Q = Mᵀ P (P orthogonalised
  /// between the two averages), the others densely with the Ps. Q of each
  /// matrix is state, started from grove.random_uniform.
  FailureOr<Compressed> powerSGD(Builder &build, const Config &config, Value e,
                                 ArrayRef<Type> types, ArrayRef<int64_t> sizes,
                                 Value counter, unsigned stream, Operation *op);
  /// ratio=auto: the ratio the cost model picks for `bucket` (of
  /// `gradients`), whose collective goes after `last` (null: the start),
  /// reported as a remark at the optimizer `op`.
  int64_t chooseBucketRatio(const Config &config, unsigned index,
                            ArrayRef<Value> gradients,
                            ArrayRef<unsigned> bucket, Operation *last,
                            Operation *op);
  SmallVector<Value> averageBlocks(Builder &build, ArrayRef<Value> params,
                                   Value counter, int64_t ratio,
                                   unsigned firstStream, const Config &config);

  llvm::DenseMap<Operation *, Value> counters;
  unsigned nextStream = 0;
};

LogicalResult InsertCollectivesPass::parseOptions(Config &config) {
  ModuleOp module = getOperation();
  std::optional<Compressor> kind =
      llvm::StringSwitch<std::optional<Compressor>>(compressor)
          .Case("none", Compressor::None)
          .Case("fp16", Compressor::FP16)
          .Case("bf16", Compressor::BF16)
          .Case("grbs", Compressor::GRBS)
          .Case("randk", Compressor::RandK)
          .Case("topk", Compressor::TopK)
          .Case("sign", Compressor::Sign)
          .Case("powersgd", Compressor::PowerSGD)
          .Default(std::nullopt);
  if (!kind)
    return module.emitError("grove-insert-collectives: unknown compressor '")
           << compressor
           << "' (expected none, fp16, bf16, grbs, randk, topk, sign or "
              "powersgd)";
  config.compressor = *kind;
  if (error == "none")
    config.error = ErrorMode::None;
  else if (error == "feedback")
    config.error = ErrorMode::Feedback;
  else if (error == "reset")
    config.error = ErrorMode::Reset;
  else
    return module.emitError("grove-insert-collectives: unknown error mode '")
           << error << "' (expected none, feedback or reset)";
  if (ratio == "auto") {
    config.autoRatio = true;
  } else if (StringRef(ratio).getAsInteger(10, config.ratio)) {
    return module.emitError("grove-insert-collectives: ratio must be a "
                            "positive integer or auto, got '")
           << ratio << "'";
  }
  if (config.autoRatio) {
    if (!(networkGbps > 0) || worldSize < 2 || !(computeGflops > 0) ||
        batchSize < 1 || latencyUs < 0)
      return module.emitError(
          "grove-insert-collectives: ratio=auto needs network-gbps > 0, "
          "world-size >= 2, compute-gflops > 0 and batch-size >= 1");
    if (config.compressor == Compressor::None ||
        config.compressor == Compressor::PowerSGD ||
        config.error != ErrorMode::Feedback)
      return module.emitError("grove-insert-collectives: ratio=auto picks a "
                              "gradient compressor's ratio: give one "
                              "(fp16, bf16, grbs, randk, topk or sign) and "
                              "error=feedback (what a bucket does not send "
                              "must not be lost)");
    config.network = {networkGbps, latencyUs, worldSize, computeGflops,
                      batchSize};
  }
  if (config.ratio < 1 || periodRatio < 1 || syncPeriod < 1 ||
      bucketBytes < 1 || matrixRank < 1)
    return module.emitError("grove-insert-collectives: ratio, period-ratio, "
                            "sync-period, bucket-bytes and matrix-rank must "
                            "be positive");
  if (config.error == ErrorMode::Feedback &&
      config.compressor == Compressor::None)
    return module.emitError("grove-insert-collectives: error=feedback needs a "
                            "compressor (a dense average leaves no error)");
  if (config.error == ErrorMode::Reset && config.compressor != Compressor::GRBS)
    return module.emitError("grove-insert-collectives: error=reset (CSER) "
                            "averages random blocks: it needs compressor=grbs");
  config.periodRatio = periodRatio;
  config.matrixRank = matrixRank;
  config.syncPeriod = syncPeriod;
  config.bucketBytes = bucketBytes;
  config.seed = seed;
  return success();
}

FailureOr<Value> InsertCollectivesPass::counterOf(func::FuncOp fn,
                                                  Operation *user) {
  if (Value v = counters.lookup(fn))
    return v;
  auto type = RankedTensorType::get({}, IntegerType::get(&getContext(), 64));
  if (failed(declareState(getOperation(), user, kCounterName, type, 0)))
    return failure();
  auto name = FlatSymbolRefAttr::get(&getContext(), kCounterName);
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

/// The residual error feedback keeps: `next` (e minus what was sent). With
/// skip_nonfinite a non-finite gradient on this rank (in `e`) would stay
/// in the residual and skip every later step, so the previous residual
/// `r` is kept instead; the step itself is skipped or, where the
/// compressor sent none of the non-finite elements, taken without them.
Value nextResidual(OpBuilder &b, Location loc, OptimizerOpInterface opt,
                   Value e, Value r, Value next) {
  if (!opt.getSkipNonfinite())
    return next;
  GroveArith a{b, loc};
  // e * 0 is NaN exactly where e is NaN or infinite; step(1 + NaN) is 0.
  Value poison = ReduceSumOp::create(b, loc, a.mul(e, a.scalar(e, 0.0)),
                                     ArrayRef<int64_t>{0});
  Value ok = a.step(a.add(poison, a.scalar(poison, 1.0)));
  return SelectOp::create(b, loc, ok, next, r);
}

LogicalResult InsertCollectivesPass::averageGradients(OptimizerOpInterface opt,
                                                      const Config &config) {
  Operation *op = opt.getOperation();
  Block *block = op->getBlock();
  // The order the backward computes the gradients in: bucket by it, and
  // place each bucket's collective after its last gradient.
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < opt.getGradients().size(); ++i)
    order.push_back(i);
  auto position = [&](unsigned i) -> Operation * {
    Operation *def = opt.getGradients()[i].getDefiningOp();
    return def ? block->findAncestorOpInBlock(*def) : nullptr;
  };
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    Operation *pa = position(a), *pb = position(b);
    if (!pa || !pb)
      return pa == nullptr && pb != nullptr;
    return pa->isBeforeInBlock(pb);
  });
  SmallVector<Value> ordered;
  for (unsigned i : order)
    ordered.push_back(opt.getGradients()[i]);

  Value counter;
  if (config.compressor == Compressor::GRBS ||
      config.compressor == Compressor::RandK ||
      config.compressor == Compressor::PowerSGD) {
    FailureOr<Value> t = counterOf(op->getParentOfType<func::FuncOp>(), op);
    if (failed(t))
      return failure();
    counter = *t;
  }
  SmallVector<Value> averaged(ordered.size());
  OpBuilder b(op);
  unsigned bucketIndex = 0;
  for (const SmallVector<unsigned> &bucket :
       bucketize(ordered, config.bucketBytes)) {
    Operation *last = nullptr;
    for (unsigned i : bucket)
      if (Operation *p = position(order[i]))
        last = !last || last->isBeforeInBlock(p) ? p : last;
    // Gradients that are arguments or constants are ready at the start,
    // after the counter (read first in the function).
    if (last)
      b.setInsertionPointAfter(last);
    else if (counter)
      b.setInsertionPointAfter(counter.getDefiningOp());
    else
      b.setInsertionPointToStart(block);
    int64_t ratio = config.ratio;
    if (config.autoRatio)
      ratio = chooseBucketRatio(config, bucketIndex, ordered, bucket, last, op);
    ++bucketIndex;
    Builder build{b, op->getLoc()};
    SmallVector<Value> flats;
    SmallVector<int64_t> sizes;
    for (unsigned i : bucket) {
      flats.push_back(build.flatten(ordered[i]));
      sizes.push_back(numElements(ordered[i]));
    }
    Value flat = build.concat(flats);
    Value sent;
    // A bucket the cost model leaves dense sends all of e: it needs no
    // residual (e - e = 0), nor the state and arithmetic of one.
    if (config.compressor == Compressor::None || ratio == 1) {
      sent = build.mean(flat);
    } else {
      unsigned stream = nextStream++;
      std::string residualName;
      Value e = flat, r;
      if (config.error == ErrorMode::Feedback) {
        residualName =
            ("collectives.bucket" + Twine(stream) + ".residual").str();
        auto type = cast<RankedTensorType>(flat.getType());
        if (failed(declareState(getOperation(), op, residualName, type, 0.0)))
          return failure();
        r = GetParamOp::create(
            b, op->getLoc(), type,
            FlatSymbolRefAttr::get(&getContext(), residualName));
        e = AddOp::create(b, op->getLoc(), flat, r);
      }
      Compressed c;
      if (config.compressor == Compressor::PowerSGD && ratio != 1) {
        SmallVector<Type> types;
        for (unsigned i : bucket)
          types.push_back(ordered[i].getType());
        FailureOr<Compressed> p =
            powerSGD(build, config, e, types, sizes, counter, stream, op);
        if (failed(p))
          return failure();
        c = *p;
      } else {
        c = build.compress(config, ratio, e, counter, stream);
      }
      sent = c.averaged;
      if (!residualName.empty())
        SetParamOp::create(
            b, op->getLoc(),
            FlatSymbolRefAttr::get(&getContext(), residualName),
            nextResidual(b, op->getLoc(), opt, e, r,
                         SubOp::create(b, op->getLoc(), e, c.local)));
    }
    for (auto [i, piece] : llvm::zip(bucket, build.split(sent, sizes)))
      averaged[i] = build.reshapeLike(piece, ordered[i].getType());
  }
  for (auto [i, v] : llvm::enumerate(averaged))
    op->setOperand(opt.getGradients().getBeginOperandIndex() + order[i], v);
  return success();
}

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f ms", seconds * 1e3);
  return text;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// `p` (n x r) with orthonormal columns (Gram-Schmidt, in order).
Value orthogonalize(Builder &build, Value p) {
  auto type = cast<RankedTensorType>(p.getType());
  int64_t n = type.getDimSize(0), r = type.getDimSize(1);
  OpBuilder &b = build.b;
  Location loc = build.loc;
  auto sumAll = [&](Value v) {
    return ReduceSumOp::create(b, loc, v, ArrayRef<int64_t>{0, 1});
  };
  auto scalar = [&](double v) {
    return createSplatConstant(
        b, loc, RankedTensorType::get({}, type.getElementType()), v);
  };
  SmallVector<Value> columns;
  for (int64_t c = 0; c < r; ++c) {
    Value v = SliceOp::create(
        b, loc, RankedTensorType::get({n, 1}, type.getElementType()), p,
        b.getDenseI64ArrayAttr({0, c}), b.getDenseI64ArrayAttr({n, c + 1}),
        b.getDenseI64ArrayAttr({1, 1}));
    for (Value q : columns)
      v = SubOp::create(
          b, loc, v,
          MulOp::create(b, loc, sumAll(MulOp::create(b, loc, q, v)), q));
    Value norm = SqrtOp::create(b, loc, sumAll(MulOp::create(b, loc, v, v)));
    columns.push_back(
        DivOp::create(b, loc, v, AddOp::create(b, loc, norm, scalar(1e-8))));
  }
  if (columns.size() == 1)
    return columns.front();
  return ConcatOp::create(b, loc, type, columns, b.getI64IntegerAttr(1));
}

FailureOr<Compressed>
InsertCollectivesPass::powerSGD(Builder &build, const Config &config, Value e,
                                ArrayRef<Type> types, ArrayRef<int64_t> sizes,
                                Value counter, unsigned stream, Operation *op) {
  OpBuilder &b = build.b;
  Location loc = build.loc;
  Type element = cast<RankedTensorType>(e.getType()).getElementType();
  int64_t r = config.matrixRank;
  SmallVector<Value> pieces = build.split(e, sizes);
  // The first call (counter 0) starts every Q from the shared random one.
  Value first = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      tensor::ExtractOp::create(b, loc, counter),
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0));
  Value mask = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, element),
      ValueRange{arith::UIToFPOp::create(
          b, loc, element,
          arith::ExtUIOp::create(b, loc, b.getI64Type(), first))});
  struct Matrix {
    unsigned index;
    int64_t n, m;
    Value mat, q;
    std::string qName;
  };
  SmallVector<Matrix> matrices;
  SmallVector<Value> firstMessage;
  SmallVector<int64_t> firstSizes;
  for (auto [i, type] : llvm::enumerate(types)) {
    auto shaped = cast<RankedTensorType>(type);
    int64_t n = shaped.getRank() >= 2 ? shaped.getDimSize(0) : 0;
    int64_t m = n ? shaped.getNumElements() / n : 0;
    if (!n || (n + m) * r >= n * m) {
      firstMessage.push_back(pieces[i]);
      firstSizes.push_back(sizes[i]);
      continue;
    }
    Matrix mat{unsigned(i), n, m, {}, {}, {}};
    mat.mat = ReshapeOp::create(b, loc, pieces[i], ArrayRef<int64_t>{n, m});
    mat.qName =
        ("collectives.bucket" + Twine(stream) + ".powersgd.q" + Twine(i)).str();
    auto qType = RankedTensorType::get({m, r}, element);
    if (failed(declareState(getOperation(), op, mat.qName, qType, 0.0)))
      return failure();
    Value state = GetParamOp::create(
        b, loc, qType, FlatSymbolRefAttr::get(b.getContext(), mat.qName));
    Value random =
        RandomUniformOp::create(b, loc, qType, config.seed, (stream << 8) + i);
    mat.q = SelectOp::create(b, loc, mask, random, state);
    Value pMat = MatmulOp::create(b, loc, mat.mat, mat.q);
    firstMessage.push_back(build.flatten(pMat));
    firstSizes.push_back(n * r);
    matrices.push_back(mat);
  }
  // One collective for the Ps and the uncompressed tensors, one for the Qs.
  SmallVector<Value> firstMeans =
      build.split(build.mean(build.concat(firstMessage)), firstSizes);
  SmallVector<Value> out(types.size());
  SmallVector<Value> qs;
  SmallVector<int64_t> qSizes;
  unsigned next = 0, message = 0;
  SmallVector<Value> orthogonal;
  for (unsigned i = 0; i < types.size(); ++i) {
    if (next < matrices.size() && matrices[next].index == i) {
      Matrix &mat = matrices[next++];
      Value p = ReshapeOp::create(b, loc, firstMeans[message++],
                                  ArrayRef<int64_t>{mat.n, r});
      p = orthogonalize(build, p);
      orthogonal.push_back(p);
      Value q = MatmulOp::create(b, loc, mat.mat, p, /*transposeLhs=*/true,
                                 /*transposeRhs=*/false);
      qs.push_back(build.flatten(q));
      qSizes.push_back(mat.m * r);
      continue;
    }
    out[i] = firstMeans[message++];
  }
  if (!matrices.empty()) {
    SmallVector<Value> qMeans =
        build.split(build.mean(build.concat(qs)), qSizes);
    for (auto [mat, p, qFlat] : llvm::zip(matrices, orthogonal, qMeans)) {
      Value q = ReshapeOp::create(b, loc, qFlat, ArrayRef<int64_t>{mat.m, r});
      SetParamOp::create(b, loc,
                         FlatSymbolRefAttr::get(b.getContext(), mat.qName), q);
      Value approx = MatmulOp::create(b, loc, p, q, /*transposeLhs=*/false,
                                      /*transposeRhs=*/true);
      out[mat.index] = build.flatten(approx);
    }
  }
  Value averaged = build.concat(out);
  // Error feedback keeps what the average lacks of this rank's bucket.
  return Compressed{averaged, averaged};
}

int64_t InsertCollectivesPass::chooseBucketRatio(
    const Config &config, unsigned index, ArrayRef<Value> gradients,
    ArrayRef<unsigned> bucket, Operation *last, Operation *op) {
  int64_t bytes = 0;
  for (unsigned i : bucket)
    bytes += numElements(gradients[i]) * elementBytes(gradients[i]);
  // The backward left after the bucket is ready, up to the optimizer.
  double flops = 0;
  for (Operation *next = last ? last->getNextNode() : &op->getBlock()->front();
       next && next != op; next = next->getNextNode())
    flops += estimateFlops(next, config.network.batchSize);
  double overlap = flops / (config.network.computeGflops * 1e9);
  RatioChoice choice =
      chooseRatio(config.compressor, bytes, overlap, config.network);
  InFlightDiagnostic remark = op->emitRemark();
  remark << "grove-insert-collectives: bucket " << index << " ("
         << bucket.size() << " gradients, " << bytes << " bytes, "
         << config.network.worldSize << " ranks at "
         << number(config.network.gbps) << " Gbps): " << milliseconds(overlap)
         << " of backward to overlap; dense all-reduce "
         << milliseconds(choice.denseSeconds) << "; ";
  if (choice.ratio == 1)
    remark << "sends it dense";
  else
    remark << "sends " << compressor << " 1/" << choice.ratio << " in "
           << milliseconds(choice.seconds)
           << (choice.seconds > overlap ? " (none fits in the backward: "
                                          "within 10% of the fastest)"
                                        : "");
  return choice.ratio;
}

SmallVector<Value> InsertCollectivesPass::averageBlocks(
    Builder &build, ArrayRef<Value> params, Value counter, int64_t ratio,
    unsigned firstStream, const Config &config) {
  SmallVector<Value> flats, offsets, blocks;
  for (auto [i, p] : llvm::enumerate(params)) {
    Value flat = build.flatten(p);
    int64_t size = numElements(p);
    int64_t k = blockSize(size, ratio);
    Value offset = RandomBlockOp::create(build.b, build.loc, counter,
                                         config.seed, firstStream + i, size, k);
    flats.push_back(flat);
    offsets.push_back(offset);
    blocks.push_back(build.extractBlock(flat, offset, k));
  }
  SmallVector<Value> means = build.meanBucketed(blocks, config.bucketBytes);
  SmallVector<Value> out;
  for (auto [p, flat, offset, m] : llvm::zip(params, flats, offsets, means))
    out.push_back(
        build.reshapeLike(build.insertBlock(m, flat, offset), p.getType()));
  return out;
}

/// The current values of `names` (grove.param symbols) at `b`.
SmallVector<Value> readParams(OpBuilder &b, Location loc, ModuleOp module,
                              ArrayRef<Attribute> names) {
  SmallVector<Value> values;
  for (Attribute name : names) {
    auto ref = cast<FlatSymbolRefAttr>(name);
    auto param = module.lookupSymbol<ParamOp>(ref.getValue());
    values.push_back(GetParamOp::create(b, loc, param.getTensorType(), ref));
  }
  return values;
}

LogicalResult
InsertCollectivesPass::averageModelBlocks(OptimizerOpInterface opt,
                                          const Config &config) {
  Operation *op = opt.getOperation();
  FailureOr<Value> counter = counterOf(op->getParentOfType<func::FuncOp>(), op);
  if (failed(counter))
    return failure();
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  Location loc = op->getLoc();
  SmallVector<Attribute> names(opt.getParams().begin(), opt.getParams().end());
  SmallVector<Value> params = readParams(b, loc, getOperation(), names);
  Builder build{b, loc};
  unsigned streams = nextStream;
  nextStream += params.size();
  SmallVector<Value> synced;
  if (config.syncPeriod == 1) {
    synced =
        averageBlocks(build, params, *counter, config.ratio, streams, config);
  } else {
    // C2 replaces C1 on every H-th step (the reference's trainer).
    Value cond = build.isMultiple(*counter, 1, config.syncPeriod);
    SmallVector<Type> types;
    for (Value p : params)
      types.push_back(p.getType());
    auto ifOp = scf::IfOp::create(b, loc, types, cond, /*withElse=*/true);
    for (auto [region, ratio] :
         {std::pair{&ifOp.getThenRegion(), config.periodRatio},
          std::pair{&ifOp.getElseRegion(), config.ratio}}) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&region->front());
      SmallVector<Value> values =
          averageBlocks(build, params, *counter, ratio, streams, config);
      scf::YieldOp::create(b, loc, values);
    }
    synced.assign(ifOp.getResults().begin(), ifOp.getResults().end());
  }
  for (auto [name, v] : llvm::zip(names, synced))
    SetParamOp::create(b, loc, cast<FlatSymbolRefAttr>(name), v);
  return success();
}

LogicalResult InsertCollectivesPass::localAdaAlter(AdaAlterOp opt,
                                                   const Config &config) {
  if (opt.getSkipNonfinite())
    return opt.emitOpError(
        "with skip_nonfinite cannot take local steps: a rank that skips "
        "a step would count steps apart from the others and miss their "
        "synchronisation");
  ModuleOp module = getOperation();
  OpBuilder b(opt->getContext());
  b.setInsertionPointAfter(opt);
  Location loc = opt.getLoc();
  SmallVector<Attribute> names(opt.getParams().begin(), opt.getParams().end());
  SmallVector<Attribute> accumulators, denominators;
  for (Attribute name : names) {
    StringRef param = cast<FlatSymbolRefAttr>(name).getValue();
    accumulators.push_back(FlatSymbolRefAttr::get(
        &getContext(), opt.getStateName(param, "accumulator")));
    denominators.push_back(FlatSymbolRefAttr::get(
        &getContext(), opt.getStateName(param, "denominator")));
  }
  // Declared here, as grove-expand-training-ops would, since this pass
  // reads it first.
  SmallVector<Value> params = readParams(b, loc, module, names);
  auto optimizer = cast<OptimizerOpInterface>(opt.getOperation());
  for (auto [i, p] : llvm::enumerate(params)) {
    auto type = cast<RankedTensorType>(p.getType());
    for (auto [slot, refs] :
         {std::pair{StringRef("accumulator"), &accumulators},
          std::pair{StringRef("denominator"), &denominators}})
      if (failed(declareState(module, opt,
                              cast<FlatSymbolRefAttr>((*refs)[i]).getValue(),
                              type, optimizer.getSlotInit(slot))))
        return failure();
  }
  Type scalar = RankedTensorType::get({}, opt.getElementType());
  if (failed(declareState(module, opt, opt.getStepName(),
                          cast<RankedTensorType>(scalar), 0.0)))
    return failure();
  auto readLike = [&](ArrayRef<Attribute> refs) {
    SmallVector<Value> out;
    for (auto [ref, p] : llvm::zip(refs, params))
      out.push_back(GetParamOp::create(b, loc, p.getType(),
                                       cast<FlatSymbolRefAttr>(ref)));
    return out;
  };
  SmallVector<Value> acc = readLike(accumulators), den = readLike(denominators);
  Value t = GetParamOp::create(
      b, loc, scalar, FlatSymbolRefAttr::get(&getContext(), opt.getStepName()));
  Builder build{b, loc};
  Value cond = build.isMultiple(t, 0, opt.getPeriod());
  SmallVector<Type> types;
  for (Value v : llvm::concat<Value>(params, acc, den))
    types.push_back(v.getType());
  auto ifOp = scf::IfOp::create(b, loc, types, cond, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    SmallVector<Value> all(params);
    all.append(acc);
    SmallVector<Value> means = build.meanBucketed(all, config.bucketBytes);
    SmallVector<Value> yielded(means);
    yielded.append(means.begin() + params.size(), means.end());
    scf::YieldOp::create(b, loc, yielded);
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    SmallVector<Value> same(params);
    same.append(acc);
    same.append(den);
    scf::YieldOp::create(b, loc, same);
  }
  unsigned n = params.size();
  for (unsigned i = 0; i < n; ++i) {
    SetParamOp::create(b, loc, cast<FlatSymbolRefAttr>(names[i]),
                       ifOp.getResult(i));
    SetParamOp::create(b, loc, cast<FlatSymbolRefAttr>(accumulators[i]),
                       ifOp.getResult(n + i));
    SetParamOp::create(b, loc, cast<FlatSymbolRefAttr>(denominators[i]),
                       ifOp.getResult(2 * n + i));
  }
  return success();
}

void InsertCollectivesPass::runOnOperation() {
  // A pass instance may run on several modules.
  counters.clear();
  nextStream = 0;
  Config config;
  if (failed(parseOptions(config)))
    return signalPassFailure();
  SmallVector<OptimizerOpInterface> optimizers;
  getOperation().walk(
      [&](OptimizerOpInterface op) { optimizers.push_back(op); });
  if (optimizers.empty()) {
    getOperation().emitError(
        "grove-insert-collectives: no optimizer in the module, so nothing to "
        "make data-parallel (the pass runs before "
        "grove-expand-training-ops)");
    return signalPassFailure();
  }
  for (OptimizerOpInterface opt : optimizers) {
    Operation *op = opt.getOperation();
    // (An optimizer's parent is a function: HasParent.)
    if (!op->getParentRegion()->hasOneBlock()) {
      op->emitOpError("must be in a function of one block to be made "
                      "data-parallel");
      return signalPassFailure();
    }
    LogicalResult done = success();
    auto adaalter = dyn_cast<AdaAlterOp>(op);
    if (adaalter && adaalter.getPeriod() > 1)
      done = localAdaAlter(adaalter, config);
    else if (config.error == ErrorMode::Reset)
      done = averageModelBlocks(opt, config);
    else
      done = averageGradients(opt, config);
    if (failed(done))
      return signalPassFailure();
  }
}

} // namespace
