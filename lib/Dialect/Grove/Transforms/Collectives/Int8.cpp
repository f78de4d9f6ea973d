//===- Int8.cpp - compressor=int8: 8-bit codes under one scale a bucket ---===//
//
// Each rank sends its bucket as 8-bit codes, four a 32-bit word
// (grove.pack_int8), under one scale, max |e| / 127, and the words and
// scales of every rank are gathered and averaged (grove.mean_of_int8): a
// quarter of the dense bytes. What rounding loses, error feedback keeps.
// One scale a bucket, as in ZeRO++'s quantized gradients and CGX.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {
class Int8 : public Compressor {
public:
  StringRef getName() const override { return "int8"; }
  StringRef getSummary() const override {
    return "every element as an 8-bit code under the bucket's max |e| / 127";
  }
  SmallVector<int64_t> getAutoRatios() const override { return {4}; }
  FailureOr<Compressed> compress(CollectiveBuilder &build,
                                 const CollectiveConfig &, ModuleOp,
                                 const Bucket &bucket) const override {
    OpBuilder &b = build.b;
    Location loc = build.loc;
    Value e = bucket.flat;
    auto type = cast<RankedTensorType>(e.getType());
    Type element = type.getElementType();
    auto one = RankedTensorType::get({1}, element);
    Value scale = DivOp::create(
        b, loc,
        ReduceMaxOp::create(b, loc, one, build.magnitude(e),
                            b.getDenseI64ArrayAttr({0}), /*keepdims=*/true),
        build.scalar(element, 127.0));
    int64_t words = (type.getNumElements() + 3) / 4;
    Value packed = PackInt8Op::create(
        b, loc, RankedTensorType::get({words}, b.getI32Type()), e, scale);
    return build.averagePacked<MeanOfInt8Op>(packed, scale, type);
  }
  WireCost getWireCost(int64_t bytes, int64_t) const override {
    // One byte an f32 element, and a scale, gathered from every rank.
    return {0, 0, bytes / 4.0 + 4, 2, 50};
  }
};
} // namespace

std::unique_ptr<Compressor> mlir::grove::createInt8Compressor() {
  return std::make_unique<Int8>();
}
