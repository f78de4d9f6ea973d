//===- TopK.cpp - compressor=topk: the k largest magnitudes ---------------===//
//
// Each rank picks its own k elements (grove.top_k), so the values and
// their indices are gathered from every rank and scattered-added.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {
class TopK : public Compressor {
public:
  StringRef getName() const override { return "topk"; }
  StringRef getSummary() const override {
    return "each rank's 1/ratio largest-magnitude elements, gathered";
  }
  bool takesRatio() const override { return true; }
  SmallVector<int64_t> getAutoRatios() const override {
    return getPowerOfTwoRatios();
  }
  bool supportsTarget(CompileTarget target, std::string &why) const override {
    if (target != CompileTarget::Cuda)
      return true;
    why = "its selection (grove.top_k) runs on the host only: the CUDA "
          "runtime has no device top-k yet";
    return false;
  }
  FailureOr<Compressed> compress(CollectiveBuilder &build,
                                 const CollectiveConfig &, ModuleOp,
                                 const Bucket &bucket) const override {
    OpBuilder &b = build.b;
    Value e = bucket.flat;
    auto type = cast<RankedTensorType>(e.getType());
    int64_t k = blockSize(type.getNumElements(), bucket.ratio);
    auto top = TopKOp::create(b, build.loc,
                              RankedTensorType::get({k}, type.getElementType()),
                              RankedTensorType::get({k}, b.getI32Type()), e, k);
    Value all = ScatterAddOp::create(b, build.loc, type, build.zerosLike(e),
                                     build.gather(top.getIndices()),
                                     build.gather(top.getValues()));
    return Compressed{build.perRank(all),
                      ScatterAddOp::create(b, build.loc, type,
                                           build.zerosLike(e), top.getIndices(),
                                           top.getValues())};
  }
  WireCost getWireCost(int64_t bytes, int64_t ratio) const override {
    // Values and indices, 4 bytes each, gathered from every rank.
    return {0, 0, 2.0 * double(bytes) / double(ratio), 2, 250};
  }
};
} // namespace

std::unique_ptr<Compressor> mlir::grove::createTopKCompressor() {
  return std::make_unique<TopK>();
}
