//===- Services.h - A context's services and the current call ---*- C++ -*-===//
//
// Runtime services that generated code calls (the GEMM and convolution
// services, the communicator, a tree scheduler) find the context they serve
// through the current call (CurrentCall.h, for host and CUDA contexts), and
// what that context owns for them through its registry. What a service
// keeps for one call only is the call's (CurrentCall::state).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_SERVICES_H
#define GROVE_RT_SERVICES_H

#include "CurrentCall.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

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

} // namespace grove::rt

#endif // GROVE_RT_SERVICES_H
