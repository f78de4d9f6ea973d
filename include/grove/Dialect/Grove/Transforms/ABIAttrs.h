//===- ABIAttrs.h - Attribute names shared by the ABI passes ----*- C++ -*-===//
//
// grove-prepare-abi writes these at tensor level; grove-emit-entry-points
// reads them after lowering to LLVM, so they must survive every pass between.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_TRANSFORMS_ABIATTRS_H
#define GROVE_DIALECT_GROVE_TRANSFORMS_ABIATTRS_H

namespace mlir::grove {
/// Module: the textual model descriptor (docs/abi.md).
inline constexpr char kDescriptorAttr[] = "grove.abi.descriptor";
/// Module: the C name of the library (`<module>_<function>`).
inline constexpr char kModuleNameAttr[] = "grove.abi.module";
/// Module: the number of leading param arguments of every function.
inline constexpr char kNumParamsAttr[] = "grove.abi.num_params";
/// Function: index of the entry point in the descriptor.
inline constexpr char kEntryIndexAttr[] = "grove.abi.entry";
/// Function: the entry point's name as the user wrote it.
inline constexpr char kEntryNameAttr[] = "grove.abi.name";
/// Argument/result: a user-chosen name for the ABI (default argN / outN).
inline constexpr char kArgNameAttr[] = "grove.name";
/// Argument: the param a leading argument stands for.
inline constexpr char kParamArgAttr[] = "grove.param";
} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_TRANSFORMS_ABIATTRS_H
