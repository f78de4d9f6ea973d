//===- GroveDialect.h - Grove dialect ---------------------------*- C++ -*-===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEDIALECT_H
#define GROVE_DIALECT_GROVE_IR_GROVEDIALECT_H

#include "mlir/IR/Dialect.h"

#include "grove/Dialect/Grove/IR/GroveOpsDialect.h.inc"

#endif // GROVE_DIALECT_GROVE_IR_GROVEDIALECT_H
