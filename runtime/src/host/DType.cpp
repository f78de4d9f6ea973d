//===- DType.cpp - Element types known to the runtime ---------------------===//

#include "DType.h"

namespace grove::rt {
namespace {

struct DTypeInfo {
  const char *descriptor;  // nullptr: no descriptor spelling
  const char *safetensors; // nullptr: no safetensors spelling
  DLDataType type;
};

constexpr DTypeInfo kTypes[] = {
    {"f32", "F32", {kDLFloat, 32, 1}},
    {"f16", "F16", {kDLFloat, 16, 1}},
    {"bf16", "BF16", {kDLBfloat, 16, 1}},
    {"f64", "F64", {kDLFloat, 64, 1}},
    {"i8", "I8", {kDLInt, 8, 1}},
    {"i16", "I16", {kDLInt, 16, 1}},
    {"i32", "I32", {kDLInt, 32, 1}},
    {"i64", "I64", {kDLInt, 64, 1}},
    {"i1", "BOOL", {GROVE_DL_BOOL, 8, 1}},
    // Safetensors files may hold U8; no model param can have that type, so
    // such a tensor is reported as a dtype mismatch rather than as garbage.
    {nullptr, "U8", {kDLUInt, 8, 1}},
};

} // namespace

bool dtypeFromSafetensors(std::string_view name, DLDataType &out) {
  for (const DTypeInfo &info : kTypes) {
    if (info.safetensors && name == info.safetensors) {
      out = info.type;
      return true;
    }
  }
  return false;
}

const char *dtypeToSafetensors(DLDataType type) {
  for (const DTypeInfo &info : kTypes)
    if (sameDType(info.type, type))
      return info.safetensors;
  return nullptr;
}

std::string dtypeName(DLDataType type) {
  for (const DTypeInfo &info : kTypes)
    if (sameDType(info.type, type))
      return info.descriptor ? info.descriptor : "u8";
  return "code=" + std::to_string(type.code) +
         " bits=" + std::to_string(type.bits) +
         " lanes=" + std::to_string(type.lanes);
}

} // namespace grove::rt
