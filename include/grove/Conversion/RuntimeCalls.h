//===- RuntimeCalls.h - Declaring runtime services in a module --*- C++ -*-===//
//
// Generated code calls libgrove_rt's services (runtime/include/grove/abi.h)
// through private func.func declarations; every conversion that emits such a
// call gets its declaration here, so a clash is diagnosed the same way.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_CONVERSION_RUNTIMECALLS_H
#define GROVE_CONVERSION_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <type_traits>

namespace mlir::grove {

/// The declaration of runtime service `name` with `type`, added at the end
/// of `module` when absent: a private func.func, or in the LLVM dialect an
/// external llvm.func. Fails, with a diagnostic, when a symbol of that name
/// exists with another type or kind.
template <typename FnOp, typename FnType>
FailureOr<FnOp> getOrDeclareRuntimeFunction(ModuleOp module, StringRef name,
                                            FnType type) {
  if (Operation *existing = module.lookupSymbol(name)) {
    auto fn = dyn_cast<FnOp>(existing);
    if (fn && fn.getFunctionType() == type)
      return fn;
    existing->emitError("symbol @")
        << name << " is reserved for the runtime service of type " << type;
    return failure();
  }
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = FnOp::create(b, module.getLoc(), name, type);
  if constexpr (std::is_same_v<FnOp, func::FuncOp>) {
    fn.setPrivate();
    // Services that take tensors receive memref descriptors by pointer
    // (`_mlir_ciface_<name>`, grove/abi.h), not a dozen scalars per memref.
    if (llvm::any_of(type.getInputs(), llvm::IsaPred<MemRefType>))
      fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  }
  return fn;
}

inline FailureOr<func::FuncOp> getOrDeclareRuntimeFunction(ModuleOp module,
                                                           StringRef name,
                                                           FunctionType type) {
  return getOrDeclareRuntimeFunction<func::FuncOp>(module, name, type);
}

inline FailureOr<LLVM::LLVMFuncOp>
getOrDeclareRuntimeFunction(ModuleOp module, StringRef name,
                            LLVM::LLVMFunctionType type) {
  return getOrDeclareRuntimeFunction<LLVM::LLVMFuncOp>(module, name, type);
}

/// The tree schedule service (grove/abi.h), emitted by the bufferization
/// of grove.tree_schedule, and its CUDA twin, which takes the group table
/// (operand kTreeScheduleGroupsOperand) in host memory and every other
/// memref in device memory (grove-memref-to-gpu).
constexpr StringLiteral kTreeScheduleService = "grove_rt_tree_schedule";
constexpr StringLiteral kCudaTreeScheduleService =
    "grove_rt_cuda_tree_schedule";
constexpr unsigned kTreeScheduleGroupsOperand = 7;

/// The world of the current call (abi.h): its size and this rank, each an
/// i64 from a call without arguments. The collectives' services are
/// `grove_rt_{all_reduce,all_gather,broadcast}_<element type>`.
constexpr StringLiteral kWorldSizeService = "grove_rt_world_size";
constexpr StringLiteral kWorldRankService = "grove_rt_world_rank";

/// Whether the current call has failed so far (abi.h): an i32, nonzero
/// once a check or a service has reported a failure.
constexpr StringLiteral kCallFailedService = "grove_rt_call_failed";

/// An internal constant global holding `value` NUL-terminated, the form in
/// which generated code hands strings (descriptors, messages) to the runtime.
inline LLVM::GlobalOp createCStringGlobal(OpBuilder &b, Location loc,
                                          StringRef name, StringRef value) {
  std::string data = value.str();
  data.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                LLVM::Linkage::Internal, name,
                                b.getStringAttr(data));
}

} // namespace mlir::grove

#endif // GROVE_CONVERSION_RUNTIMECALLS_H
