/* train_dist - train the digits MLP data-parallel across the ranks of an
 * MPI job, with the collectives grove-insert-collectives compiled into its
 * train step, and report the held-out accuracy and what was sent.
 *
 *   mpirun --enable-recovery -np N train_dist TRAIN.bin TEST.bin
 *       [--method dense|fp16|cser|grbs-ef|topk-ef|sign-ef|powersgd|int8-ef]
 *       [--epochs N]
 *       [--expect-accuracy A]
 *
 * Every rank starts from the same weights and draws the same shuffle; each
 * global step of N x 32 digits gives rank r rows [32 r, 32 r + 32). The
 * methods are models/mlp_train compiled with --data-parallel and a
 * compressor (CMakeLists.txt): dense averages the gradients, fp16 sends
 * them as fp16, cser is CSER (random blocks of 1/64 of each param
 * averaged after the local step, 1/8 every 8th step), grbs-ef sends a
 * random block of 1/32 of each bucket, topk-ef its 1/64 largest elements
 * (values and indices), sign-ef its signs, with error feedback;
 * powersgd sends rank-1 PowerSGD factors of each weight matrix (and the
 * biases densely), int8-ef 8-bit codes under one scale a bucket, both
 * with error feedback. Rank 0 prints
 * each epoch's mean loss over the ranks and its model's held-out accuracy, then
 * the bytes each rank handed to the collectives per step. */
#include "dist_cser.h"
#include "dist_dense.h"
#include "dist_fp16.h"
#include "dist_grbs_ef.h"
#include "dist_int8_ef.h"
#include "dist_powersgd.h"
#include "dist_sign_ef.h"
#include "dist_topk_ef.h"

#include "../common/train_util.h"
#include "../digits/digits_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BATCH = 32, CLASSES = 10 };

typedef grove_status (*forward_fn)(grove_context *, const DLTensor *,
                                   DLManagedTensor **);
typedef grove_status (*step_fn)(grove_context *, const DLTensor *,
                                const DLTensor *, DLManagedTensor **);

typedef struct {
  const char *name;
  const grove_model_def *def;
  forward_fn forward;
  step_fn train_step;
} method;

static const method METHODS[] = {
    {"dense", &dist_dense_model, dist_dense_forward, dist_dense_train_step},
    {"fp16", &dist_fp16_model, dist_fp16_forward, dist_fp16_train_step},
    {"cser", &dist_cser_model, dist_cser_forward, dist_cser_train_step},
    {"grbs-ef", &dist_grbs_ef_model, dist_grbs_ef_forward,
     dist_grbs_ef_train_step},
    {"topk-ef", &dist_topk_ef_model, dist_topk_ef_forward,
     dist_topk_ef_train_step},
    {"sign-ef", &dist_sign_ef_model, dist_sign_ef_forward,
     dist_sign_ef_train_step},
    {"powersgd", &dist_powersgd_model, dist_powersgd_forward,
     dist_powersgd_train_step},
    {"int8-ef", &dist_int8_ef_model, dist_int8_ef_forward,
     dist_int8_ef_train_step},
};

/* nn.Linear's initialisation, from the shared deterministic generator. */
static int init_layer(grove_context *ctx, const char *weight, const char *bias,
                      int64_t out, int64_t in) {
  float bound = 1.0f / sqrtf((float)in);
  float *w = malloc(sizeof(float) * out * in), *b = malloc(sizeof(float) * out);
  if (!w || !b)
    return 1;
  for (int64_t i = 0; i < out * in; ++i)
    w[i] = (float)((2.0 * next_unit() - 1.0) * bound);
  for (int64_t i = 0; i < out; ++i)
    b[i] = (float)((2.0 * next_unit() - 1.0) * bound);
  int64_t ws[2] = {out, in}, bs[1] = {out};
  DLTensor wt = {w, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, ws, NULL, 0};
  DLTensor bt = {b, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, bs, NULL, 0};
  grove_status s = grove_context_set_weight(ctx, weight, &wt);
  if (s == GROVE_OK)
    s = grove_context_set_weight(ctx, bias, &bt);
  free(w);
  free(b);
  return s == GROVE_OK ? 0 : fail("grove_context_set_weight", s);
}

static int evaluate(const method *m, grove_context *ctx, const dataset *ds,
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

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* One epoch: whole global steps of size x BATCH rows only (every rank
 * takes a full share each step); the mean loss over steps and ranks. */
static int train_epoch(const method *m, grove_context *ctx, grove_comm *comm,
                       const dataset *ds, const uint32_t *order, double *mean,
                       double *step_seconds, uint32_t *steps) {
  int rank = grove_comm_rank(comm), size = grove_comm_size(comm);
  uint32_t global = BATCH * (uint32_t)size;
  float xb[BATCH * 64];
  int32_t yb[BATCH];
  double sum = 0, t = 0;
  *steps = 0;
  for (uint32_t start = 0; start + global <= ds->n; start += global) {
    for (uint32_t r = 0; r < BATCH; ++r) {
      uint32_t row = order[start + (uint32_t)rank * BATCH + r];
      memcpy(xb + r * ds->d, ds->x + (size_t)row * ds->d,
             sizeof(float) * ds->d);
      yb[r] = ds->labels[row];
    }
    int64_t xs[2] = {BATCH, ds->d}, ys[1] = {BATCH};
    DLTensor x = {xb, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs, NULL, 0};
    DLTensor y = {yb, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, ys, NULL, 0};
    DLManagedTensor *loss = NULL;
    double t0 = seconds();
    grove_status s = m->train_step(ctx, &x, &y, &loss);
    t += seconds() - t0;
    if (s != GROVE_OK)
      return fail("train_step", s);
    sum += *(const float *)loss->dl_tensor.data;
    loss->deleter(loss);
    ++*steps;
  }
  double local[1] = {*steps ? sum / *steps : 0};
  int64_t one[1] = {1};
  DLTensor lt = {local, {kDLCPU, 0}, 1, {kDLFloat, 64, 1}, one, NULL, 0};
  grove_status s = grove_comm_all_reduce(comm, &lt, 1);
  if (s != GROVE_OK)
    return fail("grove_comm_all_reduce", s);
  *mean = local[0];
  *step_seconds = *steps ? t / *steps : 0;
  return 0;
}

int main(int argc, char **argv) {
  const method *m = &METHODS[0];
  int epochs = 30;
  double expect = -1;
  for (int i = 3; i < argc; ++i) {
    if (i + 1 < argc && !strcmp(argv[i], "--method")) {
      const char *name = argv[++i];
      m = NULL;
      for (size_t k = 0; k < sizeof METHODS / sizeof METHODS[0]; ++k)
        if (!strcmp(name, METHODS[k].name))
          m = &METHODS[k];
      if (!m)
        argc = 0;
    } else if (i + 1 < argc && !strcmp(argv[i], "--epochs"))
      epochs = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--expect-accuracy"))
      expect = atof(argv[++i]);
    else
      argc = 0;
  }
  if (argc < 3 || epochs < 1) {
    fprintf(stderr,
            "usage: %s TRAIN.bin TEST.bin [--method "
            "dense|fp16|cser|grbs-ef|topk-ef|sign-ef|powersgd|int8-ef] "
            "[--epochs N] "
            "[--expect-accuracy A]\n",
            argv[0]);
    return 2;
  }
  grove_comm *comm;
  grove_status s = grove_comm_create(NULL, &comm);
  if (s != GROVE_OK)
    return fail("grove_comm_create", s);
  int rank = grove_comm_rank(comm), size = grove_comm_size(comm);
  dataset train, test;
  if (read_dataset(argv[1], &train) || read_dataset(argv[2], &test))
    return 1;
  grove_context *ctx;
  if ((s = grove_context_create(m->def, &ctx)) != GROVE_OK)
    return fail("grove_context_create", s);
  if ((s = grove_context_set_comm(ctx, comm)) != GROVE_OK)
    return fail("grove_context_set_comm", s);
  if (init_layer(ctx, "fc1.weight", "fc1.bias", 128, 64) ||
      init_layer(ctx, "fc2.weight", "fc2.bias", CLASSES, 128))
    return 1;
  uint32_t *order = malloc(sizeof(uint32_t) * train.n);
  if (!order)
    return 1;
  for (uint32_t i = 0; i < train.n; ++i)
    order[i] = i;
  double accuracy = 0, step_time = 0;
  uint32_t steps = 0, total_steps = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    shuffle(order, train.n);
    double loss;
    if (train_epoch(m, ctx, comm, &train, order, &loss, &step_time, &steps) ||
        evaluate(m, ctx, &test, &accuracy))
      return 1;
    total_steps += steps;
    if (rank == 0)
      printf("epoch %2d: loss %.6f, held-out accuracy %.4f\n", epoch, loss,
             accuracy);
  }
  grove_comm_stats stats;
  grove_comm_get_stats(comm, &stats);
  if (rank == 0) {
    printf("final held-out accuracy %.4f (%u digits, %s, %d ranks, global "
           "batch %d)\n",
           accuracy, test.n, m->name, size, BATCH * size);
    printf("sent %.0f bytes a step a rank in %.1f collectives; step %.1f "
           "us\n",
           (double)stats.payload_bytes / total_steps,
           (double)stats.collectives / total_steps, step_time * 1e6);
  }
  free(order);
  free_dataset(&train);
  free_dataset(&test);
  grove_context_destroy(ctx);
  grove_comm_destroy(comm);
  if (expect >= 0 && accuracy < expect) {
    fprintf(stderr, "rank %d: accuracy %.4f below the expected %.4f\n", rank,
            accuracy, expect);
    return 1;
  }
  return 0;
}
