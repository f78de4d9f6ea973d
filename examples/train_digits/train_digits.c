/* train_digits - train a digits classifier from scratch with its compiled
 * train step, and report the held-out accuracy.
 *
 *   train_digits TRAIN.bin TEST.bin [--model mlp|cnn] [--epochs N]
 *                [--checkpoint PATH] [--resume PATH] [--expect-accuracy A]
 *
 * --model mlp (the default) is models/mlp_train, the 64-128-10 MLP; cnn is
 * models/cnn_train, two conv + batch norm + ReLU + max-pool blocks and a
 * linear layer. Each train_step call is one Adam step on a batch of 32:
 * forward, backward and update, the weights, running statistics and the
 * optimizer's state kept in the context. After each epoch it prints the
 * mean loss and the accuracy on the held-out set (the model's forward over
 * the same context), and with --checkpoint saves weights and state to
 * PATH. With --resume it loads such a file and goes on from the epoch it
 * holds (the step counter tells), replaying the shuffles so the run
 * continues exactly as if it had never stopped. --expect-accuracy exits 1
 * below A. */
#include "cnn_train.h"
#include "mlp_train.h"

#include "../common/train_util.h"
#include "../digits/digits_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 32, CLASSES = 10 };

/* PyTorch's default initialisation of nn.Linear and nn.Conv2d: weight and
 * bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)); `shape` is the weight's,
 * its first dimension the bias's length. */
static int init_layer(grove_context *ctx, const char *weight, const char *bias,
                      int rank, const int64_t *shape) {
  int64_t out = shape[0], fan_in = 1;
  for (int d = 1; d < rank; ++d)
    fan_in *= shape[d];
  float bound = 1.0f / sqrtf((float)fan_in);
  float *w = malloc(sizeof(float) * out * fan_in);
  float *b = malloc(sizeof(float) * out);
  if (!w || !b)
    return 1;
  for (int64_t i = 0; i < out * fan_in; ++i)
    w[i] = (float)((2.0 * next_unit() - 1.0) * bound);
  for (int64_t i = 0; i < out; ++i)
    b[i] = (float)((2.0 * next_unit() - 1.0) * bound);
  int64_t wshape[4], bshape[1] = {out};
  memcpy(wshape, shape, sizeof(int64_t) * rank);
  DLTensor wt = {w, {kDLCPU, 0}, rank, {kDLFloat, 32, 1}, wshape, NULL, 0};
  DLTensor bt = {b, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, bshape, NULL, 0};
  grove_status s = grove_context_set_weight(ctx, weight, &wt);
  if (s == GROVE_OK)
    s = grove_context_set_weight(ctx, bias, &bt);
  free(w);
  free(b);
  return s == GROVE_OK ? 0 : fail("grove_context_set_weight", s);
}

/* Batch norm's affine part starts as the identity: scale 1, shift 0. */
static int init_batch_norm(grove_context *ctx, const char *scale,
                           const char *shift, int64_t channels) {
  enum { MAX_CHANNELS = 64 };
  float ones[MAX_CHANNELS], zeros[MAX_CHANNELS];
  if (channels > MAX_CHANNELS) {
    fprintf(stderr, "init_batch_norm: %lld channels, at most %d\n",
            (long long)channels, MAX_CHANNELS);
    return 1;
  }
  for (int64_t i = 0; i < channels; ++i) {
    ones[i] = 1.0f;
    zeros[i] = 0.0f;
  }
  int64_t shape[1] = {channels};
  DLTensor st = {ones, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor zt = {zeros, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  grove_status s = grove_context_set_weight(ctx, scale, &st);
  if (s == GROVE_OK)
    s = grove_context_set_weight(ctx, shift, &zt);
  return s == GROVE_OK ? 0 : fail("grove_context_set_weight", s);
}

static int init_mlp(grove_context *ctx) {
  const int64_t fc1[2] = {128, 64}, fc2[2] = {CLASSES, 128};
  return init_layer(ctx, "fc1.weight", "fc1.bias", 2, fc1) ||
         init_layer(ctx, "fc2.weight", "fc2.bias", 2, fc2);
}

static int init_cnn(grove_context *ctx) {
  const int64_t conv1[4] = {16, 1, 3, 3}, conv2[4] = {32, 16, 3, 3};
  const int64_t fc[2] = {CLASSES, 128};
  return init_layer(ctx, "conv1.weight", "conv1.bias", 4, conv1) ||
         init_batch_norm(ctx, "bn1.weight", "bn1.bias", 16) ||
         init_layer(ctx, "conv2.weight", "conv2.bias", 4, conv2) ||
         init_batch_norm(ctx, "bn2.weight", "bn2.bias", 32) ||
         init_layer(ctx, "fc.weight", "fc.bias", 2, fc);
}

/* What the app needs of a compiled model: both take [N, 64] digits. */
typedef struct {
  const char *name;
  const grove_model_def *def;
  grove_status (*forward)(grove_context *, const DLTensor *,
                          DLManagedTensor **);
  grove_status (*train_step)(grove_context *, const DLTensor *,
                             const DLTensor *, DLManagedTensor **);
  int (*init)(grove_context *);
  int epochs; /* the default */
} model;

static const model MODELS[] = {
    {"mlp", &mlp_train_model, mlp_train_forward, mlp_train_train_step, init_mlp,
     60},
    {"cnn", &cnn_train_model, cnn_train_forward, cnn_train_train_step, init_cnn,
     20},
};

/* The share of `ds` the model classifies right, in one batch. */
static int evaluate(const model *m, grove_context *ctx, const dataset *ds,
                    double *accuracy) {
  int64_t shape[2] = {ds->n, ds->d};
  DLTensor x = {ds->x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLManagedTensor *logits = NULL;
  grove_status s = m->forward(ctx, &x, &logits);
  if (s != GROVE_OK)
    return fail("forward", s);
  const float *y = logits->dl_tensor.data;
  uint32_t correct = 0;
  for (uint32_t i = 0; i < ds->n; ++i) {
    int best = 0;
    for (int c = 1; c < CLASSES; ++c)
      if (y[i * CLASSES + c] > y[i * CLASSES + best])
        best = c;
    correct += best == ds->labels[i];
  }
  logits->deleter(logits);
  *accuracy = (double)correct / ds->n;
  return 0;
}

/* One epoch of steps over `order`; the mean loss in *mean. */
static int train_epoch(const model *m, grove_context *ctx, const dataset *ds,
                       const uint32_t *order, int epoch, int epochs,
                       double *mean) {
  float xb[BATCH * 64];
  int32_t yb[BATCH];
  double sum = 0;
  uint32_t steps = 0;
  for (uint32_t start = 0; start < ds->n; start += BATCH, ++steps) {
    uint32_t rows = ds->n - start < BATCH ? ds->n - start : BATCH;
    for (uint32_t r = 0; r < rows; ++r) {
      memcpy(xb + r * ds->d, ds->x + (size_t)order[start + r] * ds->d,
             sizeof(float) * ds->d);
      yb[r] = ds->labels[order[start + r]];
    }
    int64_t xs[2] = {rows, ds->d}, ys[1] = {rows};
    DLTensor x = {xb, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs, NULL, 0};
    DLTensor y = {yb, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, ys, NULL, 0};
    DLManagedTensor *loss = NULL;
    grove_status s = m->train_step(ctx, &x, &y, &loss);
    if (s != GROVE_OK)
      return fail("train_step", s);
    sum += *(const float *)loss->dl_tensor.data;
    loss->deleter(loss);
    progress(epoch, epochs, start + rows, ds->n, sum / (steps + 1));
  }
  *mean = sum / steps;
  return 0;
}

/* The epochs a checkpoint holds: Adam's step counter over steps per epoch. */
static int completed_epochs(grove_context *ctx, uint32_t n, int *epochs) {
  DLTensor step;
  grove_status s = grove_context_get_weight(ctx, "adam.step", &step);
  if (s != GROVE_OK)
    return fail("grove_context_get_weight", s);
  uint32_t per_epoch = (n + BATCH - 1) / BATCH;
  /* The counter is an i64 (docs/training.md). */
  int64_t steps = *(const int64_t *)step.data;
  *epochs = (int)(steps / per_epoch);
  if ((int64_t)*epochs * per_epoch != steps) {
    fprintf(stderr, "checkpoint holds %lld steps, not whole epochs of %u\n",
            (long long)steps, per_epoch);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *checkpoint = NULL, *resume = NULL;
  const model *m = &MODELS[0];
  int epochs = 0;
  double expect = -1;
  for (int i = 3; i < argc; ++i) {
    if (i + 1 < argc && !strcmp(argv[i], "--model")) {
      const char *name = argv[++i];
      m = NULL;
      for (size_t k = 0; k < sizeof MODELS / sizeof MODELS[0]; ++k)
        if (!strcmp(name, MODELS[k].name))
          m = &MODELS[k];
      if (!m)
        argc = 0;
    } else if (i + 1 < argc && !strcmp(argv[i], "--epochs"))
      epochs = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--checkpoint"))
      checkpoint = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--resume"))
      resume = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--expect-accuracy"))
      expect = atof(argv[++i]);
    else
      argc = 0;
  }
  if (m && epochs == 0)
    epochs = m->epochs;
  if (argc < 3 || epochs < 1) {
    fprintf(stderr,
            "usage: %s TRAIN.bin TEST.bin [--model mlp|cnn] [--epochs N] "
            "[--checkpoint PATH] [--resume PATH] [--expect-accuracy A]\n",
            argv[0]);
    return 2;
  }
  dataset train, test;
  if (read_dataset(argv[1], &train) || read_dataset(argv[2], &test))
    return 1;

  grove_context *ctx;
  grove_status s = grove_context_create(m->def, &ctx);
  if (s != GROVE_OK)
    return fail("grove_context_create", s);
  /* The initial weights come first either way, so a resumed run draws the
   * same shuffles after them. */
  if (m->init(ctx))
    return 1;
  int done = 0;
  if (resume) {
    if ((s = grove_context_load_weights(ctx, resume)) != GROVE_OK)
      return fail("grove_context_load_weights", s);
    if (completed_epochs(ctx, train.n, &done))
      return 1;
    printf("resumed from %s after epoch %d\n", resume, done);
  }

  uint32_t *order = malloc(sizeof(uint32_t) * train.n);
  if (!order)
    return 1;
  for (uint32_t i = 0; i < train.n; ++i)
    order[i] = i;
  double accuracy = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    shuffle(order, train.n);
    if (epoch <= done)
      continue;
    double loss;
    if (train_epoch(m, ctx, &train, order, epoch, epochs, &loss) ||
        evaluate(m, ctx, &test, &accuracy))
      return 1;
    progress_end();
    printf("epoch %2d: loss %.6f, held-out accuracy %.4f\n", epoch, loss,
           accuracy);
    if (checkpoint &&
        (s = grove_context_save_weights(ctx, checkpoint)) != GROVE_OK)
      return fail("grove_context_save_weights", s);
  }
  if (done >= epochs && evaluate(m, ctx, &test, &accuracy))
    return 1;
  printf("final held-out accuracy %.4f (%u digits, %s)\n", accuracy, test.n,
         m->name);
  free(order);
  free_dataset(&train);
  free_dataset(&test);
  grove_context_destroy(ctx);
  if (expect >= 0 && accuracy < expect) {
    fprintf(stderr, "accuracy %.4f below the expected %.4f\n", accuracy,
            expect);
    return 1;
  }
  return 0;
}
