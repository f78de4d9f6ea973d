//===- Utils.h - Helpers shared by the linalg transforms --------*- C++ -*-===//

#ifndef GROVE_LIB_DIALECT_LINALG_TRANSFORMS_UTILS_H
#define GROVE_LIB_DIALECT_LINALG_TRANSFORMS_UTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::grove {

/// Whether every loop of `op` is a reduction and every result a scalar (a
/// norm, a loss's sum): grove-fuse-elementwise recomputes into such ops,
/// grove-split-full-reductions splits them.
bool isFullReduction(linalg::LinalgOp op);

} // namespace mlir::grove

#endif // GROVE_LIB_DIALECT_LINALG_TRANSFORMS_UTILS_H
