//===- CompressorsTest.cpp - The compressor registry and the cost model ---===//
//
// Every compressor grove-insert-collectives can be given is in the one
// registry under a unique name, says what it puts on the wire, and the cost
// model prices that: on a slow link each compressor's strongest ratio beats
// the dense all-reduce, and auto picks the least compression that fits.
//
//===----------------------------------------------------------------------===//

#include "Collectives/Compressor.h"

#include "llvm/ADT/StringSet.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::grove;

namespace {

TEST(Compressors, UniqueNamesFoundByLookup) {
  llvm::StringSet<> names;
  for (const Compressor *c : getCompressors()) {
    EXPECT_TRUE(names.insert(c->getName()).second) << c->getName().str();
    EXPECT_EQ(lookupCompressor(c->getName()), c);
    EXPECT_FALSE(c->getSummary().empty()) << c->getName().str();
  }
  for (StringRef name : {"none", "fp16", "bf16", "grbs", "randk", "topk",
                         "sign", "powersgd", "int8"})
    EXPECT_NE(lookupCompressor(name), nullptr) << name.str();
  EXPECT_EQ(lookupCompressor("zip"), nullptr);
  EXPECT_EQ(listCompressorNames().find("none, fp16, bf16"), 0u);
  EXPECT_NE(listCompressorNames().find(", powersgd or int8"),
            std::string::npos);
  EXPECT_EQ(
      listCompressorNames([](const Compressor &c) { return c.takesRatio(); }),
      "grbs, randk or topk");
}

TEST(Compressors, OnlyTheDenseOneIsDense) {
  for (const Compressor *c : getCompressors())
    EXPECT_EQ(c->isDense(), c->getName() == "none") << c->getName().str();
}

TEST(Compressors, TargetsTheyCannotRunSayWhy) {
  for (const Compressor *c : getCompressors()) {
    std::string why;
    EXPECT_TRUE(c->supportsTarget(CompileTarget::Host, why))
        << c->getName().str();
    bool cuda = c->supportsTarget(CompileTarget::Cuda, why);
    EXPECT_EQ(cuda, c->getName() != "topk") << c->getName().str();
    EXPECT_EQ(why.empty(), cuda) << c->getName().str();
  }
}

NetworkModel slowLink() {
  NetworkModel net;
  net.gbps = 1;
  net.latencyUs = 20;
  net.worldSize = 4;
  net.computeGflops = 50;
  net.batchSize = 32;
  return net;
}

TEST(CostModel, CompressingIsCheaperOnASlowLink) {
  // At its strongest ratio every compressor auto can tune beats the dense
  // all-reduce (top-k at 1/2 does not: values and indices, gathered).
  const int64_t bytes = 16 << 20;
  NetworkModel net = slowLink();
  for (const Compressor *c : getCompressors()) {
    SmallVector<int64_t> ratios = c->getAutoRatios();
    if (ratios.empty())
      continue;
    WireCost wire = c->getWireCost(bytes, ratios.back());
    EXPECT_GT(wire.allReduces + wire.allGathers, 0) << c->getName().str();
    EXPECT_LT(collectiveSeconds(*c, ratios.back(), bytes, net),
              collectiveSeconds(*c, 1, bytes, net))
        << c->getName().str() << " at 1/" << ratios.back();
  }
}

TEST(CostModel, RingAllReduceSeconds) {
  // 2 (n - 1) / n S / B + 2 (n - 1) latency: 4 ranks, 1 Gbit/s, 8 MB.
  NetworkModel net = slowLink();
  const int64_t bytes = 8'000'000;
  double expected = 2 * 3.0 / 4 * bytes / 125e6 + 2 * 3 * 20e-6;
  EXPECT_NEAR(collectiveSeconds(*lookupCompressor("none"), 1, bytes, net),
              expected, 1e-12);
  // A random block of 1/32 is the same ring on 1/32 of the bytes.
  double block = 2 * 3.0 / 4 * (bytes / 32.0) / 125e6 + 2 * 3 * 20e-6;
  EXPECT_NEAR(collectiveSeconds(*lookupCompressor("grbs"), 32, bytes, net),
              block, 1e-12);
}

TEST(CostModel, AutoPicksTheLeastCompressionThatFits) {
  NetworkModel net = slowLink();
  const Compressor *grbs = lookupCompressor("grbs");
  const int64_t bytes = 16 << 20;
  // Plenty of backward left: dense fits.
  RatioChoice lots = chooseRatio({grbs}, bytes, 10.0, net);
  EXPECT_EQ(lots.ratio, 1);
  // Little left: a ratio whose collective fits, and no smaller one does.
  double budget = collectiveSeconds(*grbs, 16, bytes, net) * 1.01;
  RatioChoice some = chooseRatio({grbs}, bytes, budget, net);
  EXPECT_EQ(some.ratio, 16);
  EXPECT_EQ(some.compressor, grbs);
  EXPECT_LE(some.seconds, budget);
  // A compressor with no ratios to pick from stays dense.
  EXPECT_EQ(chooseRatio({lookupCompressor("powersgd")}, bytes, 0, net).ratio,
            1);
}

TEST(CostModel, AutoPicksAmongCompressorsByRatio) {
  NetworkModel net = slowLink();
  const Compressor *bf16 = lookupCompressor("bf16");
  const Compressor *topk = lookupCompressor("topk");
  const int64_t bytes = 16 << 20;
  // Time for half the bytes: the cast (ratio 2) comes before top-k 1/4;
  // at equal ratios the list's order decides, and top-k 1/2 (values and
  // indices gathered: more than the dense ring) is too slow to fit.
  double half = collectiveSeconds(*bf16, 2, bytes, net) * 1.01;
  RatioChoice first = chooseRatio({bf16, topk}, bytes, half, net);
  EXPECT_EQ(first.compressor, bf16);
  EXPECT_EQ(first.ratio, 2);
  RatioChoice second = chooseRatio({topk, bf16}, bytes, half, net);
  EXPECT_EQ(second.compressor, bf16);
  EXPECT_EQ(second.ratio, 2);
  EXPECT_LE(second.seconds, half);
  // No time at all: the fastest rung, top-k's largest ratio.
  RatioChoice none = chooseRatio({bf16, topk}, bytes, 0, net);
  EXPECT_EQ(none.compressor, topk);
  EXPECT_GT(none.ratio, 2);
  // 16-bit gradients: a 16-bit cast saves nothing and is not offered.
  double halfOf16 =
      collectiveSeconds(*lookupCompressor("none"), 1, bytes / 2, net, 2);
  RatioChoice sixteen =
      chooseRatio({bf16, topk}, bytes, halfOf16 * 0.9, net, /*elementBytes=*/2);
  EXPECT_NE(sixteen.compressor, bf16);
  EXPECT_NE(sixteen.ratio, 2);
}

TEST(SyncStrategies, OrderAndNames) {
  ArrayRef<const SyncStrategy *> all = getSyncStrategies();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]->getName(), "Local AdaAlter");
  EXPECT_EQ(all[1]->getName(), "model blocks (CSER)");
  EXPECT_EQ(all[2]->getName(), "gradient averaging");
}

} // namespace
