//===- Memory.h - Buffers of generated host code ----------------*- C++ -*-===//
//
// Generated host code allocates its buffers through MLIR's generic memref
// allocation functions (finalize-memref-to-llvm{use-generic-functions}),
// which the runtime implements (Memory.cpp) with a cache of large blocks.
// Results of a call are such buffers too, and go back through hostFree.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_RUNTIME_HOST_MEMORY_H
#define GROVE_RUNTIME_HOST_MEMORY_H

#include <cstddef>

namespace grove::rt {

/// Frees a buffer the generated code allocated (into the cache when large).
void hostFree(void *p);

/// Blocks of at least this many bytes are cached when freed.
constexpr size_t kMinCachedBytes = size_t(1) << 20;

} // namespace grove::rt

#endif // GROVE_RUNTIME_HOST_MEMORY_H
