//===- InputFileTest.cpp - The parser's input bounds ----------------------===//

#include "grove/Support/InputFile.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir::grove;

namespace {

std::pair<unsigned, unsigned> at(unsigned line, unsigned column) {
  return {line, column};
}

TEST(Nesting, CountsEveryBracketKind) {
  EXPECT_EQ(findExcessiveNesting("{[(<>)]}", 4), at(0, 0));
  EXPECT_EQ(findExcessiveNesting("{[(<>)]}", 3), at(1, 4));
  EXPECT_EQ(findExcessiveNesting("{}{}{}{}", 1), at(0, 0));
}

TEST(Nesting, ArrowsStringsAndCommentsDoNotCount) {
  // `->` closes nothing: the two `(` stay the only levels.
  EXPECT_EQ(findExcessiveNesting("(a) -> (b)", 1), at(0, 0));
  EXPECT_EQ(findExcessiveNesting("f(\"((((\\\"((\")", 1), at(0, 0));
  EXPECT_EQ(findExcessiveNesting("// {{{{\n{", 1), at(0, 0));
  EXPECT_EQ(findExcessiveNesting("// {{{{\n{{", 1), at(2, 2));
}

TEST(Nesting, ReportsLineAndColumn) {
  std::string deep = "module {\n" + std::string(5, '[');
  EXPECT_EQ(findExcessiveNesting(deep, 3), at(2, 3));
}

TEST(ReadModelInput, RefusesDevicesAndMissingFiles) {
  std::string error;
  bool located = true;
  EXPECT_EQ(readModelInput("/dev/zero", error, located), nullptr);
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
  EXPECT_FALSE(located);
  EXPECT_EQ(readModelInput("/nonexistent/model.mlir", error, located), nullptr);
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

} // namespace
