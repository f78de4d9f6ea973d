//===- Sign.cpp - compressor=sign: EF-signSGD -----------------------------===//
//
// Each rank sends sign(e), one bit an element packed in i32 words, scaled
// by its mean |e|; the signs and scales of every rank are gathered and
// averaged.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {
class Sign : public Compressor {
public:
  StringRef getName() const override { return "sign"; }
  StringRef getSummary() const override {
    return "each element's sign, scaled by the bucket's mean magnitude";
  }
  SmallVector<int64_t> getAutoRatios() const override { return {32}; }
  FailureOr<Compressed> compress(CollectiveBuilder &build,
                                 const CollectiveConfig &, ModuleOp,
                                 const Bucket &bucket) const override {
    OpBuilder &b = build.b;
    Location loc = build.loc;
    Value e = bucket.flat;
    auto type = cast<RankedTensorType>(e.getType());
    Type element = type.getElementType();
    int64_t size = type.getNumElements();
    Value scale = ReduceMeanOp::create(
        b, loc, RankedTensorType::get({1}, element), build.magnitude(e),
        b.getDenseI64ArrayAttr({0}), /*keepdims=*/true);
    Value packed = PackSignsOp::create(
        b, loc, RankedTensorType::get({(size + 31) / 32}, b.getI32Type()), e);
    return build.averagePacked<MeanOfSignsOp>(packed, scale, type);
  }
  WireCost getWireCost(int64_t bytes, int64_t) const override {
    return {0, 0, bytes / 32.0 + 4, 2, 50};
  }
};
} // namespace

std::unique_ptr<Compressor> mlir::grove::createSignCompressor() {
  return std::make_unique<Sign>();
}
