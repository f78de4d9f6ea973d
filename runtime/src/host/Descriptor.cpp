//===- Descriptor.cpp - The model descriptor in the runtime ---------------===//

#include "Descriptor.h"

#include "Error.h"

namespace grove::rt {

grove_status parseDescriptor(const char *text, ModelDesc &out) {
  if (!text)
    return fail(GROVE_ERROR_INVALID_ARGUMENT, "model descriptor is NULL");
  schema::ParseResult r = schema::parseModelDescriptor(text, out);
  if (!r)
    return GROVE_OK;
  if (r.status == schema::ParseStatus::VersionMismatch)
    return fail(GROVE_ERROR_ABI_MISMATCH, r.message);
  std::string where = r.where.empty() ? "" : " at " + r.where;
  return fail(GROVE_ERROR_INVALID_ARGUMENT,
              "model descriptor" + where + ": " + r.message);
}

} // namespace grove::rt
