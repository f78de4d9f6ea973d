/* train_trees - train a Tree-LSTM from scratch on the syntax trees of the
 * Python standard library, with its compiled train step, and report the
 * held-out accuracy.
 *
 *   train_trees DATA.bin [--model child-sum|binary] [--epochs N]
 *               [--batch B] [--expect-accuracy A]
 *
 * DATA.bin comes from make_data.py (--binary for the binary model): every
 * function of ten stdlib packages, labelled by its package. Each
 * train_step call is one Adam step on a batch of trees, passed as one
 * forest in CSR child lists (docs/trees.md): the compiled code runs the
 * cell level by level over the whole batch, forward and backward. After
 * each epoch it prints the mean loss and the held-out accuracy next to the
 * majority-class baseline; --expect-accuracy exits 1 below A. */
#include "treelstm.h"
#include "treelstm_binary.h"

#include "../common/train_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The model's sizes (models/treelstm/README.md). */
enum { VOCAB = 512, EMBED = 32, HIDDEN = 64, CLASSES = 10 };

typedef struct {
  int32_t nodes, label;
  int32_t *offsets, *children, *tokens; /* nodes + 1, nodes - 1, nodes */
} tree;

typedef struct {
  int32_t vocab, classes, train, test;
  tree *trees; /* train, then test */
} corpus;

typedef struct {
  grove_status (*forward)(grove_context *, const DLTensor *, const DLTensor *,
                          const DLTensor *, const DLTensor *,
                          DLManagedTensor **);
  grove_status (*train_step)(grove_context *, const DLTensor *,
                             const DLTensor *, const DLTensor *,
                             const DLTensor *, const DLTensor *,
                             DLManagedTensor **);
  const grove_model_def *def;
  int binary;
} model;

static int read_ints(FILE *f, int32_t *out, size_t n) {
  return fread(out, sizeof(int32_t), n, f) == n ? 0 : 1;
}

/* Reads make_data.py's file; checks every count it trusts. */
static int load(const char *path, corpus *c) {
  FILE *f = fopen(path, "rb");
  char magic[8];
  int32_t counts[4];
  if (!f || fread(magic, 1, 8, f) != 8 || memcmp(magic, "GTREES1", 8) ||
      read_ints(f, counts, 4)) {
    fprintf(stderr, "%s: not a make_data.py corpus\n", path);
    return 1;
  }
  c->vocab = counts[0];
  c->classes = counts[1];
  c->train = counts[2];
  c->test = counts[3];
  int32_t total = c->train + c->test;
  if (c->vocab > VOCAB || c->classes != CLASSES || c->train < 1 ||
      c->test < 1 || total < 0) {
    fprintf(stderr,
            "%s: %d tokens, %d classes: the model takes at most %d "
            "and exactly %d\n",
            path, c->vocab, c->classes, VOCAB, CLASSES);
    return 1;
  }
  c->trees = calloc((size_t)total, sizeof(tree));
  for (int32_t i = 0; c->trees && i < total; ++i) {
    tree *t = &c->trees[i];
    int32_t head[2];
    if (read_ints(f, head, 2) || head[0] < 1 || head[0] > 100000 ||
        head[1] < 0 || head[1] >= CLASSES)
      return fprintf(stderr, "%s: tree %d is truncated\n", path, i), 1;
    t->nodes = head[0];
    t->label = head[1];
    t->offsets = malloc(sizeof(int32_t) * (t->nodes + 1));
    t->children = malloc(sizeof(int32_t) * t->nodes);
    t->tokens = malloc(sizeof(int32_t) * t->nodes);
    if (!t->offsets || !t->children || !t->tokens ||
        read_ints(f, t->offsets, t->nodes + 1) ||
        read_ints(f, t->children, t->nodes - 1) ||
        read_ints(f, t->tokens, t->nodes))
      return fprintf(stderr, "%s: tree %d is truncated\n", path, i), 1;
  }
  fclose(f);
  return c->trees ? 0 : 1;
}

/* A batch of trees as one forest (the runtime validates it). */
typedef struct {
  int32_t *offsets, *children, *roots, *tokens, *labels;
  int64_t nodes, edges, trees;
} batch;

static void gather(const corpus *c, const uint32_t *ids, uint32_t n, batch *b) {
  b->nodes = b->edges = 0;
  b->trees = n;
  b->offsets[0] = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const tree *t = &c->trees[ids[i]];
    int32_t base = (int32_t)b->nodes;
    for (int32_t v = 0; v < t->nodes; ++v) {
      b->offsets[b->nodes + v + 1] = (int32_t)b->edges + t->offsets[v + 1];
      b->tokens[b->nodes + v] = t->tokens[v];
    }
    for (int32_t e = 0; e < t->nodes - 1; ++e)
      b->children[b->edges + e] = base + t->children[e];
    b->roots[i] = base;
    b->labels[i] = t->label;
    b->nodes += t->nodes;
    b->edges += t->nodes - 1;
  }
}

/* Calls forward (logits) or train_step (loss) on the batch. */
static grove_status run(const model *m, grove_context *ctx, batch *b, int train,
                        DLManagedTensor **out) {
  int64_t no = b->nodes + 1, ne = b->edges, nt = b->trees, nn = b->nodes;
  DLDataType i32 = {kDLInt, 32, 1};
  DLTensor off = {b->offsets, {kDLCPU, 0}, 1, i32, &no, NULL, 0};
  DLTensor ch = {b->children, {kDLCPU, 0}, 1, i32, &ne, NULL, 0};
  DLTensor roots = {b->roots, {kDLCPU, 0}, 1, i32, &nt, NULL, 0};
  DLTensor tokens = {b->tokens, {kDLCPU, 0}, 1, i32, &nn, NULL, 0};
  DLTensor labels = {b->labels, {kDLCPU, 0}, 1, i32, &nt, NULL, 0};
  return train ? m->train_step(ctx, &off, &ch, &roots, &tokens, &labels, out)
               : m->forward(ctx, &off, &ch, &roots, &tokens, out);
}

/* Uniform(-bound, bound) into `name` of `count` floats (bound 0: zeros). */
static int init(grove_context *ctx, const char *name, int64_t rows,
                int64_t cols, float bound) {
  int64_t count = rows * (cols ? cols : 1), shape[2] = {rows, cols};
  float *w = malloc(sizeof(float) * count);
  if (!w)
    return 1;
  for (int64_t i = 0; i < count; ++i)
    w[i] = bound * (float)(2 * next_unit() - 1);
  DLTensor t = {w, {kDLCPU, 0}, cols ? 2 : 1, {kDLFloat, 32, 1}, shape, NULL,
                0};
  grove_status s = grove_context_set_weight(ctx, name, &t);
  free(w);
  return s == GROVE_OK ? 0 : fail(name, s);
}

/* PyTorch's nn.Linear bounds (1/sqrt(fan_in)); the embedding as U(-1, 1). */
static int init_model(const model *m, grove_context *ctx) {
  float d = 1.0f / sqrtf(EMBED), h = 1.0f / sqrtf(HIDDEN);
  int g = m->binary ? 5 : 3, bad = init(ctx, "embed", VOCAB, EMBED, 1.0f);
  if (m->binary) {
    bad |= init(ctx, "gates.W", EMBED, g * HIDDEN, d);
    bad |= init(ctx, "gates.U0", HIDDEN, g * HIDDEN, h);
    bad |= init(ctx, "gates.U1", HIDDEN, g * HIDDEN, h);
    bad |= init(ctx, "gates.b", g * HIDDEN, 0, 0);
  } else {
    bad |= init(ctx, "iou.W", EMBED, g * HIDDEN, d);
    bad |= init(ctx, "iou.U", HIDDEN, g * HIDDEN, h);
    bad |= init(ctx, "iou.b", g * HIDDEN, 0, 0);
    bad |= init(ctx, "f.W", EMBED, HIDDEN, d);
    bad |= init(ctx, "f.U", HIDDEN, HIDDEN, h);
    bad |= init(ctx, "f.b", HIDDEN, 0, 0);
  }
  bad |= init(ctx, "out.weight", CLASSES, HIDDEN, h);
  bad |= init(ctx, "out.bias", CLASSES, 0, h);
  return bad;
}

/* The held-out share classified right, in batches of 256 trees. */
static int evaluate(const model *m, grove_context *ctx, const corpus *c,
                    batch *b, uint32_t *ids, double *accuracy) {
  uint32_t correct = 0;
  for (uint32_t start = 0; start < (uint32_t)c->test; start += 256) {
    uint32_t n = c->test - start < 256 ? c->test - start : 256;
    for (uint32_t i = 0; i < n; ++i)
      ids[i] = c->train + start + i;
    gather(c, ids, n, b);
    DLManagedTensor *logits = NULL;
    grove_status s = run(m, ctx, b, 0, &logits);
    if (s != GROVE_OK)
      return fail("forward", s);
    const float *y = logits->dl_tensor.data;
    for (uint32_t i = 0; i < n; ++i) {
      int best = 0;
      for (int k = 1; k < CLASSES; ++k)
        if (y[i * CLASSES + k] > y[i * CLASSES + best])
          best = k;
      correct += best == b->labels[i];
    }
    logits->deleter(logits);
  }
  *accuracy = (double)correct / c->test;
  return 0;
}

int main(int argc, char **argv) {
  const char *data = NULL;
  int epochs = 8, binary = 0, size = 32;
  double expect = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--model") && i + 1 < argc)
      binary = !strcmp(argv[++i], "binary");
    else if (!strcmp(argv[i], "--epochs") && i + 1 < argc)
      epochs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
      size = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--expect-accuracy") && i + 1 < argc)
      expect = atof(argv[++i]);
    else if (!data && argv[i][0] != '-')
      data = argv[i];
    else
      data = NULL, i = argc;
  }
  if (!data || epochs < 1 || size < 1 || size > 256) {
    fprintf(stderr, "usage: train_trees DATA.bin [--model child-sum|binary] "
                    "[--epochs N] [--batch B<=256] [--expect-accuracy A]\n");
    return 2;
  }
  corpus c;
  if (load(data, &c))
    return 1;
  model m = {treelstm_forward, treelstm_train_step, &treelstm_model, 0};
  if (binary)
    m = (model){treelstm_binary_forward, treelstm_binary_train_step,
                &treelstm_binary_model, 1};

  /* Room for the largest batch: 256 trees of the longest ones. */
  int64_t most = 0;
  for (int32_t i = 0; i < c.train + c.test; ++i)
    most = c.trees[i].nodes > most ? c.trees[i].nodes : most;
  most *= 256;
  batch b = {malloc(sizeof(int32_t) * (most + 1)),
             malloc(sizeof(int32_t) * most),
             malloc(sizeof(int32_t) * 256),
             malloc(sizeof(int32_t) * most),
             malloc(sizeof(int32_t) * 256),
             0,
             0,
             0};
  uint32_t *order = malloc(sizeof(uint32_t) * c.train);
  uint32_t *ids = malloc(sizeof(uint32_t) * 256);
  if (!b.offsets || !b.children || !b.roots || !b.tokens || !b.labels ||
      !order || !ids)
    return 1;
  for (uint32_t i = 0; i < (uint32_t)c.train; ++i)
    order[i] = i;

  grove_context *ctx = NULL;
  grove_status s = grove_context_create(m.def, &ctx);
  if (s != GROVE_OK)
    return fail("grove_context_create", s);
  if (init_model(&m, ctx))
    return 1;

  uint32_t counts[CLASSES] = {0}, majority = 0;
  for (int32_t i = c.train; i < c.train + c.test; ++i)
    ++counts[c.trees[i].label];
  for (int k = 0; k < CLASSES; ++k)
    majority = counts[k] > majority ? counts[k] : majority;
  printf("%s Tree-LSTM: %d training and %d held-out trees, batch %d; "
         "majority class %.1f%%\n",
         binary ? "binary" : "child-sum", c.train, c.test, size,
         100.0 * majority / c.test);

  double accuracy = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    shuffle(order, c.train);
    double sum = 0;
    uint32_t steps = 0;
    for (uint32_t start = 0; start < (uint32_t)c.train; start += size) {
      uint32_t left = c.train - start,
               n = left < (uint32_t)size ? left : (uint32_t)size;
      gather(&c, order + start, n, &b);
      DLManagedTensor *loss = NULL;
      if ((s = run(&m, ctx, &b, 1, &loss)) != GROVE_OK)
        return fail("train_step", s);
      sum += *(const float *)loss->dl_tensor.data;
      loss->deleter(loss);
      ++steps;
      progress(epoch, epochs, start + n, c.train, sum / steps);
    }
    if (evaluate(&m, ctx, &c, &b, ids, &accuracy))
      return 1;
    progress_end();
    printf("epoch %2d: loss %.4f, held-out accuracy %.1f%%\n", epoch,
           sum / steps, 100 * accuracy);
  }
  grove_context_destroy(ctx);
  if (accuracy < expect) {
    fprintf(stderr, "held-out accuracy %.3f is below %.3f\n", accuracy, expect);
    return 1;
  }
  return 0;
}
