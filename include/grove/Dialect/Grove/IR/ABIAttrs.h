//===- ABIAttrs.h - The attributes the grove dialect declares ---*- C++ -*-===//
//
// Discardable attributes in the grove namespace, verified by the dialect
// (GroveDialect.cpp): argument and result roles at the ABI, and what
// grove-prepare-abi records at tensor level for grove-emit-entry-points,
// which reads it after lowering to LLVM (so it survives every pass between).
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_ABIATTRS_H
#define GROVE_DIALECT_GROVE_IR_ABIATTRS_H

namespace mlir::grove {
/// Argument/result: a user-chosen name for the ABI (default argN / outN).
inline constexpr char kArgNameAttr[] = "grove.name";
/// Argument: the grove.param (a symbol) whose buffer the context passes.
inline constexpr char kStateArgAttr[] = "grove.state";
/// Argument with grove.state: the function writes that state in place.
inline constexpr char kWritesAttr[] = "grove.writes";
/// Integer argument: every value lies in [0, N) (i64 N >= 1), checked by the
/// runtime before the entry runs (labels, indices).
inline constexpr char kBelowAttr[] = "grove.below";
/// Argument: the child offsets of a forest the runtime validates before
/// the entry runs, as [children argument, roots argument, arity] (i64
/// array; arity 0: any number of children). Set by
/// grove-batch-dynamic-trees; docs/trees.md.
inline constexpr char kForestAttr[] = "grove.forest";
/// Argument: one row per node of the forest whose offsets are argument N
/// (i64): its dimension 0 is that argument's minus one.
inline constexpr char kForestNodesAttr[] = "grove.forest_nodes";
/// Function: how grove-insert-collectives made its optimizers
/// data-parallel (its options as a pipeline string); grove-prepare-abi
/// moves it into the entry's #grove.abi_collectives.
inline constexpr char kCollectivesConfigAttr[] = "grove.collectives";
/// Module: the model descriptor, typed (#grove.abi_model, GroveAttrs.td),
/// from grove-prepare-abi until grove-emit-entry-points writes it.
inline constexpr char kModelAttr[] = "grove.abi.model";
/// Module: the C name of the library (`<module>_<function>`).
inline constexpr char kModuleNameAttr[] = "grove.abi.module";
/// Function: index of the entry point in the descriptor.
inline constexpr char kEntryIndexAttr[] = "grove.abi.entry";
/// Function: the entry point's name as the user wrote it.
inline constexpr char kEntryNameAttr[] = "grove.abi.name";
/// Function: how many of its arguments are the caller's inputs (the rest
/// are state).
inline constexpr char kEntryInputsAttr[] = "grove.abi.inputs";
/// Entry function: another function of the module calls it, so its inputs
/// do not all come through the runtime's checks (unit).
inline constexpr char kEntryCalledAttr[] = "grove.abi.called";
/// Entry function: dynamic input sizes its code assumes equal, as
/// quadruples (input, dim, earlier input, its dim) of input indices, found
/// while lowering; grove-emit-entry-points adds them to the descriptor as
/// #grove.equal_dim preconditions the runtime checks before the call.
inline constexpr char kEqualDimsAttr[] = "grove.abi.equal_dims";
/// Function: an outlined parallel loop body and its work per iteration
/// (lib/Codegen/LLVMCPU).
inline constexpr char kParallelBodyAttr[] = "grove.parallel_body";
/// A mixed-precision policy on a function or module (#grove.autocast).
inline constexpr char kAutocastAttr[] = "grove.autocast";
/// Marks a grove.set_param of a dynamic loss scale: the one state write a
/// skipped step makes besides the skip counters (grove-autocast).
inline constexpr char kLossScaleUpdateAttr[] = "grove.loss_scale_update";
/// Range function: the arguments (memref-level indices) whose buffers no
/// other argument reaches while it runs, and its memref-level signature, to
/// find their pointers once memrefs are exploded into descriptors
/// (lib/Codegen/LLVMCPU/NoAliasCaptures.cpp).
inline constexpr char kNoAliasArgsAttr[] = "grove.noalias_args";
inline constexpr char kMemRefSignatureAttr[] = "grove.memref_signature";
} // namespace mlir::grove

#endif // GROVE_DIALECT_GROVE_IR_ABIATTRS_H
