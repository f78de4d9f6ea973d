/* bench/mlp_bench.c — times Grove's compiled MLP through its typed entry point.
 *
 * Built by bench/run.py against the grovec output (libmlp.a + mlp.h) and
 * libgrove_rt: cc -O2 -I OUTDIR -I runtime/include bench/mlp_bench.c
 * OUTDIR/libmlp.a libgrove_rt.a -lopenblas ...
 * (-DMLP_BENCH_NO_HEADER declares mlp_model/mlp_forward here instead of
 * including mlp.h.)
 *
 *   mlp_bench WEIGHTS.safetensors DIGITS_TEST.bin
 *
 * It loads the weights, prints "ready <info>", then serves commands on stdin,
 * one per line, answering each with one line on stdout (the worker protocol of
 * bench/run.py): run B SECONDS   call mlp_forward on a [B,64] batch (held-out
 * digits, tiled) for about SECONDS after a short warm-up, timing each call with
 *                   clock_gettime(CLOCK_MONOTONIC); the output is released
 * (deleter) inside the timed region, as a caller would.
 *                   -> "res B REPS MEDIAN_NS MIN_NS P10_NS P90_NS"
 *   check PATH      run the whole held-out set once, write the logits (f32
 * [N,10], raw) to PATH
 *                   -> "ok N ACCURACY"
 *   quit
 * Errors print "error <message>" (and exit 1 on start-up).
 */
#define _POSIX_C_SOURCE 200809L
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#include "grove/runtime.h"
#ifndef MLP_BENCH_NO_HEADER
#include "mlp.h"
#else
/* What docs/abi.md promises mlp.h declares (used when the generated header does
 * not compile). */
extern const grove_model_def mlp_model;
grove_status mlp_forward(grove_context *ctx, const DLTensor *x,
                         DLManagedTensor **out0);
#endif

#define D_IN 64
#define D_OUT 10

static float *digits_x;   /* [n_digits, 64] */
static int32_t *digits_y; /* [n_digits] */
static uint32_t n_digits;

static int load_digits(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  char magic[4];
  uint32_t hdr[3];
  if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "GRVD", 4) != 0 ||
      fread(hdr, 4, 3, f) != 3 || hdr[0] != 1 || hdr[2] != D_IN ||
      hdr[1] == 0) {
    fclose(f);
    return -1;
  }
  n_digits = hdr[1];
  digits_x = malloc((size_t)n_digits * D_IN * sizeof(float));
  digits_y = malloc((size_t)n_digits * sizeof(int32_t));
  int ok = digits_x && digits_y &&
           fread(digits_x, sizeof(float), (size_t)n_digits * D_IN, f) ==
               (size_t)n_digits * D_IN &&
           fread(digits_y, sizeof(int32_t), n_digits, f) == n_digits;
  fclose(f);
  return ok ? 0 : -1;
}

/* A compact [b,64] f32 tensor filled with held-out digits, repeated as needed.
 */
typedef struct {
  DLTensor t;
  int64_t shape[2], strides[2];
} input_t;

static int make_input(input_t *in, int64_t b) {
  size_t bytes = (size_t)b * D_IN * sizeof(float);
  float *data = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!data)
    return -1;
  for (int64_t i = 0; i < b; ++i)
    memcpy(data + i * D_IN, digits_x + (size_t)(i % n_digits) * D_IN,
           D_IN * sizeof(float));
  memset(in, 0, sizeof *in);
  in->shape[0] = b;
  in->shape[1] = D_IN;
  in->strides[0] = D_IN;
  in->strides[1] = 1;
  in->t.data = data;
  in->t.device.device_type = kDLCPU;
  in->t.ndim = 2;
  in->t.dtype.code = kDLFloat;
  in->t.dtype.bits = 32;
  in->t.dtype.lanes = 1;
  in->t.shape = in->shape;
  in->t.strides = in->strides;
  return 0;
}

static grove_context *ctx;

static int call_once(const input_t *in, DLManagedTensor **out) {
  grove_status s = mlp_forward(ctx, &in->t, out);
  if (s != GROVE_OK) {
    printf("error mlp_forward: %s: %s\n", grove_status_string(s),
           grove_last_error());
    fflush(stdout);
    return -1;
  }
  return 0;
}

static void cmd_run(int64_t b, double seconds) {
  input_t in;
  if (b <= 0 || make_input(&in, b) != 0) {
    printf("error bad batch %lld\n", (long long)b);
    return;
  }
  DLManagedTensor *out = NULL;
  /* warm-up: at least 3 calls, up to min(50 ms, seconds/4) */
  int64_t warm_end =
      now_ns() + (int64_t)(1e9 * (seconds / 4 < 0.05 ? seconds / 4 : 0.05));
  for (int i = 0; i < 3 || now_ns() < warm_end; ++i) {
    if (call_once(&in, &out) != 0)
      goto done;
    out->deleter(out);
  }
  {
    size_t cap = 1 << 16, n = 0;
    int64_t *ts = malloc(cap * sizeof *ts);
    int64_t deadline = now_ns() + (int64_t)(seconds * 1e9);
    const size_t min_reps = 20, max_reps = 2000000;
    for (;;) {
      int64_t t0 = now_ns();
      if (call_once(&in, &out) != 0) {
        free(ts);
        goto done;
      }
      out->deleter(out);
      int64_t t1 = now_ns();
      if (n == cap) {
        cap *= 2;
        ts = realloc(ts, cap * sizeof *ts);
      }
      ts[n++] = t1 - t0;
      if (n >= max_reps || (n >= min_reps && t1 >= deadline))
        break;
    }
    qsort(ts, n, sizeof *ts, cmp_i64);
    printf("res %lld %zu %lld %lld %lld %lld\n", (long long)b, n,
           (long long)ts[n / 2], (long long)ts[0], (long long)ts[n / 10],
           (long long)ts[(n * 9) / 10]);
    free(ts);
  }
done:
  free(in.t.data);
}

static void cmd_check(const char *path) {
  input_t in;
  if (make_input(&in, n_digits) != 0) {
    printf("error out of memory\n");
    return;
  }
  DLManagedTensor *out = NULL;
  if (call_once(&in, &out) != 0) {
    free(in.t.data);
    return;
  }
  const DLTensor *o = &out->dl_tensor;
  if (o->ndim != 2 || o->shape[0] != n_digits || o->shape[1] != D_OUT ||
      o->dtype.code != kDLFloat || o->dtype.bits != 32) {
    printf("error unexpected output: ndim %d shape [%lld,%lld]\n", o->ndim,
           (long long)o->shape[0], o->ndim > 1 ? (long long)o->shape[1] : -1LL);
  } else {
    const float *y = (const float *)((const char *)o->data + o->byte_offset);
    /* the runtime returns compact row-major; honour explicit strides anyway */
    int64_t s0 = o->strides ? o->strides[0] : D_OUT,
            s1 = o->strides ? o->strides[1] : 1;
    float *logits = malloc((size_t)n_digits * D_OUT * sizeof(float));
    uint32_t correct = 0;
    for (uint32_t i = 0; i < n_digits; ++i) {
      int best = 0;
      for (int j = 0; j < D_OUT; ++j) {
        logits[i * D_OUT + j] = y[i * s0 + j * s1];
        if (logits[i * D_OUT + j] > logits[i * D_OUT + best])
          best = j;
      }
      correct += best == digits_y[i];
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(logits, sizeof(float), (size_t)n_digits * D_OUT, f) !=
                  (size_t)n_digits * D_OUT) {
      printf("error cannot write %s\n", path);
    } else {
      printf("ok %u %.6f\n", n_digits, (double)correct / n_digits);
    }
    if (f)
      fclose(f);
    free(logits);
  }
  out->deleter(out);
  free(in.t.data);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s WEIGHTS.safetensors DIGITS_TEST.bin\n", argv[0]);
    return 2;
  }
  if (load_digits(argv[2]) != 0) {
    printf("error cannot read digits file %s\n", argv[2]);
    return 1;
  }
  grove_status s = grove_context_create(&mlp_model, &ctx);
  if (s == GROVE_OK)
    s = grove_context_load_weights(ctx, argv[1]);
  if (s != GROVE_OK) {
    printf("error %s: %s\n", grove_status_string(s), grove_last_error());
    return 1;
  }
  printf("ready grove runtime %s, abi %u\n", grove_runtime_version(),
         grove_runtime_abi_version());
  fflush(stdout);
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    long long b;
    double secs;
    char path[4000];
    if (sscanf(line, "run %lld %lf", &b, &secs) == 2)
      cmd_run(b, secs);
    else if (sscanf(line, "check %3999s", path) == 1)
      cmd_check(path);
    else if (strncmp(line, "quit", 4) == 0)
      break;
    else
      printf("error unknown command\n");
    fflush(stdout);
  }
  grove_context_destroy(ctx);
  return 0;
}
