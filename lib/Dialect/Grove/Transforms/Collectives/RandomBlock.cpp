//===- RandomBlock.cpp - compressor=grbs: one random block a bucket -------===//
//
// Every rank draws the same block of 1/ratio of the bucket from the step
// count and the seed (grove.random_block), so one dense all-reduce of the
// block averages it; the rest of the bucket is not sent.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {
class RandomBlock : public Compressor {
public:
  StringRef getName() const override { return "grbs"; }
  StringRef getSummary() const override {
    return "one random block of 1/ratio of each bucket";
  }
  bool takesRatio() const override { return true; }
  SmallVector<int64_t> getAutoRatios() const override {
    return getPowerOfTwoRatios();
  }
  bool needsStepCounter() const override { return true; }
  FailureOr<Compressed> compress(CollectiveBuilder &build,
                                 const CollectiveConfig &config, ModuleOp,
                                 const Bucket &bucket) const override {
    Value e = bucket.flat;
    int64_t size = numElements(e);
    int64_t k = blockSize(size, bucket.ratio);
    Value offset = RandomBlockOp::create(build.b, build.loc, bucket.counter,
                                         config.seed, bucket.stream, size, k);
    Value block = build.extractBlock(e, offset, k);
    return Compressed{
        build.insertBlock(build.mean(block), build.zerosLike(e), offset),
        build.insertBlock(block, build.zerosLike(e), offset)};
  }
  WireCost getWireCost(int64_t bytes, int64_t ratio) const override {
    return {double(bytes) / double(ratio), 1, 0, 0, 0};
  }
};
} // namespace

std::unique_ptr<Compressor> mlir::grove::createRandomBlockCompressor() {
  return std::make_unique<RandomBlock>();
}
