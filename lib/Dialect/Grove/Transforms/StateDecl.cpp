//===- StateDecl.cpp - Declaring initialised state in a pass
//---------------===//

#include "grove/Dialect/Grove/Transforms/StateDecl.h"

#include "grove/Dialect/Grove/IR/GroveOps.h"

using namespace mlir;
using namespace mlir::grove;

LogicalResult mlir::grove::declareState(ModuleOp module, Operation *user,
                                        StringRef name, RankedTensorType type,
                                        double init) {
  if (auto existing = module.lookupSymbol<ParamOp>(name)) {
    if (existing.getTensorType() != type)
      return user->emitOpError("needs state @")
             << name << " of type " << type << ", declared as "
             << existing.getTensorType();
    return success();
  }
  if (module.lookupSymbol(name))
    return user->emitOpError("needs state @")
           << name << ", a name the module uses for something else";
  // After the last declared param, so the descriptor lists state after the
  // weights it belongs to.
  OpBuilder b(module.getContext());
  ParamOp last;
  for (ParamOp p : module.getOps<ParamOp>())
    last = p;
  if (last)
    b.setInsertionPointAfter(last);
  else
    b.setInsertionPointToStart(module.getBody());
  Type element = type.getElementType();
  TypedAttr value =
      isa<FloatType>(element)
          ? TypedAttr(b.getFloatAttr(element, init))
          : TypedAttr(b.getIntegerAttr(element, static_cast<int64_t>(init)));
  ParamOp::create(b, user->getLoc(), name, type, value);
  return success();
}
