/* train_digits - train the digits MLP (models/mlp_train) from scratch with
 * its compiled train step, and report the held-out accuracy.
 *
 *   train_digits TRAIN.bin TEST.bin [--epochs N] [--checkpoint PATH]
 *                [--resume PATH] [--expect-accuracy A]
 *
 * Each call of mlp_train_train_step is one Adam step on a batch of 32:
 * forward, backward and update, the weights and the optimizer's state kept
 * in the context. After each epoch it prints the mean loss and the
 * accuracy on the held-out set (mlp_train_forward over the same context),
 * and with --checkpoint saves weights and optimizer state to PATH. With
 * --resume it loads such a file and goes on from the epoch it holds (the
 * step counter tells), replaying the shuffles so the run continues exactly
 * as if it had never stopped. --expect-accuracy exits 1 below A. */
#include "mlp_train.h"

#include "../digits/digits_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 32, CLASSES = 10 };

static int fail(const char *what, grove_status s) {
  fprintf(stderr, "%s: %s: %s\n", what, grove_status_string(s),
          grove_last_error());
  return 1;
}

/* A small deterministic generator (xorshift64*): the same weights and
 * shuffles on every machine. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static double next_unit(void) { return (next_u64() >> 11) * 0x1.0p-53; }

/* PyTorch's nn.Linear initialisation: U(-1/sqrt(in), 1/sqrt(in)) for the
 * weight and the bias. */
static int init_linear(grove_context *ctx, const char *weight, const char *bias,
                       int64_t out, int64_t in) {
  float bound = 1.0f / sqrtf((float)in);
  float *w = malloc(sizeof(float) * out * in), *b = malloc(sizeof(float) * out);
  if (!w || !b)
    return 1;
  for (int64_t i = 0; i < out * in; ++i)
    w[i] = (float)((2.0 * next_unit() - 1.0) * bound);
  for (int64_t i = 0; i < out; ++i)
    b[i] = (float)((2.0 * next_unit() - 1.0) * bound);
  int64_t wshape[2] = {out, in}, bshape[1] = {out};
  DLTensor wt = {w, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, wshape, NULL, 0};
  DLTensor bt = {b, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, bshape, NULL, 0};
  grove_status s = grove_context_set_weight(ctx, weight, &wt);
  if (s == GROVE_OK)
    s = grove_context_set_weight(ctx, bias, &bt);
  free(w);
  free(b);
  return s == GROVE_OK ? 0 : fail("grove_context_set_weight", s);
}

static void shuffle(uint32_t *order, uint32_t n) {
  for (uint32_t i = n - 1; i > 0; --i) {
    uint32_t j = (uint32_t)(next_u64() % (i + 1));
    uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
}

/* The share of `ds` the model classifies right, in one batch. */
static int evaluate(grove_context *ctx, const dataset *ds, double *accuracy) {
  int64_t shape[2] = {ds->n, ds->d};
  DLTensor x = {ds->x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLManagedTensor *logits = NULL;
  grove_status s = mlp_train_forward(ctx, &x, &logits);
  if (s != GROVE_OK)
    return fail("mlp_train_forward", s);
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

static void progress(int epoch, int epochs, uint32_t done, uint32_t total,
                     double loss) {
  enum { WIDTH = 30 };
  int filled = (int)((uint64_t)done * WIDTH / total);
  char bar[WIDTH + 1];
  for (int i = 0; i < WIDTH; ++i)
    bar[i] = i < filled ? '#' : '.';
  bar[WIDTH] = 0;
  fprintf(stderr, "\repoch %2d/%d [%s] %4u/%u loss %.4f", epoch, epochs, bar,
          done, total, loss);
}

/* One epoch of steps over `order`; the mean loss in *mean. */
static int train_epoch(grove_context *ctx, const dataset *ds,
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
    grove_status s = mlp_train_train_step(ctx, &x, &y, &loss);
    if (s != GROVE_OK)
      return fail("mlp_train_train_step", s);
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
  float steps = *(const float *)step.data;
  *epochs = (int)(steps / per_epoch);
  if ((float)*epochs * per_epoch != steps) {
    fprintf(stderr, "checkpoint holds %.0f steps, not whole epochs of %u\n",
            steps, per_epoch);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *checkpoint = NULL, *resume = NULL;
  int epochs = 60;
  double expect = -1;
  for (int i = 3; i < argc; ++i) {
    if (i + 1 < argc && !strcmp(argv[i], "--epochs"))
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
  if (argc < 3 || epochs < 1) {
    fprintf(stderr,
            "usage: %s TRAIN.bin TEST.bin [--epochs N] [--checkpoint PATH] "
            "[--resume PATH] [--expect-accuracy A]\n",
            argv[0]);
    return 2;
  }
  dataset train, test;
  if (read_dataset(argv[1], &train) || read_dataset(argv[2], &test))
    return 1;

  grove_context *ctx;
  grove_status s = grove_context_create(&mlp_train_model, &ctx);
  if (s != GROVE_OK)
    return fail("grove_context_create", s);
  /* The initial weights come first either way, so a resumed run draws the
   * same shuffles after them. */
  if (init_linear(ctx, "fc1.weight", "fc1.bias", 128, 64) ||
      init_linear(ctx, "fc2.weight", "fc2.bias", CLASSES, 128))
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
    if (train_epoch(ctx, &train, order, epoch, epochs, &loss) ||
        evaluate(ctx, &test, &accuracy))
      return 1;
    fprintf(stderr, "\n");
    printf("epoch %2d: loss %.6f, held-out accuracy %.4f\n", epoch, loss,
           accuracy);
    if (checkpoint &&
        (s = grove_context_save_weights(ctx, checkpoint)) != GROVE_OK)
      return fail("grove_context_save_weights", s);
  }
  if (done >= epochs && evaluate(ctx, &test, &accuracy))
    return 1;
  printf("final held-out accuracy %.4f (%u digits)\n", accuracy, test.n);
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
