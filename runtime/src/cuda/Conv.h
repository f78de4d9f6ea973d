//===- Conv.h - The cuDNN convolution service of a CUDA context -*- C++ -*-===//
//
// One per CudaContext, made on the context's first convolution (creating a
// cuDNN handle loads cuDNN's kernels, which takes a moment): the handle on
// the context's stream and, per convolution shape, the descriptors and the
// algorithm cuDNN's heuristics chose.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_CUDA_CONV_H
#define GROVE_RT_CUDA_CONV_H

#include <memory>
#include <string>

namespace grove::rt::cuda {

class CudaContext;

class ConvService {
public:
  /// The service on `ctx`'s stream; null with `why` set when cuDNN cannot
  /// be used (a runtime built without it, or no handle).
  static std::unique_ptr<ConvService> create(CudaContext &ctx,
                                             std::string &why);
  ~ConvService();

  struct Impl;
  Impl &impl() { return *impl_; }

private:
  explicit ConvService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace grove::rt::cuda

#endif // GROVE_RT_CUDA_CONV_H
