//===- Context.h - A loaded model library and its context -------*- C++ -*-===//
//
// grove._core.Context: one grove_context over a model library opened with
// dlopen. Inputs arrive as nanobind ndarrays (any DLPack or buffer-protocol
// object, no copy when compact), outputs leave as ndarrays that own the
// runtime's DLManagedTensor (no copy either), and every failed status is a
// grove.GroveError carrying the runtime's message.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_PYTHON_CONTEXT_H
#define GROVE_PYTHON_CONTEXT_H

#include "grove/runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace grove::python {

namespace nb = nanobind;

/// A failed runtime status; translated to grove.GroveError (with `status`).
struct StatusError : std::runtime_error {
  StatusError(grove_status status, const std::string &message)
      : std::runtime_error(message), status(status) {}
  grove_status status;
};

/// Throws StatusError for a failed `status`, with the runtime's message.
void check(grove_status status, const char *what);

/// What outputs are returned as.
enum class Framework { Numpy, Torch, Jax, DLPack };

class Context {
public:
  /// Opens `library` and creates a context for its `<name>_model`;
  /// outputs in `framework` ("numpy", "torch", "jax" or "dlpack").
  Context(const std::string &library, const std::string &name,
          const std::string &framework);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  /// Calls entry `index` on `inputs` (array-likes); its one output, or a
  /// tuple of them, in the context's framework. The GIL is released
  /// meanwhile.
  nb::object invoke(uint32_t index, nb::args inputs);

  /// Signatures: [(name, [(input, dtype, shape)], [(output, ...)])].
  nb::list entries() const;
  /// [(name, dtype, shape, kind)] in declaration order; kind "weight" or
  /// "state".
  nb::list params() const;
  /// access[entry][param]: 0 unused, 1 read, 2 written.
  nb::list access() const;

  /// A copy of param `name`'s value.
  nb::object getWeight(const std::string &name);
  void setWeight(const std::string &name, nb::object value);
  void loadWeights(const std::string &path);
  void saveWeights(const std::string &path) const;
  bool weightsReady() const;

  /// The data pointers the last call passed in and got back: what tests
  /// compare with the arrays' own to show nothing was copied.
  nb::tuple lastCallPointers() const;

private:
  nb::object wrap(DLManagedTensor *tensor) const;

  void *handle = nullptr;
  grove_context *ctx = nullptr;
  Framework framework;
  std::vector<uintptr_t> lastInputs, lastOutputs;
};

} // namespace grove::python

#endif // GROVE_PYTHON_CONTEXT_H
