//===- Nccl.h - NCCL, loaded at run time ------------------------*- C++ -*-===//
//
// libgrove_rt_cuda does not link NCCL: it is loaded with dlopen on the
// first device collective ($GROVE_NCCL_LIBRARY, default "libnccl.so.2"), as
// the driver and cuDNN are. Applications whose models have no collectives
// need no NCCL, and one that cannot be loaded is a reason the device
// collectives give for running staged through host memory instead
// (DeviceCollectives.cpp). nccl.h (from the toolkit) gives the types; a
// runtime built without it has only the staged transport.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_CUDA_NCCL_H
#define GROVE_RT_CUDA_NCCL_H

#if GROVE_HAVE_NCCL
#include <nccl.h>

#include <string>

namespace grove::rt::cuda {

#define GROVE_NCCL_FUNCTIONS(X)                                                \
  X(ncclGetVersion)                                                            \
  X(ncclGetErrorString)                                                        \
  X(ncclGetLastError)                                                          \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRankConfig)                                                    \
  X(ncclCommGetAsyncError)                                                     \
  X(ncclCommAbort)                                                             \
  X(ncclCommDestroy)                                                           \
  X(ncclAllReduce)                                                             \
  X(ncclAllGather)                                                             \
  X(ncclBroadcast)

struct NcclApi {
#define GROVE_NCCL_MEMBER(name) decltype(&::name) name = nullptr;
  GROVE_NCCL_FUNCTIONS(GROVE_NCCL_MEMBER)
#undef GROVE_NCCL_MEMBER
  int version = 0;
  std::string error; // why NCCL cannot be used; empty when loaded
};

/// NCCL, loaded once per process and never unloaded. Non-blocking
/// communicators (ncclConfig_t::blocking = 0, NCCL 2.14) are needed: they
/// are what lets a missed deadline abort a communicator.
const NcclApi &nccl();

/// "ncclRemoteError: <NCCL's text> (<the communicator's last error>)".
std::string ncclText(ncclResult_t result, ncclComm_t comm = nullptr);

} // namespace grove::rt::cuda

#endif // GROVE_HAVE_NCCL
#endif // GROVE_RT_CUDA_NCCL_H
