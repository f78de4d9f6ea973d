//===- DType.cpp - Element types known to the runtime ---------------------===//

#include "DType.h"

#include "grove/ModelSchema.h"

namespace grove::rt {
namespace {

struct DTypeInfo {
  const char *safetensors;
  DLDataType type;
};

constexpr DTypeInfo kTypes[] = {
    {"F32", {kDLFloat, 32, 1}},
    {"F16", {kDLFloat, 16, 1}},
    {"BF16", {kDLBfloat, 16, 1}},
    {"F64", {kDLFloat, 64, 1}},
    {"I8", {kDLInt, 8, 1}},
    {"I16", {kDLInt, 16, 1}},
    {"I32", {kDLInt, 32, 1}},
    {"I64", {kDLInt, 64, 1}},
    {"BOOL", {GROVE_DL_BOOL, 8, 1}},
    // Safetensors files may hold U8; no model param can have that type, so
    // such a tensor is reported as a dtype mismatch rather than as garbage.
    {"U8", {kDLUInt, 8, 1}},
};

} // namespace

bool dtypeFromSafetensors(std::string_view name, DLDataType &out) {
  for (const DTypeInfo &info : kTypes) {
    if (name == info.safetensors) {
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
  if (const char *token = schema::dtypeToken(type))
    return token;
  if (sameDType(type, DLDataType{kDLUInt, 8, 1}))
    return "u8";
  return "code=" + std::to_string(type.code) +
         " bits=" + std::to_string(type.bits) +
         " lanes=" + std::to_string(type.lanes);
}

} // namespace grove::rt
