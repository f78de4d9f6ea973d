//===- Utils.cpp - Helpers shared by the linalg transforms ----------------===//

#include "Utils.h"

using namespace mlir;

bool mlir::grove::isFullReduction(linalg::LinalgOp op) {
  return op.getNumLoops() > 0 &&
         op.getNumReductionLoops() == op.getNumLoops() &&
         llvm::all_of(op.getDpsInits(), [](Value init) {
           return cast<ShapedType>(init.getType()).getRank() == 0;
         });
}
