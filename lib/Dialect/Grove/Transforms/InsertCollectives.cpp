//===- InsertCollectives.cpp - Data-parallel optimizer steps --------------===//
//
// grove-insert-collectives (Passes.td; docs/distributed.md). Every rank runs
// the same code, so the collectives this pass writes meet in program order;
// what it adds is grove ops and state, which later passes lower like any
// other. The pass checks its options and hands each optimizer to the first
// synchronisation strategy that applies; how a bucket is compressed is the
// configured Compressor's (Collectives/, one file each).
//
//===----------------------------------------------------------------------===//

#include "Collectives/Compressor.h"

#include "grove/Dialect/Grove/IR/ABIAttrs.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

namespace mlir::grove {
#define GEN_PASS_DEF_GROVEINSERTCOLLECTIVES
#include "grove/Dialect/Grove/Transforms/Passes.h.inc"
} // namespace mlir::grove

using namespace mlir;
using namespace mlir::grove;

namespace {

class InsertCollectivesPass
    : public grove::impl::GroveInsertCollectivesBase<InsertCollectivesPass> {
public:
  InsertCollectivesPass() = default;
  // The options are copied by the pass manager (copyOptionValuesFrom).
  InsertCollectivesPass(const InsertCollectivesPass &other) : Base(other) {}
  explicit InsertCollectivesPass(const GroveInsertCollectivesOptions &options) {
#define GROVE_COLLECTIVES_OPTION(TYPE, FIELD, NAME, PIPELINE_FIELD,            \
                                 PIPELINE_NAME, DEFAULT, DESCRIPTION)          \
  FIELD = options.FIELD;
#define GROVE_COLLECTIVES_PASS_OPTION(TYPE, FIELD, NAME, DEFAULT, DESCRIPTION) \
  FIELD = options.FIELD;
#include "grove/Dialect/Grove/Transforms/PassOptions.def"
  }
  void runOnOperation() override;

private:
  LogicalResult parseOptions(CollectiveConfig &config);
  /// Records the pass's options on `func` (kCollectivesConfigAttr).
  void recordConfig(func::FuncOp func);

  // Declared in PassOptions.def, with the pipeline's and grovec's.
#define GROVE_COLLECTIVES_OPTION(TYPE, FIELD, NAME, PIPELINE_FIELD,            \
                                 PIPELINE_NAME, DEFAULT, DESCRIPTION)          \
  Option<TYPE> FIELD{*this, NAME, llvm::cl::desc(DESCRIPTION),                 \
                     llvm::cl::init(DEFAULT), OptionValues<TYPE>::get()};
#define GROVE_COLLECTIVES_PASS_OPTION(TYPE, FIELD, NAME, DEFAULT, DESCRIPTION) \
  Option<TYPE> FIELD{*this, NAME, llvm::cl::desc(DESCRIPTION),                 \
                     llvm::cl::init(DEFAULT), OptionValues<TYPE>::get()};
#include "grove/Dialect/Grove/Transforms/PassOptions.def"
};

/// compressor=a[,b...]: each registered and able to run on the target.
LogicalResult parseCompressors(const GroveInsertCollectivesOptions &o,
                               CollectiveConfig &config,
                               llvm::raw_ostream &os) {
  SmallVector<StringRef> names;
  StringRef(o.compressor).split(names, ',');
  for (StringRef name : names) {
    if (name.trim().empty()) {
      os << "empty entry in the compressor list '" << o.compressor << "'";
      return failure();
    }
    const Compressor *c = lookupCompressor(name.trim());
    if (c && llvm::is_contained(config.candidates, c))
      continue;
    if (!c) {
      os << "unknown compressor '" << name.trim() << "' (expected "
         << listCompressorNames() << ")";
      return failure();
    }
    std::string why;
    if (!c->supportsTarget(o.target, why)) {
      os << "compressor=" << c->getName() << " cannot run on target "
         << o.target << ": " << why;
      return failure();
    }
    config.candidates.push_back(c);
  }
  config.compressor = config.candidates.front();
  return success();
}

/// The compressors as one canonical list ("bf16,topk"), so that spellings
/// of one choice record the same options (the ranks' agreement compares
/// them).
std::string canonicalCompressors(const CollectiveConfig &config) {
  std::string list;
  for (const Compressor *c : config.candidates)
    list += (list.empty() ? "" : ",") + c->getName().str();
  return list;
}

/// The options as a CollectiveConfig, or what is wrong with them.
FailureOr<CollectiveConfig> parseConfig(const GroveInsertCollectivesOptions &o,
                                        std::string &error) {
  llvm::raw_string_ostream os(error);
  CollectiveConfig config;
  if (failed(parseCompressors(o, config, os)))
    return failure();
  config.error = o.error;
  // compress-ratio was parsed by its option (grove/Support/OptionTypes.h).
  config.autoRatio = o.ratio.isAuto;
  if (!config.autoRatio)
    config.ratio = o.ratio.value;
  if (config.candidates.size() > 1 && !config.autoRatio) {
    os << "a list of compressors is for ratio=auto, which picks among them";
    return failure();
  }
  if (config.autoRatio) {
    if (!(o.networkGbps > 0) || o.worldSize < 2 || !(o.computeGflops > 0) ||
        o.batchSize < 1 || o.latencyUs < 0) {
      os << "ratio=auto needs network-gbps > 0, world-size >= 2, "
            "compute-gflops > 0 and batch-size >= 1";
      return failure();
    }
    auto noRatios = llvm::find_if(config.candidates, [](const Compressor *c) {
      return c->getAutoRatios().empty();
    });
    if (noRatios != config.candidates.end() ||
        config.error != CompressError::Feedback) {
      if (noRatios != config.candidates.end() && config.candidates.size() > 1)
        os << "compressor=" << (*noRatios)->getName()
           << " has no ratios to pick: ";
      os << "ratio=auto picks a gradient compressor's ratio: give one or "
            "more, comma-separated ("
         << listCompressorNames(
                [](const Compressor &c) { return !c.getAutoRatios().empty(); })
         << ") and error=feedback (what a bucket does not send must not be "
            "lost)";
      return failure();
    }
    config.network = {o.networkGbps, o.latencyUs, o.worldSize, o.computeGflops,
                      o.batchSize};
  }
  if (config.ratio < 1 || o.periodRatio < 1 || o.syncPeriod < 1 ||
      o.bucketBytes < 1 || o.matrixRank < 1) {
    os << "ratio, period-ratio, sync-period, bucket-bytes and matrix-rank "
          "must be positive";
    return failure();
  }
  if (config.error == CompressError::Feedback && config.compressor->isDense()) {
    os << "error=feedback needs a compressor (a dense average leaves no "
          "error)";
    return failure();
  }
  if (config.error == CompressError::Reset &&
      config.compressor->getName() != "grbs") {
    os << "error=reset (CSER) averages random blocks: it needs "
          "compressor=grbs";
    return failure();
  }
  config.periodRatio = o.periodRatio;
  config.matrixRank = o.matrixRank;
  config.syncPeriod = o.syncPeriod;
  config.bucketBytes = o.bucketBytes;
  config.seed = o.seed;
  return config;
}

LogicalResult InsertCollectivesPass::parseOptions(CollectiveConfig &config) {
  GroveInsertCollectivesOptions o;
#define GROVE_COLLECTIVES_OPTION(TYPE, FIELD, NAME, PIPELINE_FIELD,            \
                                 PIPELINE_NAME, DEFAULT, DESCRIPTION)          \
  o.FIELD = FIELD;
#define GROVE_COLLECTIVES_PASS_OPTION(TYPE, FIELD, NAME, DEFAULT, DESCRIPTION) \
  o.FIELD = FIELD;
#include "grove/Dialect/Grove/Transforms/PassOptions.def"
  std::string message;
  FailureOr<CollectiveConfig> parsed = parseConfig(o, message);
  if (failed(parsed))
    return getOperation().emitError("grove-insert-collectives: ") << message;
  config = *parsed;
  return success();
}

void InsertCollectivesPass::runOnOperation() {
  CollectiveConfig config;
  if (failed(parseOptions(config)))
    return signalPassFailure();
  compressor = canonicalCompressors(config);
  // One state a run: a pass instance may run on several modules.
  CollectiveState state(getOperation(), config);
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
  // Each rank would judge its own gradients' overflow before the
  // reduction and move its scale apart from the others'.
  WalkResult scaled = getOperation().walk([](SetParamOp write) {
    return write->hasAttr(kLossScaleUpdateAttr) ? WalkResult::interrupt()
                                                : WalkResult::advance();
  });
  if (scaled.wasInterrupted()) {
    getOperation().emitError(
        "grove-insert-collectives: dynamic loss scaling is not data-parallel "
        "yet (each rank would judge overflow apart); use bf16 without a loss "
        "scale (--loss-scale=0)");
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
    for (const SyncStrategy *strategy : getSyncStrategies()) {
      if (!strategy->appliesTo(opt, config))
        continue;
      if (failed(strategy->apply(opt, state)))
        return signalPassFailure();
      break;
    }
    recordConfig(op->getParentOfType<func::FuncOp>());
  }
}

void InsertCollectivesPass::recordConfig(func::FuncOp func) {
  // Ranks compare it before they exchange anything (docs/distributed.md,
  // "Agreement"): two builds of one model that differ in any option
  // (compressor, ratio, buckets, seed) would exchange differently.
  std::string text;
  llvm::raw_string_ostream os(text);
  printAsTextualPipeline(os);
  func->setAttr(kCollectivesConfigAttr,
                StringAttr::get(func.getContext(), text));
}

} // namespace

std::unique_ptr<Pass> mlir::grove::createGroveInsertCollectives(
    const GroveInsertCollectivesOptions &options) {
  return std::make_unique<InsertCollectivesPass>(options);
}

LogicalResult mlir::grove::checkInsertCollectivesOptions(
    const GroveInsertCollectivesOptions &options, std::string &error) {
  return parseConfig(options, error);
}
