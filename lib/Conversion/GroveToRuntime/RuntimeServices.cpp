//===- RuntimeServices.cpp - The service catalogue for the compiler -------===//
//
// Expands grove/services.def into tables; see RuntimeServices.h.
//
//===----------------------------------------------------------------------===//

#include "grove/Conversion/RuntimeServices.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::grove;

namespace {
using Kind = ServiceOperand::Kind;
using E = ServiceElement;
using V = ServiceValue;

// The operand macros of services.def as ServiceOperand initialisers.
constexpr ServiceOperand scalar(V v, const char *name) {
  return {Kind::Scalar, v, E::Any, 0, false, false, false, false, name};
}
constexpr ServiceOperand memref(E e, int rank, bool contiguous, bool reads,
                                bool writes, bool host, const char *name) {
  return {Kind::Memref, V::Void, e,      static_cast<int8_t>(rank),
          contiguous,   reads,   writes, host,
          name};
}
#define GS_VOID scalar(V::Void, "")
#define GS_I32(n) scalar(V::I32, #n)
#define GS_U32(n) scalar(V::U32, #n)
#define GS_I64(n) scalar(V::I64, #n)
#define GS_F32(n) scalar(V::F32, #n)
#define GS_PTR(T, n) scalar(V::Ptr, #n)
#define GS_IN(T, R, n) memref(E::T, R, false, true, false, false, #n)
#define GS_OUT(T, R, n) memref(E::T, R, false, false, true, false, #n)
#define GS_INOUT(T, R, n) memref(E::T, R, false, true, true, false, #n)
#define GS_VEC_IN(T, n) memref(E::T, 1, true, true, false, false, #n)
#define GS_VEC_OUT(T, n) memref(E::T, 1, true, false, true, false, #n)
#define GS_VEC_INOUT(T, n) memref(E::T, 1, true, true, true, false, #n)
#define GS_HOST_OUT(T, R, n) memref(E::T, R, false, false, true, true, #n)
#define GROVE_UNPAREN(...) __VA_ARGS__

// One operand array per service (a service without operands gets none).
#define GROVE_SERVICE(Id, Family, Elem, name, Result, Args)                    \
  constexpr ServiceOperand k##Id##Operands[] = {GROVE_UNPAREN Args};
#define GROVE_MEMREF_SERVICE GROVE_SERVICE
#include "grove/services.def"

constexpr ServiceElement ANY = E::Any;
constexpr ServiceElement f32 = E::f32, f64 = E::f64, f16 = E::f16,
                         bf16 = E::bf16, i1 = E::i1, i32 = E::i32, i64 = E::i64;
constexpr ServiceValue VOID = V::Void, I1 = V::I1, I32 = V::I32, I64 = V::I64,
                       F32 = V::F32, F64 = V::F64;

/// The operands of a row, without the placeholder of GS_VOID.
template <size_t N>
ArrayRef<ServiceOperand> operandsOf(const ServiceOperand (&ops)[N]) {
  if (N == 1 && ops[0].kind == Kind::Scalar && ops[0].scalar == V::Void)
    return {};
  return ArrayRef<ServiceOperand>(ops, N);
}

const ServiceInfo kServices[] = {
#define GROVE_SERVICE(Id, Family, Elem, name, Result, Args)                    \
  {Service::Id, ServiceFamily::Family,      Elem, "grove_rt_" #name, false,    \
   Result,      operandsOf(k##Id##Operands)},
#define GROVE_MEMREF_SERVICE(Id, Family, Elem, name, Result, Args)             \
  {Service::Id, ServiceFamily::Family,      Elem, "grove_rt_" #name, true,     \
   Result,      operandsOf(k##Id##Operands)},
#include "grove/services.def"
};

constexpr ServiceLibrary HOST = ServiceLibrary::Host,
                         CUDA = ServiceLibrary::Cuda;
constexpr ServiceFailure NONE = ServiceFailure::None,
                         RECORDS = ServiceFailure::Records,
                         ABANDONS = ServiceFailure::Abandons;

/// A family's twin column: NO_TWIN or a family, one apart from its
/// ServiceFamily.
enum class TwinColumn : uint8_t {
  NO_TWIN,
#define GROVE_FAMILY(Family, Library, Failure, Twin) Family,
#include "grove/services.def"
};
constexpr std::optional<ServiceFamily> twinOf(TwinColumn twin) {
  if (twin == TwinColumn::NO_TWIN)
    return std::nullopt;
  return static_cast<ServiceFamily>(static_cast<unsigned>(twin) - 1);
}

const ServiceFamilyInfo kFamilies[] = {
#define GROVE_FAMILY(Family, Library, Failure, Twin)                           \
  {#Family, Library, Failure, twinOf(TwinColumn::Twin)},
#include "grove/services.def"
};
} // namespace

const ServiceInfo &mlir::grove::getServiceInfo(Service service) {
  return kServices[static_cast<unsigned>(service)];
}

const ServiceFamilyInfo &mlir::grove::getFamilyInfo(ServiceFamily family) {
  return kFamilies[static_cast<unsigned>(family)];
}

ArrayRef<ServiceInfo> mlir::grove::getAllServices() { return kServices; }

Type mlir::grove::getServiceElementType(MLIRContext *ctx,
                                        ServiceElement element) {
  Builder b(ctx);
  switch (element) {
  case E::Any:
    return {};
  case E::f32:
    return b.getF32Type();
  case E::f64:
    return b.getF64Type();
  case E::f16:
    return b.getF16Type();
  case E::bf16:
    return b.getBF16Type();
  case E::i1:
    return b.getI1Type();
  case E::i32:
    return b.getI32Type();
  case E::i64:
    return b.getI64Type();
  }
  llvm_unreachable("unknown service element");
}

std::optional<Service> mlir::grove::lookupService(ServiceFamily family,
                                                  Type element) {
  for (const ServiceInfo &s : kServices) {
    if (s.family != family)
      continue;
    if (element
            ? getServiceElementType(element.getContext(), s.element) == element
            : s.element == E::Any)
      return s.id;
  }
  return std::nullopt;
}

std::optional<Service> mlir::grove::lookupService(StringRef symbol) {
  for (const ServiceInfo &s : kServices)
    if (s.symbol == symbol)
      return s.id;
  return std::nullopt;
}

std::optional<Service> mlir::grove::getCudaTwin(Service service) {
  const ServiceInfo &s = getServiceInfo(service);
  std::optional<ServiceFamily> twin = getFamilyInfo(s.family).twin;
  if (!twin)
    return std::nullopt;
  for (const ServiceInfo &t : kServices)
    if (t.family == *twin && t.element == s.element)
      return t.id;
  return std::nullopt;
}

MemRefType mlir::grove::getServiceMemRefType(MLIRContext *ctx,
                                             const ServiceOperand &op) {
  assert(op.kind == Kind::Memref && "not a memref operand");
  SmallVector<int64_t> shape(op.rank, ShapedType::kDynamic);
  SmallVector<int64_t> strides(op.rank, ShapedType::kDynamic);
  if (op.contiguous)
    strides.back() = 1;
  return MemRefType::get(
      shape, getServiceElementType(ctx, op.element),
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides));
}

/// A scalar kind as an MLIR type (null for Void); pointers are !llvm.ptr.
static Type getScalarType(MLIRContext *ctx, ServiceValue v) {
  Builder b(ctx);
  switch (v) {
  case V::Void:
    return {};
  case V::I1:
    return b.getI1Type();
  case V::I32:
  case V::U32:
    return b.getI32Type();
  case V::I64:
    return b.getI64Type();
  case V::F32:
    return b.getF32Type();
  case V::F64:
    return b.getF64Type();
  case V::Ptr:
    return LLVM::LLVMPointerType::get(ctx);
  }
  llvm_unreachable("unknown service value");
}

static SmallVector<Type> getOperandTypes(MLIRContext *ctx,
                                         const ServiceInfo &s) {
  SmallVector<Type> types;
  for (const ServiceOperand &op : s.operands)
    types.push_back(op.kind == Kind::Memref ? getServiceMemRefType(ctx, op)
                                            : getScalarType(ctx, op.scalar));
  return types;
}

FunctionType mlir::grove::getServiceFunctionType(MLIRContext *ctx,
                                                 Service service) {
  const ServiceInfo &s = getServiceInfo(service);
  SmallVector<Type> results;
  if (Type r = getScalarType(ctx, s.result))
    results.push_back(r);
  return FunctionType::get(ctx, getOperandTypes(ctx, s), results);
}

LLVM::LLVMFunctionType
mlir::grove::getServiceLLVMFunctionType(MLIRContext *ctx, Service service) {
  const ServiceInfo &s = getServiceInfo(service);
  assert(!s.memrefInterface && "memref services are declared as func.func");
  Type result = getScalarType(ctx, s.result);
  return LLVM::LLVMFunctionType::get(
      result ? result : LLVM::LLVMVoidType::get(ctx), getOperandTypes(ctx, s));
}

/// The declaration of `name` with `type`, added at the end of `module` when
/// absent; a symbol of that name with another type or kind is an error.
template <typename FnOp, typename FnType>
static FailureOr<FnOp> getOrDeclare(ModuleOp module, StringRef name,
                                    FnType type, bool memrefInterface) {
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
    // Memref descriptors by pointer (`_mlir_ciface_<name>`, grove/abi.h),
    // not a dozen scalars per memref.
    if (memrefInterface)
      fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  }
  return fn;
}

FailureOr<func::FuncOp> mlir::grove::declareService(ModuleOp module,
                                                    Service service) {
  const ServiceInfo &s = getServiceInfo(service);
  return getOrDeclare<func::FuncOp>(
      module, s.symbol, getServiceFunctionType(module.getContext(), service),
      s.memrefInterface);
}

FailureOr<LLVM::LLVMFuncOp> mlir::grove::declareServiceLLVM(ModuleOp module,
                                                            Service service) {
  const ServiceInfo &s = getServiceInfo(service);
  return getOrDeclare<LLVM::LLVMFuncOp>(
      module, s.symbol,
      getServiceLLVMFunctionType(module.getContext(), service),
      /*memrefInterface=*/false);
}

Value mlir::grove::castToServiceOperand(OpBuilder &b, Location loc,
                                        Service service, unsigned index,
                                        Value value) {
  const ServiceOperand &op = getServiceInfo(service).operands[index];
  if (op.kind != Kind::Memref)
    return value;
  MemRefType type = getServiceMemRefType(b.getContext(), op);
  if (value.getType() == type ||
      !memref::CastOp::areCastCompatible(value.getType(), type))
    return value;
  return memref::CastOp::create(b, loc, type, value);
}

FailureOr<func::CallOp>
mlir::grove::createServiceCall(OpBuilder &b, Location loc, Operation *within,
                               Service service, ValueRange operands) {
  auto module = isa<ModuleOp>(within) ? cast<ModuleOp>(within)
                                      : within->getParentOfType<ModuleOp>();
  FailureOr<func::FuncOp> fn = declareService(module, service);
  if (failed(fn))
    return failure();
  FunctionType type = fn->getFunctionType();
  assert(type.getNumInputs() == operands.size() &&
         "operand count differs from the catalogue's");
  SmallVector<Value> args;
  for (auto [i, v, t] : llvm::enumerate(operands, type.getInputs())) {
    v = castToServiceOperand(b, loc, service, i, v);
    if (v.getType() != t)
      return emitError(loc, "operand of type ")
             << v.getType() << " for " << getServiceInfo(service).symbol
             << ", which takes " << t;
    args.push_back(v);
  }
  return func::CallOp::create(b, loc, *fn, args);
}

LLVM::GlobalOp mlir::grove::createCStringGlobal(OpBuilder &b, Location loc,
                                                StringRef name,
                                                StringRef value) {
  std::string data = value.str();
  data.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), data.size());
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                LLVM::Linkage::Internal, name,
                                b.getStringAttr(data));
}
