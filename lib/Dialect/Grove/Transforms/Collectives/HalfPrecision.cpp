//===- HalfPrecision.cpp - compressor=fp16|bf16 ---------------------------===//
//
// Each rank sends e / n in half precision, so that the all-reduce's sum in
// half precision is the mean and overflows only where the mean would.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {
class HalfPrecision : public Compressor {
public:
  explicit HalfPrecision(bool bf16) : bf16(bf16) {}
  StringRef getName() const override { return bf16 ? "bf16" : "fp16"; }
  StringRef getSummary() const override {
    return bf16 ? "every element as bf16, summed in bf16"
                : "every element as fp16, summed in fp16";
  }
  SmallVector<int64_t> getAutoRatios() const override { return {2}; }
  bool savesBytes(int64_t elementBytes) const override {
    return elementBytes > 2;
  }
  FailureOr<Compressed> compress(CollectiveBuilder &build,
                                 const CollectiveConfig &, ModuleOp,
                                 const Bucket &bucket) const override {
    OpBuilder &b = build.b;
    Value e = bucket.flat;
    auto type = cast<RankedTensorType>(e.getType());
    Type half = bf16 ? Type(b.getBF16Type()) : Type(b.getF16Type());
    auto halfType = RankedTensorType::get(type.getShape(), half);
    Value h = ConvertOp::create(b, build.loc, halfType, build.perRank(e));
    Value sum = AllReduceOp::create(b, build.loc, h, ReductionKind::Sum);
    Value own = ConvertOp::create(b, build.loc, type, h);
    return Compressed{ConvertOp::create(b, build.loc, type, sum),
                      build.timesRanks(own)};
  }
  WireCost getWireCost(int64_t bytes, int64_t) const override {
    return {bytes / 2.0, 1, 0, 0, 50};
  }

private:
  bool bf16;
};
} // namespace

std::unique_ptr<Compressor> mlir::grove::createHalfCompressor(bool bf16) {
  return std::make_unique<HalfPrecision>(bf16);
}
