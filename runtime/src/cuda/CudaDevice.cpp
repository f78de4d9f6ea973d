//===- CudaDevice.cpp -----------------------------------------------------===//

#include "CudaDevice.h"

#include "Error.h"

#include <vector>

using namespace grove::rt;
using namespace grove::rt::cuda;

namespace {
std::mutex registryMutex;
std::map<int, CudaDevice *> &registry() {
  // Leaked on purpose: devices stay valid for tensors freed during exit.
  static auto *devices = new std::map<int, CudaDevice *>();
  return *devices;
}
} // namespace

CudaDevice::CudaDevice(const Driver &driver, int ordinal, CUdevice device,
                       CUcontext context, std::string name)
    : driver_(driver), ordinal_(ordinal), device_(device), context_(context),
      name_(std::move(name)),
      allocator_(
          [this](size_t bytes) -> void * {
            CUdeviceptr p = 0;
            if (makeCurrent() != CUDA_SUCCESS ||
                driver_.cuMemAlloc(&p, bytes) != CUDA_SUCCESS)
              return nullptr;
            return reinterpret_cast<void *>(p);
          },
          [this](void *p) {
            makeCurrent();
            driver_.cuMemFree(reinterpret_cast<CUdeviceptr>(p));
          }) {}

CudaDevice *CudaDevice::get(int ordinal) {
  const Driver *driver = loadDriver();
  if (!driver)
    return nullptr;
  std::lock_guard<std::mutex> lock(registryMutex);
  auto &devices = registry();
  if (auto it = devices.find(ordinal); it != devices.end())
    return it->second;
  int count = 0;
  CUresult r = driver->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    fail(GROVE_ERROR_NO_DEVICE,
         "no CUDA device" +
             (r != CUDA_SUCCESS ? " (" + errorText(*driver, r) + ")"
                                : std::string(" is visible")));
    return nullptr;
  }
  if (ordinal < 0 || ordinal >= count) {
    fail(GROVE_ERROR_NO_DEVICE, "CUDA device " + std::to_string(ordinal) +
                                    " does not exist (this machine has " +
                                    std::to_string(count) + ")");
    return nullptr;
  }
  CUdevice device = 0;
  CUcontext context = nullptr;
  if ((r = driver->cuDeviceGet(&device, ordinal)) != CUDA_SUCCESS ||
      (r = driver->cuDevicePrimaryCtxRetain(&context, device)) !=
          CUDA_SUCCESS) {
    fail(statusOf(r), "cannot open CUDA device " + std::to_string(ordinal) +
                          ": " + errorText(*driver, r));
    return nullptr;
  }
  char name[256] = {0};
  driver->cuDeviceGetName(name, sizeof(name) - 1, device);
  auto *created = new CudaDevice(*driver, ordinal, device, context, name);
  devices.emplace(ordinal, created);
  return created;
}

void CudaDevice::forEach(const std::function<void(CudaDevice &)> &fn) {
  std::vector<CudaDevice *> all;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    for (auto &[ordinal, device] : registry())
      all.push_back(device);
  }
  for (CudaDevice *d : all)
    fn(*d);
}

CUresult CudaDevice::makeCurrent() const {
  return driver_.cuCtxSetCurrent(context_);
}

CUresult CudaDevice::function(const ModuleImage *image, const char *name,
                              CUfunction &out) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = std::make_pair(image, name);
  if (auto it = functions_.find(key); it != functions_.end()) {
    out = it->second;
    return CUDA_SUCCESS;
  }
  CUmodule module = nullptr;
  if (auto it = modules_.find(image); it != modules_.end()) {
    module = it->second;
  } else {
    if (CUresult r = makeCurrent(); r != CUDA_SUCCESS)
      return r;
    if (CUresult r = driver_.cuModuleLoadData(&module, image->data);
        r != CUDA_SUCCESS)
      return r;
    modules_.emplace(image, module);
  }
  if (CUresult r = driver_.cuModuleGetFunction(&out, module, name);
      r != CUDA_SUCCESS)
    return r;
  functions_.emplace(key, out);
  return CUDA_SUCCESS;
}

void CudaDevice::unload(const ModuleImage *image) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = modules_.find(image);
  if (it == modules_.end())
    return;
  // At exit the driver may already be shutting down; its error is moot.
  makeCurrent();
  driver_.cuModuleUnload(it->second);
  modules_.erase(it);
  for (auto f = functions_.begin(); f != functions_.end();)
    f = f->first.first == image ? functions_.erase(f) : std::next(f);
}
