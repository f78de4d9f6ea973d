//===- Nccl.cpp - Loading NCCL --------------------------------------------===//

#include "Nccl.h"

#if GROVE_HAVE_NCCL
#include <cstdlib>
#include <dlfcn.h>

using namespace grove::rt::cuda;

namespace {
// ncclConfig_t's `blocking` and ncclCommGetAsyncError's in-progress state.
constexpr int kMinimumVersion = 21400;
} // namespace

const NcclApi &grove::rt::cuda::nccl() {
  static const NcclApi api = [] {
    NcclApi a;
    const char *env = std::getenv("GROVE_NCCL_LIBRARY");
    std::string path = env && *env ? env : "libnccl.so.2";
    void *lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = ::dlerror();
      a.error = "cannot load NCCL '" + path + "' (" +
                (why ? why : "unknown reason") +
                "; GROVE_NCCL_LIBRARY names another)";
      return a;
    }
#define GROVE_NCCL_LOAD(name)                                                  \
  a.name = reinterpret_cast<decltype(a.name)>(::dlsym(lib, #name));            \
  if (!a.name) {                                                               \
    a.error = "NCCL '" + path + "' lacks " #name;                              \
    return a;                                                                  \
  }
    GROVE_NCCL_FUNCTIONS(GROVE_NCCL_LOAD)
#undef GROVE_NCCL_LOAD
    if (a.ncclGetVersion(&a.version) != ncclSuccess ||
        a.version < kMinimumVersion)
      a.error = "NCCL '" + path + "' is version " + std::to_string(a.version) +
                "; 2.14 or later is needed (non-blocking communicators)";
    return a;
  }();
  return api;
}

std::string grove::rt::cuda::ncclText(ncclResult_t result, ncclComm_t comm) {
  const NcclApi &api = nccl();
  std::string text = api.ncclGetErrorString
                         ? api.ncclGetErrorString(result)
                         : "NCCL error " + std::to_string(int(result));
  if (comm && api.ncclGetLastError) {
    const char *last = api.ncclGetLastError(comm);
    if (last && *last)
      text += std::string(" (") + last + ")";
  }
  return text;
}
#endif // GROVE_HAVE_NCCL
