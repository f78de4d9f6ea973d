/* train_bert - pre-train the BERT-style encoder of models/bert on the
 * masked-LM corpus of models/bert/make_corpus.py, from C, one compiled
 * train_step (forward, backward, LANS) per batch.
 *
 *   train_bert DATA_DIR [--init FILE] [--resume FILE] [--checkpoint FILE]
 *              [--steps N] [--batch N] [--interval N] [--seed N]
 *              [--valid-batches N] [--expect-loss-below X]
 *
 * DATA_DIR holds make_corpus.py's train.bin and valid.bin (little-endian
 * uint16 ids) and meta.json (the vocabulary size, the special ids and each
 * split's length, read here with a small JSON reader). The app packs each
 * stream into rows of the model's sequence length S, [CLS] + S-2
 * consecutive tokens + [SEP] (models/bert/corpus.py's `sequences`), and
 * masks them itself as BERT does (reference.masking's rule): in each row
 * round(15%) of the ordinary tokens, at least one, are predicted; of those
 * 80% become [MASK], 10% a random ordinary token, 10% stay. Every random
 * choice is a counter-based hash (splitmix64) of the seed, the step and
 * the position, so a batch depends on nothing but (seed, step): the rows
 * of step t are the samples t*B .. t*B+B-1 of a sequence of epochs, each a
 * permutation of the rows drawn from (seed, epoch).
 *
 * The batch B and the sequence S are the compiled model's (--batch only
 * checks); the corpus' vocabulary must be the model's. After every
 * --interval steps (and at the end) it prints the interval's mean training
 * loss, the masked-LM loss (entry mlm_loss) on a fixed set of validation
 * batches (masked from a constant seed, the same at every evaluation and
 * for every --seed), and steps/s and tokens/s of the training steps, and
 * with --checkpoint saves weights and optimizer state there. --init loads
 * generate.py's initial weights (the default is the file the build wrote,
 * where there is one); --resume loads a checkpoint instead and goes on from
 * the step its i64 `lans.step` holds: the batches depend only on the step,
 * so the run continues bit-identically to one that never stopped (given
 * the same --seed and the same thread count). --steps is the step to stop
 * at, counted from the start of training. --expect-loss-below exits 1 if
 * the final validation loss is not below X.
 *
 * Threads: the runtime has no option for them; its team is OpenMP's
 * (OMP_NUM_THREADS). */
#define _POSIX_C_SOURCE 200809L

#include "bert.h"

#include "../common/progress.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The validation batches are masked from this seed, whatever --seed is, so
 * validation losses of runs with different seeds compare. */
#define VALID_SEED 0x5eed0fba11dULL
#define MASK_RATE 0.15

static int fail(const char *what, grove_status s) {
  fprintf(stderr, "train_bert: %s: %s: %s\n", what, grove_status_string(s),
          grove_last_error());
  return 1;
}

static int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("train_bert: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/*--- Files ----------------------------------------------------------------*/

/* The whole file, NUL-terminated (for the JSON reader). */
static int read_file(const char *path, char **data, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return error("cannot open %s: %s", path, strerror(errno));
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (cap - n < 65536) {
      cap = cap ? cap * 2 : 1 << 20;
      char *grown = realloc(buf, cap + 1);
      if (!grown) {
        free(buf);
        fclose(f);
        return error("out of memory reading %s", path);
      }
      buf = grown;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0)
      break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return error("cannot read %s", path);
  }
  buf[n] = 0;
  *data = buf;
  *size = n;
  return 0;
}

/*--- meta.json: just enough JSON to find a few integers --------------------*/

typedef struct {
  const char *p, *end;
} json;

static void json_ws(json *j) {
  while (j->p < j->end &&
         (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    ++j->p;
}

/* A string at j->p: *s and *n get its bytes as written (escapes kept). */
static int json_string(json *j, const char **s, size_t *n) {
  if (j->p >= j->end || *j->p != '"')
    return 1;
  const char *start = ++j->p;
  while (j->p < j->end && *j->p != '"') {
    if (*j->p == '\\' && ++j->p >= j->end)
      return 1;
    ++j->p;
  }
  if (j->p >= j->end)
    return 1;
  *s = start;
  *n = (size_t)(j->p - start);
  ++j->p;
  return 0;
}

/* A member's key and its colon, from j->p (white space first). */
static int json_key(json *j, const char **s, size_t *n) {
  json_ws(j);
  if (json_string(j, s, n))
    return 1;
  json_ws(j);
  if (j->p >= j->end || *j->p != ':')
    return 1;
  ++j->p;
  return 0;
}

static int json_skip(json *j, int depth) {
  json_ws(j);
  if (j->p >= j->end || depth > 32)
    return 1;
  char c = *j->p;
  const char *s;
  size_t n;
  if (c == '"')
    return json_string(j, &s, &n);
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    ++j->p;
    json_ws(j);
    if (j->p < j->end && *j->p == close) {
      ++j->p;
      return 0;
    }
    for (;;) {
      if (c == '{' && json_key(j, &s, &n))
        return 1;
      if (json_skip(j, depth + 1))
        return 1;
      json_ws(j);
      if (j->p >= j->end)
        return 1;
      if (*j->p == ',')
        ++j->p;
      else if (*j->p++ == close)
        return 0;
      else
        return 1;
    }
  }
  const char *start = j->p; /* a number, true, false or null */
  while (j->p < j->end && (isalnum((unsigned char)*j->p) || *j->p == '-' ||
                           *j->p == '+' || *j->p == '.'))
    ++j->p;
  return j->p == start;
}

/* Moves j from an object to the value of its member `key`. */
static int json_member(json *j, const char *key) {
  json_ws(j);
  if (j->p >= j->end || *j->p != '{')
    return 1;
  ++j->p;
  for (;;) {
    const char *s;
    size_t n;
    if (json_key(j, &s, &n))
      return 1;
    if (n == strlen(key) && !memcmp(s, key, n)) {
      json_ws(j);
      return 0;
    }
    if (json_skip(j, 1))
      return 1;
    json_ws(j);
    if (j->p >= j->end || *j->p != ',')
      return 1; /* the object ended without it */
    ++j->p;
  }
}

/* The integer at doc.key1[.key2]. */
static int json_int(const char *path, const char *doc, size_t size,
                    const char *key1, const char *key2, int64_t *out) {
  json j = {doc, doc + size};
  if (json_member(&j, key1) || (key2 && json_member(&j, key2)))
    return error("%s: no member %s%s%s", path, key1, key2 ? "." : "",
                 key2 ? key2 : "");
  char *end;
  errno = 0;
  long long v = strtoll(j.p, &end, 10);
  if (end == j.p || errno || *end == '.' || *end == 'e' || *end == 'E')
    return error("%s: %s%s%s is not an integer", path, key1, key2 ? "." : "",
                 key2 ? key2 : "");
  *out = v;
  return 0;
}

/*--- The corpus -----------------------------------------------------------*/

typedef struct {
  uint16_t *train, *valid;
  size_t n_train, n_valid;
  int64_t vocab;
  int32_t pad, unk, cls, sep, mask;
} corpus;

static int is_special(const corpus *c, int32_t t) {
  return t == c->pad || t == c->unk || t == c->cls || t == c->sep ||
         t == c->mask;
}

/* DIR/NAME.bin: `expect` little-endian uint16 ids, each below the
 * vocabulary. */
static int read_split(const char *dir, const char *name, int64_t expect,
                      int64_t vocab, uint16_t **out, size_t *n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.bin", dir, name);
  char *raw;
  size_t size;
  if (read_file(path, &raw, &size))
    return 1;
  if (size % 2) {
    free(raw);
    return error("%s: %zu bytes, not a whole number of uint16 ids", path, size);
  }
  if ((int64_t)(size / 2) != expect) {
    free(raw);
    return error("%s holds %zu ids, meta.json says %lld (tokens_with_sep): "
                 "rebuild the corpus (models/bert/make_corpus.py)",
                 path, size / 2, (long long)expect);
  }
  uint16_t *t = malloc(size ? size : 1);
  if (!t) {
    free(raw);
    return error("out of memory for %s", path);
  }
  const unsigned char *b = (const unsigned char *)raw;
  for (size_t i = 0; i < size / 2; ++i) {
    t[i] = (uint16_t)(b[2 * i] | b[2 * i + 1] << 8);
    if (t[i] >= vocab) {
      free(raw);
      free(t);
      return error("%s: id %u at token %zu is outside the vocabulary of %lld",
                   path, t[i], i, (long long)vocab);
    }
  }
  free(raw);
  *out = t;
  *n = size / 2;
  return 0;
}

static int load_corpus(const char *dir, corpus *c) {
  char path[4096];
  snprintf(path, sizeof path, "%s/meta.json", dir);
  char *doc;
  size_t size;
  if (read_file(path, &doc, &size))
    return 1;
  int64_t format, v, ids[5], train_n, valid_n;
  static const char *const SPECIAL[5] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                         "[MASK]"};
  int bad = json_int(path, doc, size, "format", NULL, &format) ||
            json_int(path, doc, size, "vocab_size", NULL, &v) ||
            json_int(path, doc, size, "train", "tokens_with_sep", &train_n) ||
            json_int(path, doc, size, "valid", "tokens_with_sep", &valid_n);
  for (int i = 0; i < 5 && !bad; ++i)
    bad = json_int(path, doc, size, "special_tokens", SPECIAL[i], &ids[i]);
  free(doc);
  if (bad)
    return 1;
  if (format != 1)
    return error("%s: format %lld, this reader knows format 1", path,
                 (long long)format);
  if (v < 6 || v > 65536)
    return error("%s: vocab_size %lld outside [6, 65536]", path, (long long)v);
  for (int i = 0; i < 5; ++i)
    if (ids[i] < 0 || ids[i] >= v)
      return error("%s: special_tokens.%s = %lld outside the vocabulary", path,
                   SPECIAL[i], (long long)ids[i]);
  if (train_n < 0 || valid_n < 0)
    return error("%s: negative token counts", path);
  c->vocab = v;
  c->pad = (int32_t)ids[0];
  c->unk = (int32_t)ids[1];
  c->cls = (int32_t)ids[2];
  c->sep = (int32_t)ids[3];
  c->mask = (int32_t)ids[4];
  c->train = c->valid = NULL;
  if (read_split(dir, "train", train_n, v, &c->train, &c->n_train) ||
      read_split(dir, "valid", valid_n, v, &c->valid, &c->n_valid)) {
    free(c->train);
    return 1;
  }
  return 0;
}

/*--- Counter-based randomness ---------------------------------------------*/

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/* What each draw is for, so no two uses share a stream. */
enum { DRAW_ORDER = 1, DRAW_PICK, DRAW_KIND, DRAW_TOKEN };

static uint64_t draw(uint64_t seed, uint64_t what, uint64_t a, uint64_t b) {
  return splitmix64(splitmix64(splitmix64(seed ^ splitmix64(what)) ^ a) ^ b);
}

static double unit(uint64_t h) { return (h >> 11) * 0x1.0p-53; }

/*--- Batches --------------------------------------------------------------*/

typedef struct {
  int64_t B, S, V;
  const corpus *c;
  int32_t *ids, *positions, *labels; /* B*S each */
  int64_t m;                         /* positions used */
  /* Masking scratch: one row's candidates and their draws. */
  uint64_t *keys;
  int32_t *cand;
  unsigned char *chosen;
} batch;

/* Row r of a stream: [CLS], its S-2 tokens, [SEP]. */
static void fill_row(int32_t *dst, const uint16_t *stream, int64_t r,
                     const batch *b) {
  const uint16_t *src = stream + r * (b->S - 2);
  dst[0] = b->c->cls;
  for (int64_t s = 1; s < b->S - 1; ++s)
    dst[s] = src[s - 1];
  dst[b->S - 1] = b->c->sep;
}

static const uint64_t *sort_keys;
static int by_key(const void *x, const void *y) {
  int32_t i = *(const int32_t *)x, k = *(const int32_t *)y;
  uint64_t a = sort_keys[i], c = sort_keys[k];
  return a < c ? -1 : a > c ? 1 : (i > k) - (i < k);
}

/* BERT's masking of the rows in b->ids, drawn from (seed, index): index is
 * the step for training batches, the batch number for validation ones.
 * Fills positions and labels (b->m of them, increasing flat positions). */
static void mask_batch(batch *b, uint64_t seed, uint64_t index) {
  const corpus *c = b->c;
  b->m = 0;
  for (int64_t r = 0; r < b->B; ++r) {
    int32_t *row = b->ids + r * b->S;
    int32_t n = 0;
    for (int64_t s = 0; s < b->S; ++s) {
      b->chosen[s] = 0;
      if (!is_special(c, row[s])) {
        b->keys[s] = draw(seed, DRAW_PICK, index, (uint64_t)(r * b->S + s));
        b->cand[n++] = (int32_t)s;
      }
    }
    if (n == 0)
      continue;
    /* The k candidates with the smallest draws: a uniform k-subset. */
    long k = lrint(MASK_RATE * n);
    if (k < 1)
      k = 1;
    sort_keys = b->keys;
    qsort(b->cand, (size_t)n, sizeof(int32_t), by_key);
    for (long i = 0; i < k; ++i)
      b->chosen[b->cand[i]] = 1;
    for (int64_t s = 0; s < b->S; ++s) {
      if (!b->chosen[s])
        continue;
      uint64_t flat = (uint64_t)(r * b->S + s);
      b->positions[b->m] = (int32_t)flat;
      b->labels[b->m++] = row[s];
      double u = unit(draw(seed, DRAW_KIND, index, flat));
      if (u < 0.8) {
        row[s] = c->mask;
      } else if (u < 0.9) {
        int32_t t;
        uint64_t attempt = 0;
        do /* uniform over the ordinary ids */
          t = (int32_t)(draw(seed, DRAW_TOKEN, index,
                             flat + (attempt++ << 32)) %
                        (uint64_t)c->vocab);
        while (is_special(c, t));
        row[s] = t;
      }
    }
  }
}

/* The order of the training rows in an epoch: a permutation drawn from
 * (seed, epoch), kept for the epoch last asked for. */
typedef struct {
  int64_t rows, epoch;
  uint32_t *perm;
  uint64_t seed;
} order;

static uint32_t row_of(order *o, int64_t sample) {
  int64_t e = sample / o->rows, i = sample % o->rows;
  if (e != o->epoch) {
    for (int64_t k = 0; k < o->rows; ++k)
      o->perm[k] = (uint32_t)k;
    for (int64_t k = o->rows - 1; k > 0; --k) {
      int64_t j =
          (int64_t)(draw(o->seed, DRAW_ORDER, (uint64_t)e, (uint64_t)k) %
                    (uint64_t)(k + 1));
      uint32_t t = o->perm[k];
      o->perm[k] = o->perm[j];
      o->perm[j] = t;
    }
    o->epoch = e;
  }
  return o->perm[i];
}

/* The batch of training step t (0-based: the steps taken before it). */
static void train_batch(batch *b, order *o, int64_t t) {
  for (int64_t r = 0; r < b->B; ++r)
    fill_row(b->ids + r * b->S, b->c->train, row_of(o, t * b->B + r), b);
  mask_batch(b, o->seed, (uint64_t)t);
}

/* Validation batch v: rows v*B .. v*B+B-1 of valid.bin, in order. */
static void valid_batch(batch *b, int64_t v) {
  for (int64_t r = 0; r < b->B; ++r)
    fill_row(b->ids + r * b->S, b->c->valid, v * b->B + r, b);
  mask_batch(b, VALID_SEED, (uint64_t)v);
}

typedef struct {
  DLTensor ids, positions, labels;
  int64_t ids_shape[2], m_shape[1];
} args;

static void make_args(args *a, batch *b) {
  a->ids_shape[0] = b->B;
  a->ids_shape[1] = b->S;
  a->m_shape[0] = b->m;
  DLTensor t = {NULL, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, a->m_shape, NULL, 0};
  a->ids = t;
  a->ids.data = b->ids;
  a->ids.ndim = 2;
  a->ids.shape = a->ids_shape;
  a->positions = t;
  a->positions.data = b->positions;
  a->labels = t;
  a->labels.data = b->labels;
}

/* A scalar loss (f32, or f64 for generate.py --dtype f64), released. */
static double take_loss(DLManagedTensor *t) {
  const DLTensor *l = &t->dl_tensor;
  double v =
      l->dtype.bits == 64 ? *(const double *)l->data : *(const float *)l->data;
  t->deleter(t);
  return v;
}

/* The masked-LM loss over validation batches 0..n-1, weighted by their
 * masked tokens (the mean over all of them). */
static int evaluate(grove_context *ctx, batch *b, int64_t n, double *loss,
                    int64_t *tokens) {
  double sum = 0;
  int64_t m = 0;
  for (int64_t v = 0; v < n; ++v) {
    valid_batch(b, v);
    if (b->m == 0)
      continue;
    args a;
    make_args(&a, b);
    DLManagedTensor *out = NULL;
    grove_status s = bert_mlm_loss(ctx, &a.ids, &a.positions, &a.labels, &out);
    if (s != GROVE_OK)
      return fail("mlm_loss", s);
    sum += take_loss(out) * (double)b->m;
    m += b->m;
  }
  if (m == 0)
    return error("the validation batches have no maskable tokens");
  *loss = sum / (double)m;
  *tokens = m;
  return 0;
}

static void progress(int64_t step, int64_t first, int64_t steps, double loss) {
  progress_bar((uint64_t)(step - first), (uint64_t)(steps - first),
               "step %lld/%lld loss %.4f", (long long)step, (long long)steps,
               loss);
}

/*--- The model ------------------------------------------------------------*/

/* B, S from train_step's input_ids, V from mlm_logits' logits. */
static int model_sizes(grove_context *ctx, int64_t *B, int64_t *S, int64_t *V) {
  uint32_t index;
  const grove_entry_sig *sig;
  grove_status s;
  if ((s = grove_context_find_entry(ctx, "train_step", &index)) ||
      (s = grove_context_entry(ctx, index, &sig)))
    return fail("the model's train_step", s);
  if (sig->num_inputs != 3 || sig->inputs[0].ndim != 2 ||
      sig->inputs[0].shape[0] < 1 || sig->inputs[0].shape[1] < 3)
    return error("train_step's input_ids is not [B, S] with a static batch "
                 "and S >= 3");
  *B = sig->inputs[0].shape[0];
  *S = sig->inputs[0].shape[1];
  if ((s = grove_context_find_entry(ctx, "mlm_logits", &index)) ||
      (s = grove_context_entry(ctx, index, &sig)))
    return fail("the model's mlm_logits", s);
  if (sig->num_outputs != 1 || sig->outputs[0].ndim != 2 ||
      sig->outputs[0].shape[1] < 1)
    return error("mlm_logits' output is not [M, V]");
  *V = sig->outputs[0].shape[1];
  return 0;
}

static int64_t weight_count(grove_context *ctx) {
  int64_t total = 0;
  for (uint32_t i = 0; i < grove_context_num_params(ctx); ++i) {
    const grove_tensor_sig *sig;
    grove_param_kind kind;
    if (grove_context_param(ctx, i, &sig) ||
        grove_context_param_kind(ctx, i, &kind) || kind != GROVE_PARAM_WEIGHT)
      continue;
    int64_t n = 1;
    for (int32_t d = 0; d < sig->ndim; ++d)
      n *= sig->shape[d];
    total += n;
  }
  return total;
}

/* The steps a context holds: LANS' i64 counter. */
static int steps_done(grove_context *ctx, int64_t *steps) {
  DLTensor t;
  grove_status s = grove_context_get_weight(ctx, "lans.step", &t);
  if (s != GROVE_OK)
    return fail("grove_context_get_weight(lans.step)", s);
  if (t.ndim != 0 || t.dtype.code != kDLInt || t.dtype.bits != 64)
    return error("lans.step is not an i64 scalar");
  *steps = *(const int64_t *)t.data;
  if (*steps < 0)
    return error("lans.step is %lld", (long long)*steps);
  return 0;
}

/*--- Options --------------------------------------------------------------*/

static int parse_int(const char *name, const char *text, int64_t min,
                     int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (end == text || *end || errno || v < min)
    return error("%s '%s': expected an integer >= %lld", name, text,
                 (long long)min);
  *out = v;
  return 0;
}

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s DATA_DIR [--init FILE] [--resume FILE] "
          "[--checkpoint FILE]\n"
          "       [--steps N] [--batch N] [--interval N] [--seed N] "
          "[--valid-batches N]\n"
          "       [--expect-loss-below X]\n"
          "DATA_DIR: models/bert/make_corpus.py's output (train.bin, "
          "valid.bin, meta.json)\n",
          argv0);
  return 2;
}

#ifndef TRAIN_BERT_STEPS
#define TRAIN_BERT_STEPS 0 /* --steps needed */
#endif

int main(int argc, char **argv) {
  const char *data = NULL, *init = NULL, *resume = NULL, *checkpoint = NULL;
#ifdef TRAIN_BERT_INIT
  init = TRAIN_BERT_INIT;
#endif
  int64_t steps = TRAIN_BERT_STEPS, batch_opt = 0, interval = 100, seed = 0,
          valid_batches = 8;
  double expect = NAN;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (a[0] != '-' || !a[1]) {
      if (data)
        return usage(argv[0]);
      data = a;
      continue;
    }
    if (i + 1 >= argc)
      return usage(argv[0]);
    const char *v = argv[++i];
    int bad = 0;
    if (!strcmp(a, "--init"))
      init = v;
    else if (!strcmp(a, "--resume"))
      resume = v;
    else if (!strcmp(a, "--checkpoint"))
      checkpoint = v;
    else if (!strcmp(a, "--steps"))
      bad = parse_int(a, v, 1, &steps);
    else if (!strcmp(a, "--batch"))
      bad = parse_int(a, v, 1, &batch_opt);
    else if (!strcmp(a, "--interval"))
      bad = parse_int(a, v, 1, &interval);
    else if (!strcmp(a, "--seed"))
      bad = parse_int(a, v, 0, &seed);
    else if (!strcmp(a, "--valid-batches"))
      bad = parse_int(a, v, 1, &valid_batches);
    else if (!strcmp(a, "--expect-loss-below")) {
      char *end;
      expect = strtod(v, &end);
      if (end == v || *end || !isfinite(expect))
        bad = error("--expect-loss-below '%s': expected a number", v);
    } else
      return usage(argv[0]);
    if (bad)
      return 2;
  }
  if (!data)
    return usage(argv[0]);
  if (steps < 1) {
    error("--steps N is needed (this build has no default)");
    return 2;
  }
  if (!resume && !init) {
    error("no weights: --init FILE (models/bert/generate.py --init) or "
          "--resume FILE");
    return 2;
  }

  grove_context *ctx;
  grove_status s = grove_context_create(&bert_model, &ctx);
  if (s != GROVE_OK)
    return fail("grove_context_create", s);
  int64_t B = 0, S = 0, V = 0;
  if (model_sizes(ctx, &B, &S, &V))
    return 1;
  if (batch_opt && batch_opt != B)
    return error("--batch %lld: this train_bert is linked with a model "
                 "compiled for batch %lld (models/bert/generate.py --batch)",
                 (long long)batch_opt, (long long)B);

  corpus c;
  if (load_corpus(data, &c))
    return 1;
  if (c.vocab != V)
    return error("%s has a vocabulary of %lld, the model %lld "
                 "(models/bert/generate.py --vocab)",
                 data, (long long)c.vocab, (long long)V);
  int64_t train_rows = (int64_t)c.n_train / (S - 2);
  int64_t valid_rows = (int64_t)c.n_valid / (S - 2);
  if (train_rows < B)
    return error("train.bin holds %lld rows of %lld tokens, fewer than a "
                 "batch of %lld",
                 (long long)train_rows, (long long)S, (long long)B);
  if (valid_rows < B)
    return error("valid.bin holds %lld rows of %lld tokens, fewer than a "
                 "batch of %lld",
                 (long long)valid_rows, (long long)S, (long long)B);
  if (valid_batches > valid_rows / B)
    valid_batches = valid_rows / B;

  const char *weights = resume ? resume : init;
  if ((s = grove_context_load_weights(ctx, weights)) != GROVE_OK)
    return fail("grove_context_load_weights", s);
  int64_t done = 0;
  if (steps_done(ctx, &done))
    return 1;
  if (done > steps)
    return error("%s is at step %lld, past --steps %lld", weights,
                 (long long)done, (long long)steps);

  printf("BERT masked LM: %.2fM weights, batch %lld, sequence %lld, "
         "vocabulary %lld\n",
         weight_count(ctx) / 1e6, (long long)B, (long long)S, (long long)V);
  printf("corpus %s: %lld training rows (%.1f steps an epoch), %lld "
         "validation batches\n",
         data, (long long)train_rows, (double)train_rows / B,
         (long long)valid_batches);
  if (resume)
    printf("resumed from %s at step %lld\n", resume, (long long)done);

  batch b = {B, S, V, &c, NULL, NULL, NULL, 0, NULL, NULL, NULL};
  order o = {train_rows, -1, NULL, (uint64_t)seed};
  size_t n = (size_t)(B * S);
  b.ids = malloc(n * sizeof(int32_t));
  b.positions = malloc(n * sizeof(int32_t));
  b.labels = malloc(n * sizeof(int32_t));
  b.keys = malloc((size_t)S * sizeof(uint64_t));
  b.cand = malloc((size_t)S * sizeof(int32_t));
  b.chosen = malloc((size_t)S);
  o.perm = malloc((size_t)train_rows * sizeof(uint32_t));
  if (!b.ids || !b.positions || !b.labels || !b.keys || !b.cand || !b.chosen ||
      !o.perm)
    return error("out of memory");

  double first_valid, valid;
  int64_t valid_tokens;
  if (evaluate(ctx, &b, valid_batches, &first_valid, &valid_tokens))
    return 1;
  valid = first_valid;
  printf("step %lld: valid loss %.6f (%lld masked tokens)\n", (long long)done,
         first_valid, (long long)valid_tokens);
  fflush(stdout);

  int width = snprintf(NULL, 0, "%lld", (long long)steps);
  double sum = 0, train_seconds = 0;
  int64_t in_interval = 0;
  for (int64_t t = done; t < steps; ++t) {
    train_batch(&b, &o, t);
    if (b.m == 0)
      return error("step %lld: the batch has no maskable tokens",
                   (long long)t + 1);
    args a;
    make_args(&a, &b);
    DLManagedTensor *out = NULL;
    double t0 = now();
    s = bert_train_step(ctx, &a.ids, &a.positions, &a.labels, &out);
    train_seconds += now() - t0;
    if (s != GROVE_OK) {
      progress_end();
      return fail("train_step", s);
    }
    double loss = take_loss(out);
    if (!isfinite(loss)) {
      progress_end();
      return error("step %lld: the training loss is %g", (long long)t + 1,
                   loss);
    }
    sum += loss;
    ++in_interval;
    progress(t + 1, done, steps, sum / in_interval);
    if ((t + 1) % interval && t + 1 != steps)
      continue;
    progress_end();
    if (evaluate(ctx, &b, valid_batches, &valid, &valid_tokens))
      return 1;
    printf("step %*lld/%lld: train loss %.6f, valid loss %.6f | %.2f "
           "steps/s, %.0f tokens/s\n",
           width, (long long)t + 1, (long long)steps, sum / in_interval, valid,
           in_interval / train_seconds, in_interval * B * S / train_seconds);
    fflush(stdout);
    if (checkpoint &&
        (s = grove_context_save_weights(ctx, checkpoint)) != GROVE_OK)
      return fail("grove_context_save_weights", s);
    sum = train_seconds = 0;
    in_interval = 0;
  }
  printf("final valid loss %.9g at step %lld (from %.9g at step %lld)\n", valid,
         (long long)steps, first_valid, (long long)done);

  free(b.ids);
  free(b.positions);
  free(b.labels);
  free(b.keys);
  free(b.cand);
  free(b.chosen);
  free(o.perm);
  free(c.train);
  free(c.valid);
  grove_context_destroy(ctx);
  if (!isnan(expect) && !(valid < expect))
    return error("final validation loss %.6f is not below %.6f", valid, expect);
  return 0;
}
