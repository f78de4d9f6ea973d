//===- DifferentiabilityTest.cpp - every grove op is accounted for --------===//
//
// grove-autodiff differentiates an op through its VJPOpInterface; an op
// that cannot be differentiated says so with the NotDifferentiable trait.
// A new op with neither fails here, and the ops whose VJPs are still to
// come are listed by name, so the list shrinks as they land.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveDialect.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace mlir;
using namespace mlir::grove;

namespace {

TEST(Differentiability, EveryOpHasAVJPOrIsDeclaredNotDifferentiable) {
  MLIRContext ctx;
  ctx.loadDialect<GroveDialect>();
  std::set<std::string> missing;
  int differentiable = 0, declared = 0;
  for (RegisteredOperationName name : ctx.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "grove")
      continue;
    bool vjp = name.hasInterface<VJPOpInterface>();
    bool none = name.hasTrait<NotDifferentiable>();
    EXPECT_FALSE(vjp && none)
        << name.getStringRef().str() << " has a VJP and is NotDifferentiable";
    differentiable += vjp;
    declared += none;
    if (!vjp && !none)
      missing.insert(name.getStringRef().str());
  }
  EXPECT_TRUE(missing.empty()) << *missing.begin() << " is neither";
  EXPECT_GT(differentiable, 30);
  EXPECT_GT(declared, 8);
}

} // namespace
