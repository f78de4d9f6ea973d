//===- Services.cpp - The current call ------------------------------------===//

#include "Services.h"

namespace grove::rt {
namespace {
thread_local const CurrentCall *tlsCall = nullptr;
} // namespace

const CurrentCall *currentCall() { return tlsCall; }

CallScope::CallScope(grove_context &ctx, uint32_t entry)
    : call{&ctx, entry}, outer(tlsCall) {
  tlsCall = &call;
}

CallScope::~CallScope() { tlsCall = outer; }

} // namespace grove::rt
