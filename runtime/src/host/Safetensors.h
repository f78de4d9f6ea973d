//===- Safetensors.h - safetensors header parsing and writing --*- C++ -*-===//
//
// Pure format logic, no I/O: validates a header against the rules in
// docs/abi.md before any tensor byte is touched, and builds headers for
// saving. Reading and writing files lives in WeightsIO.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_SAFETENSORS_H
#define GROVE_RT_SAFETENSORS_H

#include "Descriptor.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace grove::rt {

/// Largest accepted JSON header; same bound as the reference implementation.
constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

struct StTensor {
  std::string name;
  std::string dtypeName; // as spelled in the file, e.g. "F32"
  DLDataType dtype{};
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0; // relative to the start of the data section
};

/// Validates the JSON header (`header`, exactly the N header bytes) for a
/// file whose data section is `dataSize` bytes. Failures return
/// GROVE_ERROR_BAD_WEIGHTS with a message prefixed by `origin`.
grove_status parseSafetensorsHeader(std::string_view header, uint64_t dataSize,
                                    const std::string &origin,
                                    std::vector<StTensor> &tensors);

/// Marks a param `tensors` does not hold in matchParams' result.
constexpr size_t kNotInFile = static_cast<size_t>(-1);

/// Checks that `tensors` hold every weight of `params`, may hold its
/// initialised state and nothing else, with matching dtypes and shapes, and
/// fills `tensorOfParam[i]` with the index in `tensors` of params[i]
/// (kNotInFile for initialised state the file omits).
grove_status matchParams(const std::vector<StateDesc> &params,
                         const std::vector<StTensor> &tensors,
                         const std::string &origin,
                         std::vector<size_t> &tensorOfParam);

/// Builds a complete safetensors prefix (8-byte length + JSON header padded
/// with spaces to a multiple of 8) for `params` stored back to back in
/// declaration order. `metadata` holds key/value string pairs.
grove_status buildSafetensorsHeader(
    const std::vector<StateDesc> &params,
    const std::vector<std::pair<std::string, std::string>> &metadata,
    std::string &prefix);

} // namespace grove::rt

#endif // GROVE_RT_SAFETENSORS_H
