//===- HostLoops.h - Shared by the host loop passes -------------*- C++ -*-===//
//
// What grove-outline-parallel-loops, grove-host-loop-hints and
// grove-dispatch-parallel-calls agree on: the marker of range functions, what
// counts as a loop's constant trip count, what counts as a view, and which
// captures may be marked noalias.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_LIB_CONVERSION_HOSTLOOPS_HOSTLOOPS_H
#define GROVE_LIB_CONVERSION_HOSTLOOPS_HOSTLOOPS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/MathExtras.h"

#include "grove/Dialect/Grove/IR/ABIAttrs.h"

#include <algorithm>
#include <optional>

namespace mlir::grove {

/// Iterations of a loop over [lb, ub) by step, when all three are constants
/// and the step is positive.
inline std::optional<int64_t> constantTripCount(Value lb, Value ub,
                                                Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb);
  std::optional<int64_t> u = getConstantIntValue(ub);
  std::optional<int64_t> s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  return static_cast<int64_t>(
      llvm::divideCeil(std::max<int64_t>(*u - *l, 0), *s));
}

/// The memref `op` views without copying (a subview, reshape, cast or
/// transpose), or null when `op` is not such a view.
inline Value getViewedMemRef(Operation *op) {
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource();
  // memref.transpose is a view, but not a ViewLikeOpInterface.
  if (auto transpose = dyn_cast<memref::TransposeOp>(op))
    return transpose.getIn();
  return nullptr;
}

/// The buffer `memref` views, through every view (getViewedMemRef) as far
/// as its function shows.
inline Value getViewRoot(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    Value source = getViewedMemRef(def);
    if (!source)
      break;
    memref = source;
  }
  return memref;
}

/// The arguments of range function `body`, `captures` in the caller from
/// index `firstCapture` on, that LLVM may take as noalias: memrefs that no
/// other capture may overlap unless neither is written in `body`. Buffers
/// count as distinct when they come (through views) from different
/// allocations or globals, or from different state arguments of an entry
/// function; an entry's inputs may overlap each other and its state. None
/// when `body` calls out, frees, writes memory it cannot trace to a capture
/// or to its own allocation, or captures an unranked memref or a pointer.
SmallVector<int64_t> getNoAliasCaptures(func::FuncOp body, ValueRange captures,
                                        unsigned firstCapture);

} // namespace mlir::grove

#endif // GROVE_LIB_CONVERSION_HOSTLOOPS_HOSTLOOPS_H
