/*===- grove/abi.h - Contract between grovec output and libgrove_rt -------===*
 *
 * Generated code includes nothing; it is compiled against this layout. Any
 * change to a struct or a service bumps GROVE_ABI_VERSION, and the runtime
 * refuses models built for another version. Applications use
 * grove/runtime.h instead.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GROVE_ABI_H
#define GROVE_ABI_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped with every change to a struct here or a row of grove/services.def;
 * the runtime does not build until the catalogue's fingerprint is recorded
 * for the new version (runtime/src/host/Catalogue.cpp). */
#define GROVE_ABI_VERSION 11u

/* A packed entry function: args = [one memref descriptor per argument, in
 * the order of the entry's `args` in the descriptor (state
 * buffers of the context and the caller's inputs), result buffer (only when
 * the function has results)]. See docs/abi.md. */
typedef void (*grove_packed_fn)(void **args);

/* Emitted by grovec as `<module>_model`; read-only. */
typedef struct grove_model_def {
  uint32_t abi_version;           /* GROVE_ABI_VERSION at compile time */
  uint32_t num_entries;           /* == the descriptor's entry count */
  const char *name;               /* module name, e.g. "mlp" */
  const char *descriptor;         /* model descriptor JSON, docs/abi.md */
  const grove_packed_fn *entries; /* num_entries packed functions */
} grove_model_def;

struct grove_context;

/* MLIR's memref descriptor of rank R over elements T, which generated code
 * passes by pointer to every service that takes tensors: those services are
 * declared with `llvm.emit_c_interface`, so MLIR calls them as
 * `_mlir_ciface_<name>` with one pointer per memref (sizes and strides in
 * elements; element i is at aligned + offset + sum(i_k * strides[k])). */
#define GROVE_MEMREF(T, R)                                                     \
  struct {                                                                     \
    T *allocated;                                                              \
    T *aligned;                                                                \
    int64_t offset;                                                            \
    int64_t sizes[R];                                                          \
    int64_t strides[R];                                                        \
  }
/* Rank 0: no sizes or strides. */
#define GROVE_MEMREF0(T)                                                       \
  struct {                                                                     \
    T *allocated;                                                              \
    T *aligned;                                                                \
    int64_t offset;                                                            \
  }
/* grove_memref_<element>_<rank>; f16 and bf16 as raw 16-bit words (u16). */
typedef GROVE_MEMREF0(bool) grove_memref_i1_0;
typedef GROVE_MEMREF0(int32_t) grove_memref_i32_0;
typedef GROVE_MEMREF0(int64_t) grove_memref_i64_0;
typedef GROVE_MEMREF0(float) grove_memref_f32_0;
typedef GROVE_MEMREF0(double) grove_memref_f64_0;
typedef GROVE_MEMREF(float, 1) grove_memref_f32_1;
typedef GROVE_MEMREF(float, 2) grove_memref_f32_2;
typedef GROVE_MEMREF(float, 3) grove_memref_f32_3;
typedef GROVE_MEMREF(float, 5) grove_memref_f32_5;
typedef GROVE_MEMREF(double, 1) grove_memref_f64_1;
typedef GROVE_MEMREF(uint16_t, 1) grove_memref_u16_1;
typedef GROVE_MEMREF(uint16_t, 2) grove_memref_u16_2;
typedef GROVE_MEMREF(uint16_t, 3) grove_memref_u16_3;
typedef GROVE_MEMREF(uint16_t, 5) grove_memref_u16_5;
typedef GROVE_MEMREF(int32_t, 1) grove_memref_i32_1;
typedef GROVE_MEMREF(int32_t, 2) grove_memref_i32_2;

/* The callback of grove_rt_parallel_for: one sub-range [begin, end). */
typedef void (*grove_range_fn)(void *ctx, int64_t begin, int64_t end);

/* Buffers of generated host code: finalize-memref-to-llvm with
 * use-generic-functions calls these (MLIR's names) for every heap buffer and
 * its deallocation; results returned by a call are such buffers and the
 * runtime frees them the same way. Freed blocks of at least 1 MiB are
 * cached for the next call, best fit (GROVE_HOST_CACHE_MB bounds the cache,
 * default 2048; 0 disables it and the per-thread caches of smaller blocks).
 * Only these functions may free what they allocate. One that
 * cannot be allocated abandons the call (grove_rt_invoke returns
 * GROVE_ERROR_OUT_OF_MEMORY) instead of returning NULL. */
void *_mlir_memref_to_llvm_alloc(size_t bytes);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes);
void _mlir_memref_to_llvm_free(void *ptr);

/* The runtime services: one prototype per row of grove/services.def, where
 * each is documented. A service that takes tensors is the C interface
 * `_mlir_ciface_grove_rt_<name>`; the others are `grove_rt_<name>`. */
/* Kept as written: clang-format would space the pointers below. */
/* clang-format off */
#define GROVE_ABI_CTYPE_VOID void
#define GROVE_ABI_CTYPE_I1 bool
#define GROVE_ABI_CTYPE_I32 int32_t
#define GROVE_ABI_CTYPE_I64 int64_t
#define GROVE_ABI_CTYPE_F32 float
#define GROVE_ABI_CTYPE_F64 double
#define GROVE_ABI_STORAGE_i1 i1
#define GROVE_ABI_STORAGE_i32 i32
#define GROVE_ABI_STORAGE_i64 i64
#define GROVE_ABI_STORAGE_f32 f32
#define GROVE_ABI_STORAGE_f64 f64
#define GROVE_ABI_STORAGE_f16 u16
#define GROVE_ABI_STORAGE_bf16 u16
#define GROVE_ABI_MEMREF(T, R) GROVE_ABI_MEMREF_(GROVE_ABI_STORAGE_##T, R)
#define GROVE_ABI_MEMREF_(S, R) GROVE_ABI_MEMREF__(S, R)
#define GROVE_ABI_MEMREF__(S, R) grove_memref_##S##_##R
#define GS_VOID void
#define GS_I32(n) int32_t n
#define GS_U32(n) uint32_t n
#define GS_I64(n) int64_t n
#define GS_F32(n) float n
#define GS_PTR(T, n) T n
#define GS_IN(T, R, n) const GROVE_ABI_MEMREF(T, R) *n
#define GS_OUT(T, R, n) GROVE_ABI_MEMREF(T, R) *n
#define GS_INOUT(T, R, n) GROVE_ABI_MEMREF(T, R) *n
#define GS_VEC_IN(T, n) const GROVE_ABI_MEMREF(T, 1) *n
#define GS_VEC_OUT(T, n) GROVE_ABI_MEMREF(T, 1) *n
#define GS_VEC_INOUT(T, n) GROVE_ABI_MEMREF(T, 1) *n
#define GS_HOST_OUT(T, R, n) GROVE_ABI_MEMREF(T, R) *n
#define GROVE_SERVICE(Id, Family, Elem, name, Result, Args)                    \
  GROVE_ABI_CTYPE_##Result grove_rt_##name Args;
#define GROVE_MEMREF_SERVICE(Id, Family, Elem, name, Result, Args)             \
  GROVE_ABI_CTYPE_##Result _mlir_ciface_grove_rt_##name Args;
#include "grove/services.def"
/* clang-format on */
#undef GS_VOID
#undef GS_I32
#undef GS_U32
#undef GS_I64
#undef GS_F32
#undef GS_PTR
#undef GS_IN
#undef GS_OUT
#undef GS_INOUT
#undef GS_VEC_IN
#undef GS_VEC_OUT
#undef GS_VEC_INOUT
#undef GS_HOST_OUT
#undef GROVE_ABI_CTYPE_VOID
#undef GROVE_ABI_CTYPE_I1
#undef GROVE_ABI_CTYPE_I32
#undef GROVE_ABI_CTYPE_I64
#undef GROVE_ABI_CTYPE_F32
#undef GROVE_ABI_CTYPE_F64
#undef GROVE_ABI_STORAGE_i1
#undef GROVE_ABI_STORAGE_i32
#undef GROVE_ABI_STORAGE_i64
#undef GROVE_ABI_STORAGE_f32
#undef GROVE_ABI_STORAGE_f64
#undef GROVE_ABI_STORAGE_f16
#undef GROVE_ABI_STORAGE_bf16
#undef GROVE_ABI_MEMREF
#undef GROVE_ABI_MEMREF_
#undef GROVE_ABI_MEMREF__

#ifdef __cplusplus
}
#endif

#endif /* GROVE_ABI_H */
