//===- Services.h - A context's services and the current call ---*- C++ -*-===//
//
// Runtime services that generated code calls (the GEMM and convolution
// services today; a communicator, a tree scheduler, tracing next) find the
// context they serve through the current call, and what that context owns
// for them through its registry: the host counterpart of the CUDA runtime's
// current-call context (src/cuda/CudaContext.h).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_SERVICES_H
#define GROVE_RT_SERVICES_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

struct grove_context;

namespace grove::rt {

/// Something a context owns for a service: state that lives as long as the
/// context (a communicator's connections, a scheduler's queues). Keyed by
/// the address of a per-kind tag.
class Service {
public:
  virtual ~Service() = default;
};

/// The services of one context. Services are added while the context is
/// set up (before calls run on it) and live until it is destroyed; lookups
/// during calls need no lock.
class ServiceRegistry {
public:
  /// The service added under `key`, or null.
  Service *find(const void *key) const {
    for (const auto &[k, service] : services)
      if (k == key)
        return service.get();
    return nullptr;
  }
  /// Adds `service` under `key`, replacing any before it.
  void add(const void *key, std::unique_ptr<Service> service) {
    for (auto &[k, s] : services)
      if (k == key) {
        s = std::move(service);
        return;
      }
    services.emplace_back(key, std::move(service));
  }

private:
  std::vector<std::pair<const void *, std::unique_ptr<Service>>> services;
};

/// The call of generated code running on this thread.
struct CurrentCall {
  grove_context *ctx = nullptr;
  uint32_t entry = 0;
};

/// The current call on this thread; null outside calls (and on the worker
/// threads of a parallel loop, which run no services of their own).
const CurrentCall *currentCall();

/// Makes (ctx, entry) the current call for its lifetime; nests.
class CallScope {
public:
  CallScope(grove_context &ctx, uint32_t entry);
  ~CallScope();
  CallScope(const CallScope &) = delete;
  CallScope &operator=(const CallScope &) = delete;

private:
  CurrentCall call;
  const CurrentCall *outer;
};

/// How many collectives this thread started and has not waited for; and
/// waiting for and dropping those started after `mark`: a call abandoned
/// between a start and its wait leaves them (collectives/Collectives.cpp).
/// Nothing then runs for the call.
size_t startedCollectives();
void dropStartedCollectives(size_t mark);

} // namespace grove::rt

#endif // GROVE_RT_SERVICES_H
