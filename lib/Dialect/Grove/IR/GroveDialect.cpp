//===- GroveDialect.cpp - Grove dialect registration ----------------------===//

#include "grove/Dialect/Grove/IR/GroveDialect.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"

using namespace mlir;
using namespace mlir::grove;

#include "grove/Dialect/Grove/IR/GroveOpsDialect.cpp.inc"

void GroveDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "grove/Dialect/Grove/IR/GroveOps.cpp.inc"
      >();
}

Operation *GroveDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
