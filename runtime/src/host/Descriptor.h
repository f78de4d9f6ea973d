//===- Descriptor.h - The model descriptor in the runtime -------*- C++ -*-===//
//
// The descriptor's one definition is grove/ModelSchema.h (shared with the
// compiler); this header brings its types into the runtime's namespace and
// turns its parse errors into grove_status failures.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_DESCRIPTOR_H
#define GROVE_RT_DESCRIPTOR_H

#include "grove/runtime.h"

#include "grove/ModelSchema.h"

namespace grove::rt {

using schema::Access;
using schema::ArgDesc;
using schema::BoundPrecondition;
using schema::EntryDesc;
using schema::EqualDimPrecondition;
using schema::ForestNodesPrecondition;
using schema::ForestPrecondition;
using schema::kDescriptorVersion;
using schema::kMaxRank;
using schema::ModelDesc;
using schema::Precondition;
using schema::StateDesc;
using schema::StateKind;
using schema::TensorDesc;

/// Parses `text`. On failure returns a status (INVALID_ARGUMENT, or
/// ABI_MISMATCH for an unsupported descriptor version) with the message
/// recorded via fail(); `out` is then unspecified.
grove_status parseDescriptor(const char *text, ModelDesc &out);

} // namespace grove::rt

#endif // GROVE_RT_DESCRIPTOR_H
