//===- RuntimeServices.h - The compiler's view of the runtime ---*- C++ -*-===//
//
// Generated code calls libgrove_rt's services through private func.func (or
// llvm.func) declarations. Every service is a row of grove/services.def;
// this header turns the rows into C++ (what a service takes, where its
// memory lives, its CUDA twin) and is the one way an emitter declares and
// calls a service, so the call matches abi.h's prototype by construction.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_CONVERSION_RUNTIMESERVICES_H
#define GROVE_CONVERSION_RUNTIMESERVICES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace mlir::grove {

/// Services that differ only in their element type (services.def's
/// GROVE_FAMILY rows).
enum class ServiceFamily : uint8_t {
#define GROVE_FAMILY(Family, Library, Failure, Twin) Family,
#include "grove/services.def"
};

/// One runtime service (a GROVE_SERVICE or GROVE_MEMREF_SERVICE row).
enum class Service : uint16_t {
#define GROVE_SERVICE(Id, ...) Id,
#define GROVE_MEMREF_SERVICE(Id, ...) Id,
#include "grove/services.def"
};

/// Which runtime library defines a family: HOST services are in both.
enum class ServiceLibrary : uint8_t { Host, Cuda };
/// How a failure reaches the caller (services.def).
enum class ServiceFailure : uint8_t { None, Records, Abandons };
/// Element types of memref operands and of families.
enum class ServiceElement : uint8_t { Any, f32, f64, f16, bf16, i1, i32, i64 };
/// Scalar kinds of operands and results; Void only as a result.
enum class ServiceValue : uint8_t { Void, I1, I32, U32, I64, F32, F64, Ptr };

/// One operand of a service.
struct ServiceOperand {
  enum class Kind : uint8_t { Scalar, Memref };
  Kind kind;
  ServiceValue scalar;    // Scalar: its kind.
  ServiceElement element; // Memref: its element type.
  int8_t rank;            // Memref: its rank.
  bool contiguous;        // Memref: rank 1, unit stride.
  bool reads, writes;     // Memref: what the service does with it.
  bool hostMemory;        // Memref: host memory even in a CUDA model.
  const char *name;
};

struct ServiceFamilyInfo {
  const char *name;
  ServiceLibrary library;
  ServiceFailure failure;
  std::optional<ServiceFamily> twin;
};

struct ServiceInfo {
  Service id;
  ServiceFamily family;
  ServiceElement element;
  /// The symbol generated code calls: grove_rt_<name>.
  StringRef symbol;
  /// Whether it takes memrefs (called through `_mlir_ciface_<symbol>`).
  bool memrefInterface;
  ServiceValue result;
  ArrayRef<ServiceOperand> operands;
};

const ServiceInfo &getServiceInfo(Service service);
const ServiceFamilyInfo &getFamilyInfo(ServiceFamily family);
/// Every row, in the catalogue's order.
ArrayRef<ServiceInfo> getAllServices();

/// The member of `family` for `element`'s type (Any for a family of one),
/// or nothing when the runtime has none.
std::optional<Service> lookupService(ServiceFamily family, Type element = {});
/// The service whose symbol is `symbol`, or nothing.
std::optional<Service> lookupService(StringRef symbol);
/// The service that replaces `service` in a CUDA model, or nothing.
std::optional<Service> getCudaTwin(Service service);

/// The MLIR type of an element (null for Any) and of a memref operand.
Type getServiceElementType(MLIRContext *ctx, ServiceElement element);
MemRefType getServiceMemRefType(MLIRContext *ctx, const ServiceOperand &op);

/// The service's type for a func.func declaration, and for an llvm.func
/// one (services without memrefs, called from the LLVM dialect).
FunctionType getServiceFunctionType(MLIRContext *ctx, Service service);
LLVM::LLVMFunctionType getServiceLLVMFunctionType(MLIRContext *ctx,
                                                  Service service);

/// The declaration of `service` in `module`, added when absent. Fails, with
/// a diagnostic, when a symbol of that name exists with another type.
FailureOr<func::FuncOp> declareService(ModuleOp module, Service service);
FailureOr<LLVM::LLVMFuncOp> declareServiceLLVM(ModuleOp module,
                                               Service service);

/// `value` as operand `index` of `service`: a memref cast to the service's
/// layout, anything else as it is.
Value castToServiceOperand(OpBuilder &b, Location loc, Service service,
                           unsigned index, Value value);

/// A call of `service` with `operands`, declared in the enclosing module as
/// needed; memref operands are cast to the service's layout.
FailureOr<func::CallOp> createServiceCall(OpBuilder &b, Location loc,
                                          Operation *within, Service service,
                                          ValueRange operands);

/// An internal constant global holding `value` NUL-terminated, the form in
/// which generated code hands strings (descriptors, messages) to the runtime.
LLVM::GlobalOp createCStringGlobal(OpBuilder &b, Location loc, StringRef name,
                                   StringRef value);

} // namespace mlir::grove

#endif // GROVE_CONVERSION_RUNTIMESERVICES_H
