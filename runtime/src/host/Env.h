//===- Env.h - Settings the runtime reads from the environment --*- C++ -*-===//
//
// The runtime's tunables (GROVE_HOST_CACHE_MB, GROVE_CONV_CACHE_SHAPES) are
// environment variables holding decimal counts; a value that is not one is
// ignored, so the default applies.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_RUNTIME_HOST_ENV_H
#define GROVE_RUNTIME_HOST_ENV_H

#include <cstdlib>
#include <optional>

namespace grove::rt {

/// The unsigned decimal number the environment variable `name` holds, or
/// nothing where it is unset, empty or anything else.
inline std::optional<unsigned long long> unsignedFromEnv(const char *name) {
  const char *env = std::getenv(name);
  if (!env || !*env)
    return std::nullopt;
  char *end = nullptr;
  unsigned long long value = std::strtoull(env, &end, 10);
  if (!end || *end != '\0')
    return std::nullopt;
  return value;
}

} // namespace grove::rt

#endif // GROVE_RUNTIME_HOST_ENV_H
