/*===- grove/runtime.h - Public C API of libgrove_rt -----------------------===*
 *
 * What an application uses to run a grovec-compiled model: create a context
 * for a model, give it weights, call entry points, inspect signatures. Pure C
 * so that it can be used from C, C++ and ctypes alike. Models compiled with
 * `grovec --target=cuda` run through libgrove_rt_cuda (same API); their
 * inputs, outputs and weight views are kDLCUDA tensors (docs/cuda.md).
 *
 * Conventions (true for every function below unless it says otherwise):
 *  - Functions returning grove_status never crash or abort on bad input; on
 *    failure they return a non-zero status and record a message that
 *    grove_last_error() returns on the same thread.
 *  - "borrowed" means the runtime reads the argument during the call only and
 *    keeps no reference to it; "owned by the context" means the memory lives
 *    until grove_context_destroy (or the event the comment names).
 *  - Thread safety: contexts are independent. On one context, calls of
 *    entries that only read state, grove_context_save_weights and
 *    grove_context_get_weight may run concurrently; a call of an entry that
 *    writes state (grove_context_entry_access), grove_context_load_weights*,
 *    grove_context_set_weight and grove_context_set_comm run alone (they wait
 *    for the others). A CUDA context runs one call at a time, calls of
 *    entries that only read state included. (Also under "Weights" below.)
 *
 * Signatures here never change; a changed function gets a `_v2` twin.
 *
 *===----------------------------------------------------------------------===*/
#ifndef GROVE_RUNTIME_H
#define GROVE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "grove/abi.h"

#if defined(_WIN32)
#define GROVE_API
#else
#define GROVE_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define GROVE_RUNTIME_VERSION_MAJOR 0
#define GROVE_RUNTIME_VERSION_MINOR 1
#define GROVE_RUNTIME_VERSION_PATCH 0

/* DLPack type code for booleans (kDLBool, DLPack >= 0.8). Spelled as a number
 * because older dlpack.h (e.g. Debian's 0.6) lacks the enumerator. A model's
 * `i1` tensors are {GROVE_DL_BOOL, 8, 1}: one byte per element. */
#define GROVE_DL_BOOL 6u

typedef enum grove_status {
  GROVE_OK = 0,
  /* NULL or malformed argument: pointers, counts, names, DLTensor dtype /
   * shape / strides / device / alignment, a malformed model descriptor, a
   * context used with a model it was not created for. */
  GROVE_ERROR_INVALID_ARGUMENT,
  /* A file could not be opened, read or written (includes "is a directory"). */
  GROVE_ERROR_IO,
  /* Weights are malformed (safetensors validation), do not match the model's
   * params, or are not loaded yet when a call needs them. */
  GROVE_ERROR_BAD_WEIGHTS,
  GROVE_ERROR_OUT_OF_MEMORY,
  /* Valid request the runtime cannot serve (e.g. an unknown dtype). */
  GROVE_ERROR_UNSUPPORTED,
  /* The model was built for another GROVE_ABI_VERSION / descriptor version. */
  GROVE_ERROR_ABI_MISMATCH,
  /* The model's target device is not available. */
  GROVE_ERROR_NO_DEVICE,
  /* The generated code misbehaved (e.g. returned an impossible result shape,
   * or a runtime service it called rejected its arguments). A bug. */
  GROVE_ERROR_INTERNAL,
  /* A collective failed: a peer process died, stalled past the
   * communicator's timeout, or MPI reported an error. The communicator is
   * unusable from then on; the message names the ranks found dead. */
  GROVE_ERROR_PEER
} grove_status;

/* One model instance: parsed signatures plus parameter storage. Opaque. */
typedef struct grove_context grove_context;

/* One tensor of a signature. All pointers are owned by the context. */
typedef struct grove_tensor_sig {
  const char *name;
  DLDataType dtype;
  int32_t ndim;
  const int64_t *shape; /* ndim entries; -1 = dynamic (never for params) */
} grove_tensor_sig;

/* One entry point (public function) of the model. Owned by the context. */
typedef struct grove_entry_sig {
  const char *name;
  uint32_t num_inputs;
  const grove_tensor_sig *inputs;
  uint32_t num_outputs;
  const grove_tensor_sig *outputs;
} grove_entry_sig;

/*--- Library & errors ------------------------------------------------------*/

/* "MAJOR.MINOR.PATCH" of this runtime; static storage. */
GROVE_API const char *grove_runtime_version(void);

/* The GROVE_ABI_VERSION this runtime accepts (lets loaders check a model
 * library before creating a context). */
GROVE_API uint32_t grove_runtime_abi_version(void);

/* Short constant name for a status, e.g. "GROVE_ERROR_IO"; static storage.
 * Unknown values give "GROVE_ERROR_UNKNOWN". */
GROVE_API const char *grove_status_string(grove_status status);

/* Message of the last failed call on the calling thread, "" if none yet.
 * Successful calls do not clear it. The pointer is valid until the next
 * failing call on this thread. Never NULL. */
GROVE_API const char *grove_last_error(void);

/*--- Context lifetime ------------------------------------------------------*/

/* Parses and validates `model` (ABI version, descriptor JSON, entry table)
 * and creates a context with no weights set.
 * model:   borrowed for the context's lifetime; must outlive it (grovec's
 *          `<module>_model` is a global, so this holds naturally).
 * out_ctx: receives the new context (owned by the caller, free with
 *          grove_context_destroy); set to NULL on failure. */
GROVE_API grove_status grove_context_create(const grove_model_def *model,
                                            grove_context **out_ctx);

/* Options for grove_context_create_with_options. Initialise with
 * grove_context_options_init; fields added later go at the end and are read
 * only when struct_size covers them. */
typedef struct grove_context_options {
  size_t struct_size; /* sizeof(grove_context_options) */
  /* CUDA models: device ordinal (default 0). Ignored for host models. */
  int32_t device_id;
  /* CUDA models: the CUstream / cudaStream_t calls run on (borrowed; must
   * outlive the context and belong to the device's primary context), or
   * NULL (default) for a stream the context creates and owns. */
  void *stream;
  /* GROVE_CONTEXT_* flags (default 0). */
  uint32_t flags;
} grove_context_options;

/* CUDA models: grove_invoke returns once the call's work is queued on the
 * context's stream instead of after it finished. Outputs are then valid in
 * that stream's order (as PyTorch's are on its stream); a fault in device
 * code surfaces in a later call or when the application synchronizes.
 * Inputs must stay valid until the queued work is done, and an output used
 * on another stream must not be released before that work is done (its
 * memory is reused in the context stream's order). */
#define GROVE_CONTEXT_ASYNC 1u

/* Sets the defaults above. */
GROVE_API void grove_context_options_init(grove_context_options *options);

/* As grove_context_create, with options (NULL = defaults). For a CUDA model
 * this initialises the driver, retains the device's primary context, creates
 * the stream (unless given) and a cuBLAS handle. Statuses:
 * GROVE_ERROR_NO_DEVICE when there is no CUDA driver, no such device, or the
 * runtime is host-only; GROVE_ERROR_OUT_OF_MEMORY when the device is full. */
GROVE_API grove_status grove_context_create_with_options(
    const grove_model_def *model, const grove_context_options *options,
    grove_context **out_ctx);

/* Where the context's inputs, outputs and weight views live: {kDLCPU, 0} for
 * host models, {kDLCUDA, ordinal} for CUDA models; {kDLCPU, 0} for NULL. */
GROVE_API DLDevice grove_context_device(const grove_context *ctx);

/* Frees the context and all weight storage; views from
 * grove_context_get_weight become invalid. Output tensors already returned by
 * grove_invoke stay valid (they own their memory). NULL is a no-op. */
GROVE_API void grove_context_destroy(grove_context *ctx);

/* The model the context was created for (borrowed); NULL for NULL ctx. */
GROVE_API const grove_model_def *grove_context_model(const grove_context *ctx);

/*--- Weights ---------------------------------------------------------------*/

/* Params are the model's state: weights, which must be loaded or set before
 * any call, and initialised state (a grove.param with an initialiser:
 * optimizer moments, running statistics, ...), which starts at its
 * initialiser. Entries that write state update it in place; later calls of
 * any entry see the new values (docs/abi.md, "State").
 *
 * Thread safety (as in the conventions above): calls of entries that only
 * read state, saves and get_weight may run concurrently on one context; a
 * call of an entry that writes state, a load, set_weight and set_comm run
 * alone (they wait for the others). A CUDA context runs one call at a time,
 * calls of entries that only read state included. Data seen through a
 * get_weight view is not synchronised. */

/* Loads the params from a safetensors file (see docs/abi.md for the checks).
 * The file must hold every weight of the model and may hold initialised
 * state, with matching dtype and shape; initialised state it omits is
 * reset to its initialiser. All-or-nothing: on any failure the context is
 * unchanged. path: borrowed. Previous weight views are invalidated on
 * success. */
GROVE_API grove_status grove_context_load_weights(grove_context *ctx,
                                                  const char *path);

/* As grove_context_load_weights, from a safetensors image in memory.
 * data: borrowed, `size` bytes, copied; no alignment required. */
GROVE_API grove_status grove_context_load_weights_from_memory(
    grove_context *ctx, const void *data, size_t size);

/* Writes all params (weights and state) to `path` as safetensors, in
 * declaration order. Writes a temporary file next to `path` and renames it
 * over `path`, so a reader never sees a partial file; `path` must be a
 * regular file or not exist (a device, FIFO, directory or symbolic link to
 * one is refused with GROVE_ERROR_IO). Every weight must be set.
 * path: borrowed. */
GROVE_API grove_status grove_context_save_weights(const grove_context *ctx,
                                                  const char *path);

/* Copies `value` into param `name`. value must be on kDLCPU with the param's
 * exact dtype and shape (else GROVE_ERROR_BAD_WEIGHTS, as for a file);
 * any strides are accepted (the copy compacts).
 * name, value: borrowed. Previous views of this param see the new data. */
GROVE_API grove_status grove_context_set_weight(grove_context *ctx,
                                                const char *name,
                                                const DLTensor *value);

/* Fills *out_view with a view of param `name`'s storage (compact row-major,
 * 64-byte aligned data, on grove_context_device: device memory for CUDA
 * models). data/shape/strides are owned by the context
 * and stay valid until the next successful load_weights* or destroy; writing
 * through data changes the weight. The param must have been set. */
GROVE_API grove_status grove_context_get_weight(grove_context *ctx,
                                                const char *name,
                                                DLTensor *out_view);

/* 1 if every param has been set (calls are possible), else 0. */
GROVE_API int grove_context_weights_ready(const grove_context *ctx);

/*--- Calls -----------------------------------------------------------------*/

/* Calls entry point `entry` by name (for generic loaders; C/C++ users may call
 * the typed `<module>_<function>` wrappers instead). Inputs are checked as in
 * docs/abi.md "Checks on every call".
 * entry:   borrowed name.
 * inputs:  num_inputs borrowed tensors; must be compact row-major on
 *          grove_context_device(ctx). CUDA models return after the call's
 *          device work has finished (the stream is synchronized), unless
 *          the context was created with GROVE_CONTEXT_ASYNC (then once it
 *          is queued; see there).
 * outputs: array of num_outputs slots; on success each receives a new
 *          DLManagedTensor owned by the caller (release with
 *          `t->deleter(t)`), compact row-major with explicit strides. On
 *          failure every slot is set to NULL.
 * The counts must equal the entry's signature.
 * Statuses: GROVE_ERROR_BAD_WEIGHTS if a param is not set,
 * GROVE_ERROR_INTERNAL if the generated code misbehaved, else
 * GROVE_ERROR_INVALID_ARGUMENT for any failed check. */
GROVE_API grove_status grove_invoke(grove_context *ctx, const char *entry,
                                    const DLTensor *const *inputs,
                                    size_t num_inputs,
                                    DLManagedTensor **outputs,
                                    size_t num_outputs);

/*--- Traces ----------------------------------------------------------------*/

/* Starts recording a Chrome trace (the JSON format Perfetto and
 * chrome://tracing open) of this process: a span for every entry call (named
 * by the entry, with its model) and every runtime service it makes (GEMM,
 * convolution, collectives with their bytes, tree schedules), until
 * grove_trace_stop writes it to `path`. GROVE_TRACE=path in the environment
 * traces the whole process, written at exit. `path` is checked for writing
 * now; GROVE_ERROR_INVALID_ARGUMENT while a trace is already recording. */
GROVE_API grove_status grove_trace_start(const char *path);

/* Stops the trace and writes it (a temporary file renamed over the path);
 * GROVE_OK when none was recording. */
GROVE_API grove_status grove_trace_stop(void);

/*--- Introspection (all returned pointers owned by the context) ------------*/

/* Number of entry points; 0 for NULL ctx. */
GROVE_API uint32_t grove_context_num_entries(const grove_context *ctx);

/* Signature of entry `index` (0-based, descriptor order). */
GROVE_API grove_status grove_context_entry(const grove_context *ctx,
                                           uint32_t index,
                                           const grove_entry_sig **out_sig);

/* Index of the entry called `name` (borrowed). */
GROVE_API grove_status grove_context_find_entry(const grove_context *ctx,
                                                const char *name,
                                                uint32_t *out_index);

/* Number of params; 0 for NULL ctx. */
GROVE_API uint32_t grove_context_num_params(const grove_context *ctx);

/* Signature of param `index` (0-based, declaration order). */
GROVE_API grove_status grove_context_param(const grove_context *ctx,
                                           uint32_t index,
                                           const grove_tensor_sig **out_sig);

/* What fills a param before anything is loaded. */
typedef enum grove_param_kind {
  GROVE_PARAM_WEIGHT = 0, /* must be loaded or set before calls */
  GROVE_PARAM_STATE = 1   /* starts at its initialiser */
} grove_param_kind;

/* Kind of param `index`; GROVE_ERROR_INVALID_ARGUMENT for a bad index. */
GROVE_API grove_status grove_context_param_kind(const grove_context *ctx,
                                                uint32_t index,
                                                grove_param_kind *out_kind);

/* How entry `entry` uses param `param`: 0 not at all, 1 reads it, 2 writes
 * it (in place; such calls run alone on the context). */
GROVE_API grove_status grove_context_entry_access(const grove_context *ctx,
                                                  uint32_t entry,
                                                  uint32_t param,
                                                  int *out_access);

/*===------------------------------------------------------------------===*
 * Data-parallel training (docs/distributed.md)
 *
 * A grove_comm is a group of processes, one rank each, on Open MPI. Attached
 * to a context, it serves the model's collectives (grove.all_reduce, the
 * compressed collectives grove-insert-collectives places); a context without
 * one is a world of one process, where collectives copy. Every collective
 * has a deadline: a peer that dies or stalls fails the call on every other
 * rank with GROVE_ERROR_PEER and a message naming it, never a hang. Launch
 * with `mpirun --enable-recovery` so that mpirun does not kill the
 * survivors first.
 *===------------------------------------------------------------------===*/

typedef struct grove_comm grove_comm;

/* Set struct_size and the defaults with grove_comm_options_init. */
typedef struct grove_comm_options {
  size_t struct_size; /* sizeof(grove_comm_options) */
  /* Seconds each collective may take before the peers are declared dead
   * (default 60, or GROVE_COMM_TIMEOUT from the environment). */
  double timeout_seconds;
} grove_comm_options;

GROVE_API void grove_comm_options_init(grove_comm_options *options);

/* A communicator over every process of the MPI job (MPI_COMM_WORLD),
 * initialising MPI when the app has not; destroying it then finalizes MPI.
 * Collective: every rank calls it. GROVE_ERROR_UNSUPPORTED when the runtime
 * was built without MPI; GROVE_ERROR_PEER when the peers do not all answer
 * within the timeout. */
GROVE_API grove_status grove_comm_create(const grove_comm_options *options,
                                         grove_comm **out_comm);

/* The same over the app's own communicator: `mpi_comm` points to an
 * MPI_Comm (duplicated; the app keeps its own). MPI must be initialised
 * (MPI_THREAD_SERIALIZED or above if models run on several threads). */
GROVE_API grove_status grove_comm_create_from_mpi(
    const void *mpi_comm, const grove_comm_options *options,
    grove_comm **out_comm);

/* This process's rank and the number of ranks; 0 and 1 for NULL. */
GROVE_API int grove_comm_rank(const grove_comm *comm);
GROVE_API int grove_comm_size(const grove_comm *comm);

/* Frees the communicator. The last one of a process whose MPI the runtime
 * initialised finalizes MPI, which every rank must then do too; after a
 * failure nothing waits for the peers and MPI is left unfinalized. NULL is
 * ignored. */
GROVE_API void grove_comm_destroy(grove_comm *comm);

/* What the communicator has moved: bytes each rank handed to its
 * collectives (the payload, before the transport's own traffic), the count
 * of collectives and the seconds callers spent blocked on them (a started
 * collective counts only its wait, not the time it moved while the caller
 * computed). */
typedef struct grove_comm_stats {
  uint64_t payload_bytes;
  uint64_t collectives;
  double wait_seconds;
} grove_comm_stats;
GROVE_API grove_status grove_comm_get_stats(const grove_comm *comm,
                                            grove_comm_stats *out_stats);

/* How the collectives of models compiled with --target=cuda move device
 * memory for `comm`: "" until the first such collective, then "nccl", or
 * "staged: <why>" (through host memory and MPI: when ranks share a GPU,
 * which NCCL refuses, when a rank cannot load NCCL, or when
 * GROVE_DEVICE_COLLECTIVES=staged; =nccl makes those cases errors). The
 * string lives as long as `comm`; "" for NULL. */
GROVE_API const char *grove_comm_device_transport(const grove_comm *comm);

/* The app's own collectives over host tensors (metrics, a barrier before a
 * checkpoint): in place, f32/f64/f16/bf16/i32, contiguous. `op` 0 sums, 1
 * averages. */
GROVE_API grove_status grove_comm_all_reduce(grove_comm *comm, DLTensor *tensor,
                                             int op);
GROVE_API grove_status grove_comm_broadcast(grove_comm *comm, DLTensor *tensor,
                                            int root);
GROVE_API grove_status grove_comm_barrier(grove_comm *comm);

/* Makes `comm` serve the collectives of the calls on `ctx` (NULL detaches).
 * Call it before calls run on the context; the communicator must outlive
 * the context or be detached first. */
GROVE_API grove_status grove_context_set_comm(grove_context *ctx,
                                              grove_comm *comm);

#ifdef __cplusplus
}
#endif

#endif /* GROVE_RUNTIME_H */
