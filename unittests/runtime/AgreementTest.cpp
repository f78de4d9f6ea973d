//===- AgreementTest.cpp - What the ranks compare before exchanging -------===//
//
// The exchange itself needs MPI (test/Integration/distributed_agreement.py);
// here the fingerprints and the message built from the gathered ones.
//
//===----------------------------------------------------------------------===//

#include "Agreement.h"

#include <gtest/gtest.h>

using namespace grove::rt;

namespace {

std::vector<AgreementItem> items(const std::string &model,
                                 const std::string &ops) {
  return {runtimeItem(),
          {"the model", "", "module 'm'\n" + model, "Rebuild"},
          {"the collectives", "collective", ops, ""}};
}

TEST(Agreement, EqualItemsAgree) {
  auto a = hashItems(items("w f32[2]", "all_reduce mean tensor<2xf32>"));
  EXPECT_EQ(firstDisagreement({a, a, a}), -1);
  EXPECT_EQ(firstDisagreement({a}), -1);
}

TEST(Agreement, FirstDifferingItemWins) {
  auto a = hashItems(items("w f32[2]", "x"));
  auto b = hashItems(items("w f32[3]", "y"));
  auto c = hashItems(items("w f32[2]", "y"));
  EXPECT_EQ(firstDisagreement({a, a, b}), 2); // the model (after the format)
  EXPECT_EQ(firstDisagreement({a, c}), 3);
  // A rank with fewer items differs at the first one it lacks.
  std::vector<AgreementItem> fewer = items("w f32[2]", "x");
  fewer.pop_back();
  EXPECT_EQ(firstDisagreement({a, hashItems(fewer)}), 3);
}

TEST(Agreement, RanksDoingDifferentThingsAreToldSo) {
  std::vector<AgreementItem> call = {operationItem("a call of entry 'f'"),
                                     runtimeItem()};
  std::vector<AgreementItem> reduce = {operationItem("grove_comm_all_reduce"),
                                       {"the collective", "", "sum", ""}};
  std::vector<AgreementHashes> ranks = {hashItems(call), hashItems(reduce)};
  ASSERT_EQ(firstDisagreement(ranks), 1);
  std::string m =
      describeDisagreement(call, 1, {call[0].text, reduce[0].text}, ranks);
  EXPECT_EQ(m, "the ranks disagree on what each rank is doing: rank 0: 'a "
               "call of entry 'f''; rank 1: 'grove_comm_all_reduce'. Every "
               "rank must make the same calls, in one order");
}

TEST(Agreement, MessageGroupsRanksAndNamesTheLine) {
  std::vector<AgreementItem> mine = items("w f32[2]\nb f32[2]", "x");
  std::vector<AgreementItem> other = items("w f32[2]\nb f32[4]", "x");
  auto a = hashItems(mine), b = hashItems(other);
  std::vector<AgreementHashes> ranks = {a, b, a, b};
  std::string m = describeDisagreement(
      mine, firstDisagreement(ranks),
      {mine[1].text, other[1].text, mine[1].text, other[1].text}, ranks);
  EXPECT_EQ(m, "the ranks disagree on the model: ranks 0, 2: 'b f32[2]'; "
               "ranks 1, 3: 'b f32[4]'. Rebuild");
}

TEST(Agreement, MessageCountsCollectivesAndMissingLines) {
  std::vector<AgreementItem> mine = items("w", "r1\nr2");
  std::vector<AgreementItem> other = items("w", "r1\nr2\nr3");
  std::vector<AgreementHashes> ranks = {hashItems(mine), hashItems(other)};
  std::string m =
      describeDisagreement(mine, 3, {mine[2].text, other[2].text}, ranks);
  EXPECT_EQ(m, "the ranks disagree on the collectives at collective 3: rank "
               "0: (none); rank 1: 'r3'");
}

TEST(Agreement, AnotherFormatIsAnotherBuild) {
  std::vector<AgreementItem> mine = items("w", "x");
  AgreementHashes other = hashItems(mine);
  other[0] ^= 1;
  std::string m =
      describeDisagreement(mine, 0, {"", ""}, {hashItems(mine), other});
  EXPECT_NE(m.find("rank 0; rank 1"), std::string::npos) << m;
  EXPECT_NE(m.find("one Grove build"), std::string::npos) << m;
}

} // namespace
