//===- RandK.cpp - compressor=randk: k random elements a bucket -----------===//
//
// The same k indices on every rank (grove.random_indices from the step
// count and the seed): one dense all-reduce of the k values.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {
class RandK : public Compressor {
public:
  StringRef getName() const override { return "randk"; }
  StringRef getSummary() const override {
    return "1/ratio of each bucket's elements, drawn at random";
  }
  bool takesRatio() const override { return true; }
  SmallVector<int64_t> getAutoRatios() const override {
    return getPowerOfTwoRatios();
  }
  bool needsStepCounter() const override { return true; }
  FailureOr<Compressed> compress(CollectiveBuilder &build,
                                 const CollectiveConfig &config, ModuleOp,
                                 const Bucket &bucket) const override {
    OpBuilder &b = build.b;
    Value e = bucket.flat;
    auto type = cast<RankedTensorType>(e.getType());
    int64_t k = blockSize(type.getNumElements(), bucket.ratio);
    Value indices = RandomIndicesOp::create(
        b, build.loc, RankedTensorType::get({k}, b.getI32Type()),
        bucket.counter, config.seed, bucket.stream, type.getNumElements());
    Value values = GatherOp::create(b, build.loc, e, indices);
    return Compressed{
        ScatterAddOp::create(b, build.loc, type, build.zerosLike(e), indices,
                             build.mean(values)),
        ScatterAddOp::create(b, build.loc, type, build.zerosLike(e), indices,
                             values)};
  }
  WireCost getWireCost(int64_t bytes, int64_t ratio) const override {
    return {double(bytes) / double(ratio), 1, 0, 0, 50};
  }
};
} // namespace

std::unique_ptr<Compressor> mlir::grove::createRandKCompressor() {
  return std::make_unique<RandK>();
}
