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
  using Base::Base;
  void runOnOperation() override;

private:
  LogicalResult parseOptions(CollectiveConfig &config);
};

LogicalResult InsertCollectivesPass::parseOptions(CollectiveConfig &config) {
  ModuleOp module = getOperation();
  config.compressor = lookupCompressor(compressor);
  if (!config.compressor)
    return module.emitError("grove-insert-collectives: unknown compressor '")
           << compressor << "' (expected " << listCompressorNames() << ")";
  std::string why;
  if (!config.compressor->supportsTarget(target, why))
    return module.emitError("grove-insert-collectives: compressor=")
           << compressor << " cannot run on target " << target << ": " << why;
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
    if (config.compressor->getAutoRatios().empty() ||
        config.error != ErrorMode::Feedback)
      return module.emitError("grove-insert-collectives: ratio=auto picks a "
                              "gradient compressor's ratio: give one (")
             << listCompressorNames([](const Compressor &c) {
                  return !c.getAutoRatios().empty();
                })
             << ") and error=feedback (what a bucket does not send must not "
                "be lost)";
    config.network = {networkGbps, latencyUs, worldSize, computeGflops,
                      batchSize};
  }
  if (config.ratio < 1 || periodRatio < 1 || syncPeriod < 1 ||
      bucketBytes < 1 || matrixRank < 1)
    return module.emitError("grove-insert-collectives: ratio, period-ratio, "
                            "sync-period, bucket-bytes and matrix-rank must "
                            "be positive");
  if (config.error == ErrorMode::Feedback && config.compressor->isDense())
    return module.emitError("grove-insert-collectives: error=feedback needs a "
                            "compressor (a dense average leaves no error)");
  if (config.error == ErrorMode::Reset &&
      config.compressor->getName() != "grbs")
    return module.emitError("grove-insert-collectives: error=reset (CSER) "
                            "averages random blocks: it needs compressor=grbs");
  config.periodRatio = periodRatio;
  config.matrixRank = matrixRank;
  config.syncPeriod = syncPeriod;
  config.bucketBytes = bucketBytes;
  config.seed = seed;
  return success();
}

void InsertCollectivesPass::runOnOperation() {
  CollectiveConfig config;
  if (failed(parseOptions(config)))
    return signalPassFailure();
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
  }
}

} // namespace
