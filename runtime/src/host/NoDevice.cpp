//===- NoDevice.cpp - libgrove_rt has no device backend -------------------===//
//
// Linked into the host-only runtime. libgrove_rt_cuda links
// runtime/src/cuda/CudaContext.cpp instead.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "Error.h"

using namespace grove::rt;

grove_status grove::rt::createDeviceContext(const ModelDesc &desc,
                                            const grove_context_options *,
                                            std::unique_ptr<DeviceContext> &) {
  return fail(GROVE_ERROR_NO_DEVICE,
              "model '" + desc.module + "' was compiled for target '" +
                  desc.target +
                  "', but this runtime (libgrove_rt) is host-only; link "
                  "libgrove_rt_cuda instead");
}
