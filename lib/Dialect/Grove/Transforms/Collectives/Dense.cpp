//===- Dense.cpp - compressor=none: the dense average ---------------------===//

#include "Compressor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {
class Dense : public Compressor {
public:
  StringRef getName() const override { return "none"; }
  StringRef getSummary() const override {
    return "every element, averaged by one all-reduce a bucket";
  }
  bool isDense() const override { return true; }
  FailureOr<Compressed> compress(CollectiveBuilder &build,
                                 const CollectiveConfig &, ModuleOp,
                                 const Bucket &bucket) const override {
    return Compressed{build.mean(bucket.flat), bucket.flat};
  }
  WireCost getWireCost(int64_t bytes, int64_t) const override {
    return {double(bytes), 1, 0, 0, 0};
  }
};
} // namespace

std::unique_ptr<Compressor> mlir::grove::createDenseCompressor() {
  return std::make_unique<Dense>();
}
