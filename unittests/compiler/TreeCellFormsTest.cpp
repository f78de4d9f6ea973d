//===- TreeCellFormsTest.cpp - Tree cell forms and row-wise ops -----------===//
//
// Each tree cell form (TreeCellForm.h) answers what the verifiers, the VJP
// and grove-batch-dynamic-trees ask of it; a fold's form follows from its
// arity and edge region; and the ops a cell may compute with are exactly
// those that declare RowWiseOpInterface.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveDialect.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"
#include "grove/Dialect/Grove/IR/TreeFold.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace mlir;
using namespace mlir::grove;

namespace {

constexpr TreeCellFormKind kKinds[] = {
    TreeCellFormKind::ChildSum, TreeCellFormKind::NAry, TreeCellFormKind::Edge};

TEST(TreeCellForms, OneFormAKindInEnumOrder) {
  ASSERT_EQ(getTreeCellForms().size(), std::size(kKinds));
  std::set<std::string> names;
  for (auto [i, kind] : llvm::enumerate(kKinds)) {
    const TreeCellForm &form = getTreeCellForm(kind);
    EXPECT_EQ(form.getKind(), kind);
    EXPECT_EQ(getTreeCellForms()[i], &form);
    EXPECT_TRUE(names.insert(form.getName().str()).second);
  }
  EXPECT_EQ(getTreeCellForm(TreeCellFormKind::ChildSum).getName(), "child-sum");
  EXPECT_EQ(getTreeCellForm(TreeCellFormKind::NAry).getName(), "N-ary");
  EXPECT_EQ(getTreeCellForm(TreeCellFormKind::Edge).getName(), "edge");
}

TEST(TreeCellForms, FormFromArityAndEdgeRegion) {
  EXPECT_EQ(getTreeCellFormKind(0, false), TreeCellFormKind::ChildSum);
  EXPECT_EQ(getTreeCellFormKind(0, true), TreeCellFormKind::Edge);
  EXPECT_EQ(getTreeCellFormKind(2, false), TreeCellFormKind::NAry);
  // The N-ary form's verifier refuses these.
  EXPECT_EQ(getTreeCellFormKind(2, true), TreeCellFormKind::NAry);
  EXPECT_EQ(getTreeCellFormKind(-1, false), TreeCellFormKind::NAry);
}

TEST(TreeCellForms, EdgeCellsAndEdgesPerNode) {
  const TreeCellForm &childSum = getTreeCellForm(TreeCellFormKind::ChildSum);
  const TreeCellForm &nary = getTreeCellForm(TreeCellFormKind::NAry);
  const TreeCellForm &edge = getTreeCellForm(TreeCellFormKind::Edge);
  EXPECT_FALSE(childSum.hasEdgeCell());
  EXPECT_FALSE(nary.hasEdgeCell());
  EXPECT_TRUE(edge.hasEdgeCell());
  EXPECT_TRUE(childSum.sumsChildren());
  EXPECT_TRUE(edge.sumsChildren());
  EXPECT_FALSE(nary.sumsChildren());
  // A leaf's child sums and missing slots are zeros: its group is peeled.
  for (const TreeCellForm *form : getTreeCellForms())
    EXPECT_TRUE(form->givesLeavesZeros()) << form->getName().str();
  // The schedule: one edge a child (any number), or K slots a node.
  EXPECT_EQ(childSum.getEdgesPerNode(0), 0);
  EXPECT_EQ(edge.getEdgesPerNode(0), 0);
  EXPECT_EQ(nary.getEdgesPerNode(2), 2);
  EXPECT_EQ(nary.getEdgesPerNode(5), 5);
}

TEST(TreeCellForms, NodeCellChildArguments) {
  MLIRContext ctx;
  Builder b(&ctx);
  Type h = RankedTensorType::get({ShapedType::kDynamic, 4}, b.getF32Type());
  Type c = RankedTensorType::get({ShapedType::kDynamic, 8}, b.getF32Type());
  Type m = RankedTensorType::get({ShapedType::kDynamic, 2}, b.getF32Type());
  TreeCellTypes t;
  t.states = {h, c};
  t.messages = {m};
  t.arity = 3;
  auto childTypes = [&](TreeCellFormKind kind) {
    t.form = &getTreeCellForm(kind);
    return t.getNodeChildTypes();
  };
  EXPECT_EQ(childTypes(TreeCellFormKind::ChildSum), (SmallVector<Type>{h, c}));
  EXPECT_EQ(childTypes(TreeCellFormKind::Edge), (SmallVector<Type>{m}));
  // Slot by slot, state by state within a slot.
  EXPECT_EQ(childTypes(TreeCellFormKind::NAry),
            (SmallVector<Type>{h, c, h, c, h, c}));
}

TEST(TreeCellForms, ParsedFoldsKnowTheirForm) {
  MLIRContext ctx;
  ctx.loadDialect<GroveDialect, func::FuncDialect>();
  const char *src = R"mlir(
    func.func @f(%o: tensor<?xi32>, %x: tensor<?x4xf32>) {
      %a, %ar = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
          : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
        node {
        ^bb0(%i: tensor<?x4xf32>, %s: tensor<?x4xf32>):
          %r = grove.add %i, %s : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
          grove.yield %r : tensor<?x4xf32>
        }
      %b, %br = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 2 : i64}
          : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
        node {
        ^bb0(%i: tensor<?x4xf32>, %l: tensor<?x4xf32>, %r: tensor<?x4xf32>):
          %s = grove.add %l, %r : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
          grove.yield %s : tensor<?x4xf32>
        }
      %c, %cr = grove.tree_fold %o, %o, %o inputs(%x : tensor<?x4xf32>) {arity = 0 : i64}
          : (tensor<?xi32>, tensor<?xi32>, tensor<?xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
        edge {
        ^bb0(%p: tensor<?x4xf32>, %s: tensor<?x4xf32>):
          %m = grove.mul %p, %s : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
          grove.yield %m : tensor<?x4xf32>
        } node {
        ^bb0(%i: tensor<?x4xf32>, %m: tensor<?x4xf32>):
          grove.yield %m : tensor<?x4xf32>
        }
      return
    })mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(src, &ctx);
  ASSERT_TRUE(module);
  SmallVector<TreeCellFormKind> kinds;
  module->walk([&](TreeFoldOp fold) {
    kinds.push_back(fold.getFormKind());
    EXPECT_EQ(&fold.getForm(), &getTreeCellForm(fold.getFormKind()));
  });
  EXPECT_EQ(kinds, (SmallVector<TreeCellFormKind>{TreeCellFormKind::ChildSum,
                                                  TreeCellFormKind::NAry,
                                                  TreeCellFormKind::Edge}));
}

// The ops a tree cell may compute on its rows with: the elementwise ones
// (the interface's default rule) and those with a rule of their own
// (GroveRowWise.cpp). An op added to or dropped from the set fails here.
TEST(RowWiseOps, ExactlyTheDeclaredOps) {
  MLIRContext ctx;
  ctx.loadDialect<GroveDialect>();
  const std::set<std::string> expected = {
      // elementwise, broadcasting
      "grove.add", "grove.sub", "grove.mul", "grove.div", "grove.max",
      "grove.min", "grove.select",
      // elementwise, one operand
      "grove.relu", "grove.sigmoid", "grove.tanh", "grove.exp", "grove.log",
      "grove.sqrt", "grove.gelu", "grove.gelu_tanh", "grove.erf", "grove.sin",
      "grove.cos", "grove.floor", "grove.step", "grove.all_reduce",
      "grove.broadcast",
      // along other axes than the rows
      "grove.reverse", "grove.softmax", "grove.log_softmax", "grove.reduce_sum",
      "grove.reduce_mean", "grove.reduce_max", "grove.transpose",
      "grove.reshape", "grove.broadcast_to", "grove.layer_norm",
      // whole rows
      "grove.concat", "grove.slice",
      // rows by weights, one sample a row
      "grove.matmul", "grove.flatten", "grove.one_hot", "grove.global_avg_pool",
      "grove.max_pool2d", "grove.avg_pool2d", "grove.conv2d",
      "grove.batch_norm"};
  std::set<std::string> declared;
  for (RegisteredOperationName name : ctx.getRegisteredOperations())
    if (name.getDialectNamespace() == "grove" &&
        name.hasInterface<RowWiseOpInterface>())
      declared.insert(name.getStringRef().str());
  EXPECT_EQ(declared, expected);
}

} // namespace
