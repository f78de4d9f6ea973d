//===- GroveAttrs.h - The model descriptor as attributes --------*- C++ -*-===//
//
// The dialect's enums and attributes (GroveAttrs.td): the descriptor,
// typed, as grove-prepare-abi records it and grove-emit-entry-points
// serializes it.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEATTRS_H
#define GROVE_DIALECT_GROVE_IR_GROVEATTRS_H

#include "grove/Dialect/Grove/IR/GroveDialect.h"
#include "grove/ModelSchema.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "grove/Dialect/Grove/IR/GroveEnums.h"

#include "grove/Dialect/Grove/IR/GroveAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "grove/Dialect/Grove/IR/GroveOpsAttrs.h.inc"

namespace mlir::grove {
/// The DLPack type of an element type that can cross the ABI (f32, f16,
/// bf16, f64, i1, i8, i16, i32, i64), and back.
std::optional<DLDataType> toDLDataType(Type type);
Type fromDLDataType(MLIRContext *ctx, DLDataType type);

/// The precondition attribute of a descriptor's precondition.
PreconditionAttrInterface
preconditionToAttr(MLIRContext *ctx, const ::grove::schema::Precondition &p);
} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_IR_GROVEATTRS_H
