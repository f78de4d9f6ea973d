//===- GroveEnums.h - The grove dialect's enums -----------------*- C++ -*-===//
//
// Included by GroveOps.h and GroveAttrs.h (the generated declarations have
// no guard of their own).
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEENUMS_H
#define GROVE_DIALECT_GROVE_IR_GROVEENUMS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "grove/Dialect/Grove/IR/GroveEnums.h.inc"

#endif // GROVE_DIALECT_GROVE_IR_GROVEENUMS_H
