/*===- grove/abi.h - Contract between grovec output and libgrove_rt -------===*
 *
 * Generated code includes nothing; it is compiled against this layout. Any
 * change to a struct or a function here bumps GROVE_ABI_VERSION, and the
 * runtime refuses models built for another version. Applications use
 * grove/runtime.h instead.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GROVE_ABI_H
#define GROVE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GROVE_ABI_VERSION 5u

/* A packed entry function: args = [one memref descriptor per argument, in
 * the order of the entry's `read`/`write`/`input` descriptor lines (state
 * buffers of the context and the caller's inputs), result buffer (only when
 * the function has results)]. See docs/abi.md. */
typedef void (*grove_packed_fn)(void **args);

/* Emitted by grovec as `<module>_model`; read-only. */
typedef struct grove_model_def {
  uint32_t abi_version;           /* GROVE_ABI_VERSION at compile time */
  uint32_t num_entries;           /* == number of `entry` lines in descriptor */
  const char *name;               /* module name, e.g. "mlp" */
  const char *descriptor;         /* text model descriptor, docs/abi.md */
  const grove_packed_fn *entries; /* num_entries packed functions */
} grove_model_def;

struct grove_context;

/* Called by the typed wrapper `<module>_<function>` that grovec generates.
 * args = [const DLTensor *input..., DLManagedTensor **output...].
 * Returns a grove_status (see runtime.h). */
int32_t grove_rt_invoke(struct grove_context *ctx, const grove_model_def *model,
                        uint32_t entry, void **args);

/* MLIR's memref descriptor of rank R over elements T, which generated code
 * passes by pointer to every service that takes tensors: the services are
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
typedef GROVE_MEMREF(float, 2) grove_memref_f32_2;
typedef GROVE_MEMREF(float, 3) grove_memref_f32_3;
typedef GROVE_MEMREF(float, 5) grove_memref_f32_5;
/* f16 and bf16 as raw 16-bit words. */
typedef GROVE_MEMREF(uint16_t, 3) grove_memref_u16_3;
typedef GROVE_MEMREF(uint16_t, 5) grove_memref_u16_5;
typedef GROVE_MEMREF(int32_t, 1) grove_memref_i32_1;
typedef GROVE_MEMREF(float, 1) grove_memref_f32_1;
typedef GROVE_MEMREF(double, 1) grove_memref_f64_1;
typedef GROVE_MEMREF(uint16_t, 1) grove_memref_u16_1;
typedef GROVE_MEMREF(int32_t, 2) grove_memref_i32_2;

/* Host GEMM service (`grove_rt_matmul_f32` in generated code):
 * C = alpha * op(A) * op(B) + beta * C on 2-D memrefs. trans_x != 0 means
 * X is stored transposed. Bad shapes are parked as a service error: the
 * enclosing call fails with GROVE_ERROR_INTERNAL. */
void _mlir_ciface_grove_rt_matmul_f32(int32_t trans_a, int32_t trans_b,
                                      float alpha, float beta,
                                      const grove_memref_f32_2 *a,
                                      const grove_memref_f32_2 *b,
                                      const grove_memref_f32_2 *c);

/* Batched variant on 3-D memrefs (batch first). */
void _mlir_ciface_grove_rt_batch_matmul_f32(int32_t trans_a, int32_t trans_b,
                                            float alpha, float beta,
                                            const grove_memref_f32_3 *a,
                                            const grove_memref_f32_3 *b,
                                            const grove_memref_f32_3 *c);

/* Convolution service (host, `grove_rt_conv2d_f32`): y = conv(x, w) with
 * zero padding (top, left, bottom, right), strides and dilations, written
 * over y, on 5-D memrefs in linalg's grouped form: x N x G x Cg x H x W,
 * w G x Fg x Cg x Kh x Kw, y N x G x Fg x Oh x Ow (G = 1 for an ungrouped
 * convolution). Bad shapes are parked as a service error, as for the
 * GEMMs. */
void _mlir_ciface_grove_rt_conv2d_f32(const grove_memref_f32_5 *x,
                                      const grove_memref_f32_5 *w,
                                      const grove_memref_f32_5 *y,
                                      int64_t pad_top, int64_t pad_left,
                                      int64_t pad_bottom, int64_t pad_right,
                                      int64_t stride_h, int64_t stride_w,
                                      int64_t dilation_h, int64_t dilation_w);

/* Host loop service: calls fn(ctx, begin, end) on disjoint sub-ranges that
 * cover [lo, hi), from the threads of the runtime's OpenMP team (the one
 * oneDNN's GEMMs use), or once inline when the work is small (fewer than
 * 2^15 iterations counting work_per_iteration each; 0 = unknown), when
 * already inside a parallel region, or in a build without OpenMP. Emitted by
 * grove-dispatch-parallel-calls. */
typedef void (*grove_range_fn)(void *ctx, int64_t begin, int64_t end);
void grove_rt_parallel_for(grove_range_fn fn, void *ctx, int64_t lo, int64_t hi,
                           int64_t work_per_iteration);

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

/* CUDA GEMM services (libgrove_rt_cuda only), one per element type
 * (`grove_rt_cuda_gemm_<f32|f16|bf16>` in generated code), called by models
 * compiled with --target=cuda: C[b] = alpha * op(A[b]) * op(B[b]) +
 * beta * C[b] on rank-3 memrefs of device memory (a 2-D matmul is a batch
 * of one; a batch stride of 0 shares an operand). Runs cuBLAS on the
 * calling context's stream with f32 accumulation. */
#define GROVE_CUDA_GEMM_DECL(SUFFIX, M)                                        \
  void _mlir_ciface_grove_rt_cuda_gemm_##SUFFIX(                               \
      int32_t trans_a, int32_t trans_b, float alpha, float beta, const M *a,   \
      const M *b, const M *c);
GROVE_CUDA_GEMM_DECL(f32, grove_memref_f32_3)
GROVE_CUDA_GEMM_DECL(f16, grove_memref_u16_3)
GROVE_CUDA_GEMM_DECL(bf16, grove_memref_u16_3)
#undef GROVE_CUDA_GEMM_DECL

/* CUDA convolution services (libgrove_rt_cuda built with cuDNN), one per
 * element type (`grove_rt_cuda_conv2d_<type>`): y = conv(x, w) with
 * symmetric zero padding pad_h/pad_w, strides and dilations, written over
 * y, on 5-D memrefs of device memory in linalg's grouped form (x N x G x
 * Cg x H x W, w G x Fg x Cg x Kh x Kw packed, y N x G x Fg x Oh x Ow; G = 1
 * for an ungrouped convolution). Runs cuDNN on the calling context's stream
 * (f32 without TF32; f16/bf16 accumulate in f32); a shape cuDNN cannot
 * run, or a runtime without cuDNN, fails the call with
 * GROVE_ERROR_UNSUPPORTED. */
#define GROVE_CUDA_CONV_DECL(SUFFIX, M)                                        \
  void _mlir_ciface_grove_rt_cuda_conv2d_##SUFFIX(                             \
      const M *x, const M *w, const M *y, int64_t pad_h, int64_t pad_w,        \
      int64_t stride_h, int64_t stride_w, int64_t dilation_h,                  \
      int64_t dilation_w);
GROVE_CUDA_CONV_DECL(f32, grove_memref_f32_5)
GROVE_CUDA_CONV_DECL(f16, grove_memref_u16_5)
GROVE_CUDA_CONV_DECL(bf16, grove_memref_u16_5)
#undef GROVE_CUDA_CONV_DECL

/* Tree schedule service (`grove_rt_tree_schedule`, emitted by
 * grove-batch-dynamic-trees; docs/trees.md). Validates the forest given as
 * CSR child lists (`offsets`: N + 1, `children`: E, `roots`: B; with
 * `slots` K > 0 at most K children a node) and numbers its nodes into
 * positions, children first, in groups: `mode` 0 by level, 1 one node a
 * group in post-order, 2 by (level, arity). Writes `order` (position ->
 * node), `position` (node -> position), `groups` (rows: first position,
 * node count, first edge, edge count), `edge_child` and `edge_parent`
 * (edge -> child position or -1, parent position), `child_start` (position
 * -> first edge, N + 1), `parent_edge` (position -> edge, -1 at roots),
 * `root_of` (position -> index in roots or -1) and `root_position`, and
 * returns the number of groups. Child-sum (K = 0) numbers the E edges in
 * their parents' position order; N-ary numbers edge p * K + k for slot k
 * of position p (N * K edges). A malformed forest records a message naming
 * the node (the call fails with GROVE_ERROR_INVALID_ARGUMENT) and returns
 * 0 groups with every index -1. */
int64_t _mlir_ciface_grove_rt_tree_schedule(
    const grove_memref_i32_1 *offsets, const grove_memref_i32_1 *children,
    const grove_memref_i32_1 *roots, int32_t slots, int32_t mode,
    grove_memref_i32_1 *order, grove_memref_i32_1 *position,
    grove_memref_i32_2 *groups, grove_memref_i32_1 *edge_child,
    grove_memref_i32_1 *edge_parent, grove_memref_i32_1 *child_start,
    grove_memref_i32_1 *parent_edge, grove_memref_i32_1 *root_of,
    grove_memref_i32_1 *root_position);

/* The same for models compiled with --target=cuda (libgrove_rt_cuda): the
 * forest and every list are device memory, `groups` host memory (the group
 * loop runs on the host). The forest is read back after the stream's work,
 * scheduled on the host and the lists copied to the device before the call
 * returns; a malformed forest fails the current call. */
int64_t _mlir_ciface_grove_rt_cuda_tree_schedule(
    const grove_memref_i32_1 *offsets, const grove_memref_i32_1 *children,
    const grove_memref_i32_1 *roots, int32_t slots, int32_t mode,
    grove_memref_i32_1 *order, grove_memref_i32_1 *position,
    grove_memref_i32_2 *groups, grove_memref_i32_1 *edge_child,
    grove_memref_i32_1 *edge_parent, grove_memref_i32_1 *child_start,
    grove_memref_i32_1 *parent_edge, grove_memref_i32_1 *root_of,
    grove_memref_i32_1 *root_position);

/* Collective services (grove.all_reduce, grove.all_gather, grove.broadcast;
 * docs/distributed.md), one per element type: f32, f64, f16 and bf16 (as
 * u16 words) and i32. Each runs on the communicator of the current call's
 * context (grove_context_set_comm); without one the world is this process
 * alone and the data stays as it is. Buffers are contiguous. all_reduce
 * works in place (`reduction` 0 sums, 1 averages); all_gather writes rank
 * r's `in` at r * size(in) of `out`, which holds world-size inputs;
 * broadcast overwrites every rank's buffer with `root`'s. A peer that fails
 * or misses the communicator's deadline fails the current call with
 * GROVE_ERROR_PEER, abandoning it before its state writes.
 *
 * all_reduce_start and all_gather_start copy `buffer` (which the caller may
 * then reuse) and start the collective, returning a handle for
 * collective_wait, which blocks until it is done and writes the result to
 * `buffer` (the input's size for an all-reduce, world-size inputs for an
 * all-gather); every handle must be waited for once. Collectives run in
 * the order they are called, started ones included. A start that fails
 * returns 0 and abandons the call, as a failed collective does (before
 * its state writes). */
#define GROVE_COLLECTIVE_DECL(SUFFIX, MEMREF)                                  \
  void _mlir_ciface_grove_rt_all_reduce_##SUFFIX(MEMREF *buffer,               \
                                                 int32_t reduction);           \
  void _mlir_ciface_grove_rt_all_gather_##SUFFIX(const MEMREF *in,             \
                                                 MEMREF *out);                 \
  void _mlir_ciface_grove_rt_broadcast_##SUFFIX(MEMREF *buffer, int32_t root); \
  int64_t _mlir_ciface_grove_rt_all_reduce_start_##SUFFIX(                     \
      const MEMREF *buffer, int32_t reduction);                                \
  int64_t _mlir_ciface_grove_rt_all_gather_start_##SUFFIX(                     \
      const MEMREF *buffer);                                                   \
  void _mlir_ciface_grove_rt_collective_wait_##SUFFIX(int64_t handle,          \
                                                      MEMREF *buffer);
GROVE_COLLECTIVE_DECL(f32, grove_memref_f32_1)
GROVE_COLLECTIVE_DECL(f64, grove_memref_f64_1)
GROVE_COLLECTIVE_DECL(f16, grove_memref_u16_1)
GROVE_COLLECTIVE_DECL(bf16, grove_memref_u16_1)
GROVE_COLLECTIVE_DECL(i32, grove_memref_i32_1)
#undef GROVE_COLLECTIVE_DECL

/* The top-k compressor's selection (grove.top_k): the k = size(values)
 * elements of `in` of largest magnitude (NaN largest, ties to the lower
 * index) and their indices, in increasing index order. */
void _mlir_ciface_grove_rt_top_k_f32(const grove_memref_f32_1 *in,
                                     grove_memref_f32_1 *values,
                                     grove_memref_i32_1 *indices);
void _mlir_ciface_grove_rt_top_k_f64(const grove_memref_f64_1 *in,
                                     grove_memref_f64_1 *values,
                                     grove_memref_i32_1 *indices);

/* The world of the current call: its size and this process's rank (1 and 0
 * without a communicator). */
int64_t grove_rt_world_size(void);
int64_t grove_rt_world_rank(void);

/* Shape check emitted by the compiler where two dynamic sizes must agree
 * (elementwise operands, contraction and batch dimensions, concat inputs) and
 * the signature cannot say so: records "dynamic sizes must agree: <what> (got
 * a and b)" so that the enclosing call fails with
 * GROVE_ERROR_INVALID_ARGUMENT and discards its results. Generated code goes
 * on with the smaller size, so no buffer is read out of bounds. */
void grove_rt_dim_mismatch(int64_t a, int64_t b, const char *what);

/* The same for a size that must be at least `least` (a dynamic image too
 * small for one window): records "<what> of at least <least>, got <got>". */
void grove_rt_size_below(int64_t least, int64_t got, const char *what);

/* Whether the current call has failed so far: nonzero once a check above
 * or a service has recorded a failure. Generated code asks once before it
 * writes the context's state and skips the writes when it has (the call
 * then fails and state is as before it; grove-guard-state-writes). */
int32_t grove_rt_call_failed(void);

#ifdef __cplusplus
}
#endif

#endif /* GROVE_ABI_H */
