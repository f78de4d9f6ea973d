//===- CudaDevice.cpp -----------------------------------------------------===//

#include "CudaDevice.h"

#include "Error.h"

#include <atomic>
#include <cstdlib>
#include <vector>

using namespace grove::rt;
using namespace grove::rt::cuda;

namespace {
std::atomic<bool> processExiting{false};
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
            Scope scope(*this);
            CUdeviceptr p = 0;
            if (scope.result() != CUDA_SUCCESS ||
                driver_.cuMemAlloc(&p, bytes) != CUDA_SUCCESS)
              return nullptr;
            return reinterpret_cast<void *>(p);
          },
          [this](void *p) {
            Scope scope(*this);
            driver_.cuMemFree(reinterpret_cast<CUdeviceptr>(p));
          }) {}

CudaDevice::Scope::Scope(const CudaDevice &device) : driver_(device.driver_) {
  if (driver_.cuCtxGetCurrent(&previous_) == CUDA_SUCCESS)
    restore_ = previous_ != device.context_;
  result_ = restore_ || !previous_ ? device.makeCurrent() : CUDA_SUCCESS;
}

CudaDevice::Scope::~Scope() {
  if (restore_)
    driver_.cuCtxSetCurrent(previous_);
}

bool CudaDevice::exiting() { return processExiting.load(); }

CudaDevice *CudaDevice::get(int ordinal, grove_status &status) {
  status = GROVE_ERROR_NO_DEVICE;
  const Driver *driver = loadDriver();
  if (!driver)
    return nullptr;
  // Registered after the model libraries' constructors ran, so it runs
  // before their destructors unload modules.
  static const bool atExit = [] {
    std::atexit([] { processExiting.store(true); });
    return true;
  }();
  (void)atExit;
  std::lock_guard<std::mutex> lock(registryMutex);
  auto &devices = registry();
  if (auto it = devices.find(ordinal); it != devices.end())
    return it->second;
  int count = 0;
  CUresult r = driver->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    fail(GROVE_ERROR_NO_DEVICE,
         "no CUDA device" + (r != CUDA_SUCCESS
                                 ? " (" + errorText(*driver, r) + ")"
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
    status = statusOf(r) == GROVE_ERROR_OUT_OF_MEMORY
                 ? GROVE_ERROR_OUT_OF_MEMORY
                 : GROVE_ERROR_NO_DEVICE;
    fail(status, "cannot open CUDA device " + std::to_string(ordinal) + ": " +
                     errorText(*driver, r));
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
    Scope scope(*this);
    if (scope.result() != CUDA_SUCCESS)
      return scope.result();
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
  // At exit the driver may already be gone: leave the module to it.
  if (!exiting()) {
    Scope scope(*this);
    driver_.cuModuleUnload(it->second);
  }
  modules_.erase(it);
  for (auto f = functions_.begin(); f != functions_.end();)
    f = f->first.first == image ? functions_.erase(f) : std::next(f);
}
