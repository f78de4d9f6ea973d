//===- RuntimeServicesTest.cpp - The catalogue against the runtime -------===//
//
// Every row of grove/services.def must be a symbol of the runtime libraries
// that define it, and the type the compiler declares it with must agree
// with the C prototype abi.h expands from the same row: the same scalars
// (width and signedness), and memrefs of the same rank, element width and
// direction (a const descriptor is never written). f16 and bf16 are both
// 16-bit words in C, so this cannot tell them apart. The runtime's
// definitions are held to the prototypes by the C++ compiler instead.
//
//===----------------------------------------------------------------------===//

#include "grove/Conversion/RuntimeServices.h"
#include "grove/abi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <string>
#include <type_traits>
#include <vector>

using namespace mlir;
using namespace mlir::grove;

namespace {

/// Whether `M` is one of abi.h's memref descriptors (complete, with an
/// `aligned` pointer).
template <typename M, typename = void> struct IsMemref : std::false_type {};
template <typename M>
struct IsMemref<M, std::void_t<decltype(sizeof(M)), decltype(&M::aligned)>>
    : std::true_type {};

/// One C parameter or result as the compiler must see it: "i32", "f32",
/// "ptr", "void", or "memref:<rank>:<float|int><bits>:<in|out>".
template <typename T> std::string describeC() {
  if constexpr (std::is_void_v<T>)
    return "void";
  else if constexpr (std::is_same_v<T, bool>)
    return "i1";
  else if constexpr (std::is_integral_v<T>)
    return (std::is_unsigned_v<T> ? "u" : "i") + std::to_string(8 * sizeof(T));
  else if constexpr (std::is_floating_point_v<T>)
    return "f" + std::to_string(8 * sizeof(T));
  else if constexpr (std::is_pointer_v<T>) {
    using P = std::remove_pointer_t<T>;
    using M = std::remove_const_t<P>;
    if constexpr (IsMemref<M>::value) {
      using E = std::remove_pointer_t<decltype(M::aligned)>;
      // allocated, aligned, offset, then sizes[R] and strides[R].
      size_t rank = (sizeof(M) - 3 * sizeof(int64_t)) / (2 * sizeof(int64_t));
      std::string element =
          std::is_same_v<E, bool>
              ? "i1"
              : std::string(std::is_floating_point_v<E> ? "float" : "int") +
                    std::to_string(8 * sizeof(E));
      // 16-bit words carry f16 and bf16.
      if (std::is_same_v<E, uint16_t>)
        element = "float16";
      return "memref:" + std::to_string(rank) + ":" + element + ":" +
             (std::is_const_v<P> ? "in" : "out");
    } else {
      return "ptr";
    }
  }
  return "?";
}

template <typename R, typename... Args>
std::vector<std::string> describePrototype(R (*)(Args...)) {
  return {describeC<R>(), describeC<Args>()...};
}

/// The same description from the compiler's declaration.
std::string describeMlir(Type t, const ServiceOperand *operand) {
  if (!t)
    return "void";
  if (isa<LLVM::LLVMPointerType>(t))
    return "ptr";
  if (auto m = dyn_cast<MemRefType>(t)) {
    Type e = m.getElementType();
    std::string element =
        e.isInteger(1) ? "i1"
                       : std::string(isa<FloatType>(e) ? "float" : "int") +
                             std::to_string(e.getIntOrFloatBitWidth());
    return "memref:" + std::to_string(m.getRank()) + ":" + element + ":" +
           (operand && operand->writes ? "out" : "in");
  }
  if (t.isInteger(1))
    return "i1";
  if (operand && operand->scalar == ServiceValue::U32)
    return "u32";
  if (t.isInteger())
    return "i" + std::to_string(t.getIntOrFloatBitWidth());
  return "f" + std::to_string(t.getIntOrFloatBitWidth());
}

struct Prototype {
  Service service;
  std::vector<std::string> c;
};

const Prototype kPrototypes[] = {
#define GROVE_SERVICE(Id, Family, Elem, name, Result, Args)                    \
  {Service::Id,                                                                \
   describePrototype(static_cast<decltype(&grove_rt_##name)>(nullptr))},
#define GROVE_MEMREF_SERVICE(Id, Family, Elem, name, Result, Args)             \
  {Service::Id,                                                                \
   describePrototype(                                                          \
       static_cast<decltype(&_mlir_ciface_grove_rt_##name)>(nullptr))},
#include "grove/services.def"
};

TEST(RuntimeServices, CompilerTypesMatchThePrototypes) {
  MLIRContext ctx;
  ctx.loadDialect<LLVM::LLVMDialect, memref::MemRefDialect>();
  ASSERT_EQ(std::size(kPrototypes), getAllServices().size());
  for (const Prototype &p : kPrototypes) {
    const ServiceInfo &info = getServiceInfo(p.service);
    FunctionType type = getServiceFunctionType(&ctx, p.service);
    std::vector<std::string> mlir = {describeMlir(
        type.getNumResults() ? type.getResult(0) : Type(), nullptr)};
    for (auto [i, t] : llvm::enumerate(type.getInputs()))
      mlir.push_back(describeMlir(t, &info.operands[i]));
    // The prototype's results carry no direction.
    EXPECT_EQ(mlir, p.c) << info.symbol.str();
    EXPECT_EQ(info.memrefInterface,
              llvm::any_of(type.getInputs(), llvm::IsaPred<MemRefType>))
        << info.symbol.str();
  }
}

TEST(RuntimeServices, LookupAndTwins) {
  MLIRContext ctx;
  Builder b(&ctx);
  EXPECT_EQ(lookupService(ServiceFamily::AllReduce, b.getBF16Type()),
            Service::AllReducebf16);
  EXPECT_EQ(lookupService(ServiceFamily::AllReduce, b.getI64Type()),
            std::nullopt);
  EXPECT_EQ(lookupService(ServiceFamily::WorldSize), Service::WorldSize);
  EXPECT_EQ(lookupService("grove_rt_top_k_f64"), Service::TopKf64);
  EXPECT_EQ(lookupService("grove_rt_nothing"), std::nullopt);
  EXPECT_EQ(getCudaTwin(Service::CollectiveWaitf16),
            Service::CudaCollectiveWaitf16);
  EXPECT_EQ(getCudaTwin(Service::TopKf32), std::nullopt);
  // Twins live in the CUDA runtime and have none of their own.
  for (const ServiceInfo &s : getAllServices())
    if (std::optional<Service> twin = getCudaTwin(s.id)) {
      const ServiceInfo &t = getServiceInfo(*twin);
      EXPECT_EQ(getFamilyInfo(t.family).library, ServiceLibrary::Cuda);
      EXPECT_EQ(getCudaTwin(*twin), std::nullopt);
      EXPECT_EQ(t.operands.size(), s.operands.size()) << t.symbol.str();
    }
}

/// Every row's symbol in `library`, for the rows it must define.
void expectSymbols(const char *library, bool cuda) {
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  for (const ServiceInfo &s : getAllServices()) {
    bool defined =
        cuda || getFamilyInfo(s.family).library == ServiceLibrary::Host;
    if (!defined)
      continue;
    std::string symbol =
        (s.memrefInterface ? "_mlir_ciface_" : "") + s.symbol.str();
    EXPECT_NE(dlsym(handle, symbol.c_str()), nullptr)
        << symbol << " is not exported by " << library;
  }
  dlclose(handle);
}

TEST(RuntimeServices, HostRuntimeExportsEveryHostService) {
  expectSymbols(GROVE_TEST_RT_LIBRARY, /*cuda=*/false);
}

TEST(RuntimeServices, CudaRuntimeExportsEveryService) {
#ifdef GROVE_TEST_RT_CUDA_LIBRARY
  expectSymbols(GROVE_TEST_RT_CUDA_LIBRARY, /*cuda=*/true);
#else
  GTEST_SKIP() << "SKIPPED: no CUDA toolkit, so libgrove_rt_cuda is not built";
#endif
}

} // namespace
