//===- ReverseSweep.h - Reverse mode over straight-line grove ops -*- C++
//-*-===//
//
// The core of reverse-mode differentiation, shared by grove-autodiff (a
// grove.value_and_grad's body) and grove.tree_fold's VJP (its cells): each
// op's VJPOpInterface builds its operands' cotangents from its results',
// op by op in reverse, and a value used twice sums its cotangents.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_DIALECT_GROVE_IR_REVERSESWEEP_H
#define GROVE_DIALECT_GROVE_IR_REVERSESWEEP_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::grove {

class ReverseSweep {
public:
  /// Diagnostics get a note at `noteLoc` saying `note`.
  ReverseSweep(OpBuilder &b, Location noteLoc, StringRef note)
      : b(b), noteLoc(noteLoc), note(note.str()) {}

  /// Marks `v` as depending on what is differentiated.
  void markActive(Value v) { active.insert(v); }
  bool isActive(Value v) const { return active.contains(v); }
  /// Extends activity through `forward` (straight-line ops, program order):
  /// the results of an op with an active operand are active.
  void propagateActivity(ArrayRef<Operation *> forward);

  /// Adds `cotangent` to that of `forward`.
  void accumulate(Value forward, Value cotangent);
  /// The cotangent of `v` (null when nothing reached it).
  Value getCotangent(Value v) const { return cotangents.lookup(v); }

  /// Builds, at the builder's insertion point, the cotangents of every
  /// active value of `forward` from those accumulated so far (the seeds),
  /// visiting the ops in reverse. Fails (a located error) at an active op
  /// on the way that has no VJP.
  LogicalResult run(ArrayRef<Operation *> forward);

private:
  LogicalResult propagate(Operation *fwd);

  OpBuilder &b;
  Location noteLoc;
  std::string note;
  llvm::DenseSet<Value> active;
  llvm::DenseMap<Value, Value> cotangents;
};

} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_IR_REVERSESWEEP_H
