/* bench/gemm_bench.c — f32 GEMM throughput: OpenBLAS cblas_sgemm vs Grove's
 * compiled matmul.
 *
 * Built by bench/run.py. Without -DGROVE_MODEL_DEF it measures OpenBLAS only;
 * with -DGROVE_MODEL_DEF=<module>_model (and the grovec-compiled lib<module>.a
 * + libgrove_rt linked) it also calls the model's matmul entry through
 * grove_invoke. With -DGEMM_BENCH_DNNL (and -ldnnl) it also times oneDNN's
 * dnnl_sgemm, the library libgrove_rt uses when built with it. Thread counts
 * are applied with openblas_set_num_threads and, when compiled with -fopenmp,
 * omp_set_num_threads (oneDNN's OpenMP team).
 *
 *   gemm_bench [--entry NAME] [--threads 1,2] [--seconds 0.1] [--rounds 5]
 * [--gap 0.15] MxNxK[t]...
 *
 * C[M,N] = A[M,K] @ B[K,N], row-major, both operands untransposed; a shape
 * ending in "t" has B stored transposed, N x K (C = A @ Bᵀ: a dense layer's
 * weights). The Grove entry is NAME, or the first entry with two rank-2 f32
 * inputs and one rank-2 f32 output, and NAME_nt for the "t" shapes (matmul_nt
 * in bench/gemm.mlir); its inputs are taken as (A[M,K], B[K,N] or B[N,K]) and
 * its result must be [M,N] and match cblas_sgemm (checked once per shape; a
 * mismatch skips that shape with a note). Params, if the model has any, are
 * filled with small random numbers. Implementations, thread counts and shapes
 * are interleaved within each round (the order of implementations rotates
 * between rounds). After a multi-threaded sample the next one waits --gap
 * seconds, so that the helper threads of the previous library (OpenBLAS's
 * pthreads, OpenMP's team) stop spinning before it starts.
 *
 * Output lines (parsed by bench/run.py):
 *   info KEY VALUE...
 *   sample IMPL THREADS M N K[t] MEDIAN_NS REPS     one per (round, impl,
 * threads, shape) note TEXT
 */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef GEMM_BENCH_DNNL
#include <dnnl.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#ifdef GROVE_MODEL_DEF
#include <dlpack/dlpack.h>

#include "grove/runtime.h"
extern const grove_model_def GROVE_MODEL_DEF;
#endif

static float *alloc_rand(size_t n, unsigned *seed) {
  float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  for (size_t i = 0; i < n; ++i)
    p[i] = (float)rand_r(seed) / RAND_MAX - 0.5f;
  return p;
}

typedef struct {
  int64_t m, n, k;
  int tb;
  float *a, *b, *c;
  int grove_ok;
} shape_t;

typedef int (*call_fn)(shape_t *);

static int call_blas(shape_t *s) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans,
              (int)s->m, (int)s->n, (int)s->k, 1.0f, s->a, (int)s->k, s->b,
              (int)(s->tb ? s->k : s->n), 0.0f, s->c, (int)s->n);
  return 0;
}

#ifdef GEMM_BENCH_DNNL
static int call_dnnl(shape_t *s) {
  return dnnl_sgemm('N', s->tb ? 'T' : 'N', s->m, s->n, s->k, 1.0f, s->a, s->k,
                    s->b, s->tb ? s->k : s->n, 0.0f, s->c, s->n) == dnnl_success
             ? 0
             : -1;
}
#endif

#ifdef GROVE_MODEL_DEF
static grove_context *ctx;
static const grove_entry_sig *entry,
    *entry_nt; /* entry_nt: B transposed, may be NULL */

static void make_tensor(DLTensor *t, int64_t *shape, int64_t *strides,
                        float *data, int64_t r, int64_t c) {
  memset(t, 0, sizeof *t);
  shape[0] = r;
  shape[1] = c;
  strides[0] = c;
  strides[1] = 1;
  t->data = data;
  t->device.device_type = kDLCPU;
  t->ndim = 2;
  t->dtype.code = kDLFloat;
  t->dtype.bits = 32;
  t->dtype.lanes = 1;
  t->shape = shape;
  t->strides = strides;
}

static int grove_call(shape_t *s, DLManagedTensor **out) {
  DLTensor a, b;
  int64_t sa[2], sta[2], sb[2], stb[2];
  make_tensor(&a, sa, sta, s->a, s->m, s->k);
  make_tensor(&b, sb, stb, s->b, s->tb ? s->n : s->k, s->tb ? s->k : s->n);
  const DLTensor *in[2] = {&a, &b};
  grove_status st =
      grove_invoke(ctx, (s->tb ? entry_nt : entry)->name, in, 2, out, 1);
  if (st != GROVE_OK) {
    printf("note grove %lldx%lldx%lld: %s: %s\n", (long long)s->m,
           (long long)s->n, (long long)s->k, grove_status_string(st),
           grove_last_error());
    return -1;
  }
  return 0;
}
static int call_grove(shape_t *s) {
  DLManagedTensor *out;
  if (grove_call(s, &out) != 0)
    return -1;
  out->deleter(out);
  return 0;
}
static int sig_is_f32_2d(const grove_tensor_sig *t) {
  return t->ndim == 2 && t->dtype.code == kDLFloat && t->dtype.bits == 32 &&
         t->dtype.lanes == 1;
}
static int dim_ok(int64_t want, int64_t have) {
  return want < 0 || want == have;
}

static int grove_init(const char *entry_name) {
  grove_status st = grove_context_create(&GROVE_MODEL_DEF, &ctx);
  if (st != GROVE_OK)
    goto fail;
  for (uint32_t i = 0; i < grove_context_num_entries(ctx) && !entry; ++i) {
    const grove_entry_sig *e;
    if ((st = grove_context_entry(ctx, i, &e)) != GROVE_OK)
      goto fail;
    if (entry_name
            ? strcmp(e->name, entry_name) == 0
            : (e->num_inputs == 2 && e->num_outputs == 1 &&
               sig_is_f32_2d(&e->inputs[0]) && sig_is_f32_2d(&e->inputs[1]) &&
               sig_is_f32_2d(&e->outputs[0])))
      entry = e;
  }
  if (!entry) {
    printf("note grove: no matmul entry%s%s found in model %s\n",
           entry_name ? " " : "", entry_name ? entry_name : "",
           GROVE_MODEL_DEF.name);
    return -1;
  }
  char nt_name[256];
  snprintf(nt_name, sizeof nt_name, "%s_nt", entry->name);
  for (uint32_t i = 0; i < grove_context_num_entries(ctx) && !entry_nt; ++i) {
    const grove_entry_sig *e;
    if ((st = grove_context_entry(ctx, i, &e)) != GROVE_OK)
      goto fail;
    if (strcmp(e->name, nt_name) == 0)
      entry_nt = e;
  }
  unsigned seed = 7;
  for (uint32_t i = 0; i < grove_context_num_params(ctx); ++i) {
    const grove_tensor_sig *p;
    if ((st = grove_context_param(ctx, i, &p)) != GROVE_OK)
      goto fail;
    size_t n = 1;
    for (int d = 0; d < p->ndim; ++d)
      n *= (size_t)p->shape[d];
    if (p->dtype.code != kDLFloat || p->dtype.bits != 32) {
      printf("note grove: param %s is not f32; cannot fill it\n", p->name);
      return -1;
    }
    float *data = alloc_rand(n, &seed);
    int64_t strides[8];
    int64_t acc = 1;
    for (int d = p->ndim - 1; d >= 0; --d) {
      strides[d] = acc;
      acc *= p->shape[d];
    }
    DLTensor t = {.data = data,
                  .device = {kDLCPU, 0},
                  .ndim = p->ndim,
                  .dtype = p->dtype,
                  .shape = (int64_t *)p->shape,
                  .strides = strides,
                  .byte_offset = 0};
    st = grove_context_set_weight(ctx, p->name, &t);
    free(data);
    if (st != GROVE_OK)
      goto fail;
  }
  printf("info grove_entry %s %s\n", GROVE_MODEL_DEF.name, entry->name);
  return 0;
fail:
  printf("note grove: %s: %s\n", grove_status_string(st), grove_last_error());
  return -1;
}

/* Checks the entry accepts the shape and agrees with cblas_sgemm. */
static int grove_check(shape_t *s) {
  const grove_entry_sig *e = s->tb ? entry_nt : entry;
  if (!e) {
    printf("note grove %lldx%lldx%lldt: no %s_nt entry for B transposed; "
           "skipped\n",
           (long long)s->m, (long long)s->n, (long long)s->k, entry->name);
    return -1;
  }
  int64_t b0 = s->tb ? s->n : s->k, b1 = s->tb ? s->k : s->n;
  if (!dim_ok(e->inputs[0].shape[0], s->m) ||
      !dim_ok(e->inputs[0].shape[1], s->k) ||
      !dim_ok(e->inputs[1].shape[0], b0) ||
      !dim_ok(e->inputs[1].shape[1], b1)) {
    printf("note grove %lldx%lldx%lld: entry %s has static shapes "
           "[%lld,%lld]x[%lld,%lld]; skipped\n",
           (long long)s->m, (long long)s->n, (long long)s->k, e->name,
           (long long)e->inputs[0].shape[0], (long long)e->inputs[0].shape[1],
           (long long)e->inputs[1].shape[0], (long long)e->inputs[1].shape[1]);
    return -1;
  }
  DLManagedTensor *out;
  if (grove_call(s, &out) != 0)
    return -1;
  const DLTensor *o = &out->dl_tensor;
  int ok = o->ndim == 2 && o->shape[0] == s->m && o->shape[1] == s->n;
  double maxdiff = 0, maxref = 0;
  if (ok) {
    call_blas(s);
    const float *y = (const float *)((const char *)o->data + o->byte_offset);
    int64_t s0 = o->strides ? o->strides[0] : s->n,
            s1 = o->strides ? o->strides[1] : 1;
    for (int64_t i = 0; i < s->m; ++i)
      for (int64_t j = 0; j < s->n; ++j) {
        double r = s->c[i * s->n + j], d = y[i * s0 + j * s1] - r;
        if (d < 0)
          d = -d;
        if (r < 0)
          r = -r;
        if (d > maxdiff)
          maxdiff = d;
        if (r > maxref)
          maxref = r;
      }
    ok = maxdiff <=
         1e-4 * (maxref > 1 ? maxref : 1) * (s->k > 64 ? s->k / 64.0 : 1);
  }
  if (!ok)
    printf("note grove %lldx%lldx%lld: result disagrees with cblas_sgemm (ndim "
           "%d, max |diff| %g); skipped\n",
           (long long)s->m, (long long)s->n, (long long)s->k, o->ndim, maxdiff);
  out->deleter(out);
  return ok ? 0 : -1;
}
#endif

/* Median per-call time of `fn` over about `seconds` (after a short warm-up). */
static int64_t sample(call_fn fn, shape_t *s, double seconds, size_t *reps) {
  int64_t warm_end =
      now_ns() + (int64_t)(1e9 * (seconds / 4 < 0.05 ? seconds / 4 : 0.05));
  for (int i = 0; i < 2 || now_ns() < warm_end; ++i)
    if (fn(s) != 0)
      return -1;
  size_t cap = 1 << 14, n = 0;
  int64_t *ts = malloc(cap * sizeof *ts);
  int64_t deadline = now_ns() + (int64_t)(seconds * 1e9);
  for (;;) {
    int64_t t0 = now_ns();
    if (fn(s) != 0) {
      free(ts);
      return -1;
    }
    int64_t t1 = now_ns();
    if (n == cap) {
      cap *= 2;
      ts = realloc(ts, cap * sizeof *ts);
    }
    ts[n++] = t1 - t0;
    if (n >= 1000000 || (n >= 5 && t1 >= deadline))
      break;
  }
  qsort(ts, n, sizeof *ts, cmp_i64);
  int64_t med = ts[n / 2];
  free(ts);
  *reps = n;
  return med;
}

int main(int argc, char **argv) {
  const char *entry_name = NULL, *threads_arg = "1,2";
  double seconds = 0.1, gap = 0.15;
  int rounds = 5;
  shape_t shapes[64];
  int nshapes = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--entry") && i + 1 < argc)
      entry_name = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads_arg = argv[++i];
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
      seconds = atof(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--gap") && i + 1 < argc)
      gap = atof(argv[++i]);
    else {
      long long m, n, k;
      char tail[4] = "";
      int got = sscanf(argv[i], "%lldx%lldx%lld%3s", &m, &n, &k, tail);
      if (nshapes == 64 || got < 3 || (got == 4 && strcmp(tail, "t") != 0) ||
          m <= 0 || n <= 0 || k <= 0) {
        fprintf(stderr,
                "usage: %s [--entry NAME] [--threads 1,2] [--seconds S] "
                "[--rounds R] [--gap S] MxNxK[t]...\n",
                argv[0]);
        return 2;
      }
      shapes[nshapes++] = (shape_t){m, n, k, got == 4, NULL, NULL, NULL, 0};
    }
  }
  int threads[8], nthreads = 0;
  for (const char *p = threads_arg; *p && nthreads < 8;) {
    threads[nthreads++] = atoi(p);
    p = strchr(p, ',');
    if (!p)
      break;
    ++p;
  }
  unsigned seed = 1;
  for (int i = 0; i < nshapes; ++i) {
    shape_t *s = &shapes[i];
    s->a = alloc_rand((size_t)(s->m * s->k), &seed);
    s->b = alloc_rand((size_t)(s->k * s->n), &seed);
    s->c = alloc_rand((size_t)(s->m * s->n), &seed);
  }
  printf("info openblas_corename %s\n", openblas_get_corename());
  printf("info openblas_config %s\n", openblas_get_config());
  int have_grove = 0;
#ifdef GROVE_MODEL_DEF
  if (grove_init(entry_name) == 0) {
    have_grove = 1;
    for (int i = 0; i < nshapes; ++i)
      shapes[i].grove_ok = grove_check(&shapes[i]) == 0;
  }
#else
  (void)entry_name;

#endif
  fflush(stdout);
  /* implementations: 0 = OpenBLAS, 1 = Grove, 2 = oneDNN; the order rotates
   * between rounds */
  const char *impl_name[3] = {"openblas", "grove", "dnnl"};
  int prev_threads = 1;
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < nshapes; ++i)
      for (int t = 0; t < nthreads; ++t) {
        openblas_set_num_threads(threads[t]);
#ifdef _OPENMP
        omp_set_num_threads(threads[t]);
#endif
        for (int j = 0; j < 3; ++j) {
          int impl = (j + r) % 3;
          size_t reps = 0;
          int64_t med = -1;
          if (prev_threads > 1 && gap > 0) {
            struct timespec ts = {(time_t)gap,
                                  (long)((gap - (double)(time_t)gap) * 1e9)};
            nanosleep(&ts, NULL);
          }
          prev_threads = threads[t];
          if (impl == 0)
            med = sample(call_blas, &shapes[i], seconds, &reps);
#ifdef GROVE_MODEL_DEF
          else if (impl == 1 && have_grove && shapes[i].grove_ok)
            med = sample(call_grove, &shapes[i], seconds, &reps);
#endif
#ifdef GEMM_BENCH_DNNL
          else if (impl == 2)
            med = sample(call_dnnl, &shapes[i], seconds, &reps);
#endif
          if (med >= 0)
            printf("sample %s %d %lld %lld %lld%s %lld %zu\n", impl_name[impl],
                   threads[t], (long long)shapes[i].m, (long long)shapes[i].n,
                   (long long)shapes[i].k, shapes[i].tb ? "t" : "",
                   (long long)med, reps);
        }
        fflush(stdout);
      }
  (void)have_grove;
#ifdef GROVE_MODEL_DEF
  grove_context_destroy(ctx);
#endif
  return 0;
}
