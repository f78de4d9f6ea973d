//===- Driver.cpp - dlopen'ing libcuda ------------------------------------===//

#include "Driver.h"

#include "Error.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

using namespace grove::rt;
using namespace grove::rt::cuda;

#define GROVE_CUDA_STR2(x) #x
#define GROVE_CUDA_STR(x) GROVE_CUDA_STR2(x)

namespace {
struct Loaded {
  Driver driver;
  bool ok = false;
  grove_status status = GROVE_ERROR_NO_DEVICE;
  std::string message;
};

Loaded load(const std::string &path) {
  Loaded l;
  // Never unloaded: kernels and handles may be in use until exit.
  void *lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = ::dlerror();
    l.message = "no CUDA driver: cannot load '" + path + "' (" +
                (why ? why : "unknown reason") +
                "); install the NVIDIA driver or run where a GPU is";
    return l;
  }
#define GROVE_CUDA_LOAD(name)                                                  \
  l.driver.name = reinterpret_cast<decltype(l.driver.name)>(                   \
      ::dlsym(lib, GROVE_CUDA_STR(name)));                                     \
  if (!l.driver.name) {                                                        \
    l.message = "CUDA driver '" + path +                                       \
                "' lacks " GROVE_CUDA_STR(                                     \
                    name) "; the driver is too old for this runtime";          \
    return l;                                                                  \
  }
  GROVE_CUDA_DRIVER_FUNCTIONS(GROVE_CUDA_LOAD)
#undef GROVE_CUDA_LOAD
  CUresult r = l.driver.cuInit(0);
  if (r != CUDA_SUCCESS) {
    l.message = "CUDA driver '" + path +
                "' failed to initialise: " + errorText(l.driver, r);
    if (r == CUDA_ERROR_STUB_LIBRARY)
      l.message += " (this is the toolkit's stub library, not a driver)";
    l.status = r == CUDA_ERROR_OUT_OF_MEMORY ? GROVE_ERROR_OUT_OF_MEMORY
                                             : GROVE_ERROR_NO_DEVICE;
    return l;
  }
  l.ok = true;
  return l;
}
} // namespace

const Driver *grove::rt::cuda::loadDriver() {
  // One attempt per library path (the tests try several); kept for the
  // process's lifetime since kernels and handles refer to it.
  static std::mutex mutex;
  static auto *attempts = new std::map<std::string, Loaded>();
  const char *env = std::getenv("GROVE_CUDA_DRIVER");
  std::string path = env && *env ? env : "libcuda.so.1";
  std::lock_guard<std::mutex> lock(mutex);
  auto it = attempts->find(path);
  if (it == attempts->end())
    it = attempts->emplace(path, load(path)).first;
  const Loaded &loaded = it->second;
  if (!loaded.ok) {
    fail(loaded.status, loaded.message);
    return nullptr;
  }
  return &loaded.driver;
}

std::string grove::rt::cuda::errorText(const Driver &driver, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (driver.cuGetErrorName)
    driver.cuGetErrorName(result, &name);
  if (driver.cuGetErrorString)
    driver.cuGetErrorString(result, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    s += std::string(": ") + text;
  return s;
}

grove_status grove::rt::cuda::statusOf(CUresult result) {
  switch (result) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    return GROVE_ERROR_OUT_OF_MEMORY;
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE:
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_STUB_LIBRARY:
    return GROVE_ERROR_NO_DEVICE;
  default:
    return GROVE_ERROR_INTERNAL;
  }
}
