//===- DType.h - Element types known to the runtime -------------*- C++ -*-===//
//
// Safetensors' spelling of an element type (`F32`) against DLPack's
// {code, bits, lanes}; messages use the descriptor's (`f32`,
// grove/ModelSchema.h).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_DTYPE_H
#define GROVE_RT_DTYPE_H

#include "grove/runtime.h"

#include "grove/ModelSchema.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace grove::rt {

/// Safetensors spelling to DLPack type; false if unknown.
bool dtypeFromSafetensors(std::string_view name, DLDataType &out);
/// DLPack type to safetensors spelling; nullptr if it has none.
const char *dtypeToSafetensors(DLDataType type);

/// Human-readable spelling for messages: the descriptor name when there is
/// one (`f32`), else `code=C bits=B lanes=L`.
std::string dtypeName(DLDataType type);

inline bool sameDType(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/// Bytes per element; all supported types are whole bytes with one lane.
using schema::elementBytes;

} // namespace grove::rt

#endif // GROVE_RT_DTYPE_H
