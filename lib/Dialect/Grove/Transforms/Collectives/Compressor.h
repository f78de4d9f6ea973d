//===- Compressor.h - Gradient compressors and sync strategies --*- C++ -*-===//
//
// grove-insert-collectives is a driver over two extension points:
//
// * a Compressor says how one flat bucket of gradients crosses the ranks
//   (grove ops that send less than the bucket and average what arrives)
//   and what that puts on the wire, for the cost model. Each one is a file
//   of this folder, registered in Registry.cpp, the one list of them;
// * a SyncStrategy says how an optimizer's step is kept the same on every
//   rank: gradients averaged before the step, model blocks averaged after
//   it (CSER), or local steps with periodic averages (Local AdaAlter).
//
// Both build ordinary grove ops and state, which later passes lower like
// any other (docs/distributed.md).
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_TRANSFORMS_COLLECTIVES_COMPRESSOR_H
#define GROVE_DIALECT_GROVE_TRANSFORMS_COLLECTIVES_COMPRESSOR_H

#include "CostModel.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Support/OptionTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <string>

namespace mlir::grove {

class Compressor;

/// The pass's options, checked (grove-insert-collectives, Passes.td).
struct CollectiveConfig {
  const Compressor *compressor = nullptr;
  CompressError error = CompressError::None;
  int64_t ratio = 32, periodRatio = 4, syncPeriod = 1, bucketBytes = 0,
          seed = 0;
  /// ratio=auto: the cost model picks each bucket's compressor among
  /// `candidates` (compressor=a,b: the first is `compressor`) and its ratio.
  bool autoRatio = false;
  SmallVector<const Compressor *> candidates;
  /// PowerSGD's rank.
  int64_t matrixRank = 1;
  NetworkModel network;
};

/// A compressed collective of a flat bucket: the average over the ranks of
/// what each sent, decompressed, and what this rank sent, decompressed
/// (the error-feedback residual keeps the difference from the input).
struct Compressed {
  Value averaged, local;
};

int64_t numElements(Value v);
int64_t elementBytes(Value v);

/// Builds at one insertion point and location: flattening, buckets,
/// blocks, the collectives. Compressors and strategies share it.
struct CollectiveBuilder {
  OpBuilder &b;
  Location loc;

  Value flatten(Value x);
  Value reshapeLike(Value flat, Type type);
  /// The flat values one after the other (one value: itself).
  Value concat(ArrayRef<Value> flats);
  /// `flat` cut into consecutive pieces of `sizes` elements.
  SmallVector<Value> split(Value flat, ArrayRef<int64_t> sizes);
  Value extractBlock(Value flat, Value offset, int64_t size);
  Value insertBlock(Value block, Value flat, Value offset);
  Value zerosLike(Value v);
  /// A constant of `element` type and rank 0.
  Value scalar(Type element, double value);
  /// The mean over the ranks of `v` (one all-reduce).
  Value mean(Value v);
  /// The mean over ranks of each of `values`, through one collective a
  /// group of consecutive values of one element type up to `bucketBytes`.
  SmallVector<Value> meanBucketed(ArrayRef<Value> values, int64_t bucketBytes);
  /// The world size as a rank-0 tensor of `x`'s element type.
  Value worldSizeLike(Value x);
  /// `x` divided by / times the world size.
  Value perRank(Value x);
  Value timesRanks(Value x);
  /// Rank-1 `x` gathered from every rank: tensor<? x size>.
  Value gather(Value x);
  /// Whether the i64 count `t` (rank 0) plus `plus` is a multiple of `h`.
  Value isMultiple(Value t, int64_t plus, int64_t h);
  /// |x|, elementwise (max(x, -x)).
  Value magnitude(Value x);
  /// Each rank's `packed` words and its `scale` (one value) gathered and
  /// averaged by `MeanOp` (grove.mean_of_signs, grove.mean_of_int8) into
  /// `type`, and this rank's own message decoded the same way.
  template <typename MeanOp>
  Compressed averagePacked(Value packed, Value scale, RankedTensorType type) {
    int64_t words = cast<RankedTensorType>(packed.getType()).getDimSize(0);
    Value scales = ReshapeOp::create(b, loc, gather(scale),
                                     ArrayRef<int64_t>{ShapedType::kDynamic});
    Value averaged = MeanOp::create(b, loc, type, gather(packed), scales);
    Value own = MeanOp::create(
        b, loc, type,
        ReshapeOp::create(b, loc, packed, ArrayRef<int64_t>{1, words}), scale);
    return {averaged, own};
  }
};

/// The ratios ratio=auto may pick for a compressor that sends 1/ratio of a
/// bucket: the powers of two from 2 to 256.
SmallVector<int64_t> getPowerOfTwoRatios();

/// The current values of `names` (grove.param symbols) at `b`.
SmallVector<Value> readParams(OpBuilder &b, Location loc, ModuleOp module,
                              ArrayRef<Attribute> names);

/// Groups `values` in order into runs of one element type and at most
/// `bucketBytes` (a value larger alone is a run of its own).
SmallVector<SmallVector<unsigned>> bucketize(ArrayRef<Value> values,
                                             int64_t bucketBytes);

/// GRBS's (and RandK's, top-k's) share of a bucket: 1/ratio of `size`
/// elements, rounded down (a step never sends more than 1/ratio), at least
/// one.
int64_t blockSize(int64_t size, int64_t ratio);

/// One bucket as a compressor sees it.
struct Bucket {
  /// The bucket, flat (with error feedback: the gradients plus the
  /// residual).
  Value flat;
  /// The tensors it holds, in order, and their element counts.
  ArrayRef<Type> types;
  ArrayRef<int64_t> sizes;
  /// Send about 1/ratio of it (compressors that take a ratio).
  int64_t ratio = 1;
  /// The bucket's index among the pass's random streams and state names.
  unsigned stream = 0;
  /// The step count before this step (rank-0 i64), for compressors that
  /// need it (needsStepCounter); null otherwise.
  Value counter;
  /// The optimizer the bucket's gradients feed: state is declared for it.
  Operation *optimizer = nullptr;
};

/// How one bucket of gradients crosses the ranks (Horovod's Compressor,
/// a PyTorch DDP communication hook). Stateless: one instance serves every
/// pass.
class Compressor {
public:
  virtual ~Compressor() = default;

  /// The `compressor=` option's value.
  virtual StringRef getName() const = 0;
  /// What it sends, for --help and diagnostics.
  virtual StringRef getSummary() const = 0;
  /// Whether it sends all of the bucket in full (the dense average):
  /// nothing is lost, so error feedback has nothing to keep.
  virtual bool isDense() const { return false; }
  /// Whether `ratio` applies to it (1/ratio of each bucket is sent).
  virtual bool takesRatio() const { return false; }
  /// The ratios besides 1 (dense) that ratio=auto may pick; none: it
  /// cannot be auto-tuned.
  virtual SmallVector<int64_t> getAutoRatios() const { return {}; }
  /// Whether it sends fewer bytes than the bucket's own elements of
  /// `elementBytes` (a 16-bit cast of 16-bit gradients does not): the
  /// cost model offers it only then.
  virtual bool savesBytes(int64_t elementBytes) const { return true; }
  /// Whether compress() reads the step counter (a random draw per step).
  virtual bool needsStepCounter() const { return false; }
  /// Whether models compiled for `target` can run it; if not, `why` says
  /// what is missing.
  virtual bool supportsTarget(CompileTarget target, std::string &why) const {
    return true;
  }
  /// The grove ops that send `bucket` and average what the ranks sent.
  /// Fails (with a diagnostic) only where it declares state that clashes.
  virtual FailureOr<Compressed> compress(CollectiveBuilder &build,
                                         const CollectiveConfig &config,
                                         ModuleOp module,
                                         const Bucket &bucket) const = 0;
  /// What a bucket of `bytes` sent at `ratio` (> 1) puts on the wire.
  virtual WireCost getWireCost(int64_t bytes, int64_t ratio) const = 0;
};

/// The registered compressors (Registry.cpp), and the one named `name`
/// (null if none is).
ArrayRef<const Compressor *> getCompressors();
const Compressor *lookupCompressor(StringRef name);
/// "none, fp16, ... or powersgd" (those `filter` accepts), for diagnostics
/// and help.
std::string listCompressorNames(
    llvm::function_ref<bool(const Compressor &)> filter = nullptr);

// The built-in compressors, one file each; Registry.cpp lists them.
std::unique_ptr<Compressor> createDenseCompressor();
std::unique_ptr<Compressor> createHalfCompressor(bool bf16);
std::unique_ptr<Compressor> createRandomBlockCompressor();
std::unique_ptr<Compressor> createRandKCompressor();
std::unique_ptr<Compressor> createTopKCompressor();
std::unique_ptr<Compressor> createSignCompressor();
std::unique_ptr<Compressor> createPowerSGDCompressor();
std::unique_ptr<Compressor> createInt8Compressor();

/// What the strategies share during one run of the pass: the module, the
/// options, each function's step counter and the next random stream.
class CollectiveState {
public:
  CollectiveState(ModuleOp module, const CollectiveConfig &config)
      : module(module), config(config) {}

  ModuleOp getModule() const { return module; }
  const CollectiveConfig &getConfig() const { return config; }
  /// The function's step counter before this call's step: read at the
  /// start of `fn`, incremented before its return (one per function).
  FailureOr<Value> counterOf(func::FuncOp fn, Operation *user);
  /// `count` fresh random streams; returns the first.
  unsigned takeStreams(unsigned count) {
    unsigned first = nextStream;
    nextStream += count;
    return first;
  }

private:
  ModuleOp module;
  const CollectiveConfig &config;
  llvm::DenseMap<Operation *, Value> counters;
  unsigned nextStream = 0;
};

/// How an optimizer's step is kept the same on every rank.
class SyncStrategy {
public:
  virtual ~SyncStrategy() = default;
  virtual StringRef getName() const = 0;
  /// Whether this strategy synchronises `opt` under `config`.
  virtual bool appliesTo(OptimizerOpInterface opt,
                         const CollectiveConfig &config) const = 0;
  /// Rewrites `opt`'s function so that its step is data-parallel.
  virtual LogicalResult apply(OptimizerOpInterface opt,
                              CollectiveState &state) const = 0;
};

/// The strategies, the first that applies wins: Local AdaAlter, model
/// blocks (error=reset), gradient averaging (the rest).
ArrayRef<const SyncStrategy *> getSyncStrategies();
std::unique_ptr<SyncStrategy> createLocalAdaAlterStrategy();
std::unique_ptr<SyncStrategy> createModelBlocksStrategy();
std::unique_ptr<SyncStrategy> createGradientAveragingStrategy();

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_TRANSFORMS_COLLECTIVES_COMPRESSOR_H
