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
#include <memory>

namespace grove::rt {

/// Frees a buffer the generated code allocated (into the cache when large).
void hostFree(void *p);

/// Runs generated code `fn(args)` (for CurrentCall::run) so that an
/// allocation it cannot get abandons the call instead of handing it a NULL
/// buffer to write through: the blocks the call allocated so far are freed,
/// the call has failed with GROVE_ERROR_OUT_OF_MEMORY, and this returns
/// false. Only allocations on the calling thread outside parallel regions
/// can abandon it (the lowering makes none elsewhere); one elsewhere is
/// reported and returns NULL.
bool runAbandonable(void (*fn)(void **), void **args);

/// Leaves the call runAbandonable runs on this thread at once (the longjmp
/// behind CurrentCall::abandon, which records the failure first). Returns
/// only where no call can be abandoned (no call, or inside a parallel
/// region). Nothing with a destructor may be live in the caller's frame.
void abandonCall();

/// Brackets the calling thread's part of a parallel region, where a call
/// must not be abandoned (grove_rt_parallel_for).
void enterParallelRegion();
void leaveParallelRegion();

/// Frees blocks of allocateScratch.
struct ScratchDeleter {
  void operator()(void *p) const { hostFree(p); }
};
using Scratch = std::unique_ptr<unsigned char, ScratchDeleter>;

/// A 64-byte aligned block for a service's scratch within a call, from the
/// same caches as generated code's buffers (so a large one is not mapped
/// and faulted in again on every call); null when out of memory. Unlike
/// generated code's, it is not the call's to free when the call is
/// abandoned: the Scratch frees it.
Scratch allocateScratch(size_t bytes);

/// Blocks of at least this many bytes are cached when freed.
constexpr size_t kMinCachedBytes = size_t(1) << 20;

} // namespace grove::rt

#endif // GROVE_RUNTIME_HOST_MEMORY_H
