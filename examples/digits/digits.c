/* digits - classify scikit-learn's held-out 8x8 digits with the MLP that
 * grovec compiled (models/mlp), and print the accuracy.
 *
 *   digits WEIGHTS.safetensors DIGITS_TEST.bin [--expect REFERENCE.txt]
 *
 * With --expect, exits 1 unless the accuracy equals the reference
 * framework's (PyTorch's, written by models/mlp/train.py).
 *
 * Built twice: `digits` runs the host model; `digits_cuda` (DIGITS_CUDA)
 * the model compiled with --target=cuda, moving the batch to the GPU and
 * the logits back with cudart. The model calls are the same. */
#include "mlp.h"

#include "digits_data.h"

#if DIGITS_CUDA
#include <cuda_runtime.h>
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, grove_status s) {
  fprintf(stderr, "%s: %s: %s\n", what, grove_status_string(s),
          grove_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3 && !(argc == 5 && strcmp(argv[3], "--expect") == 0)) {
    fprintf(stderr,
            "usage: %s WEIGHTS.safetensors DIGITS_TEST.bin "
            "[--expect REFERENCE.txt]\n",
            argv[0]);
    return 2;
  }
  dataset ds;
  if (read_dataset(argv[2], &ds))
    return 1;

  grove_context *ctx;
  grove_status s = grove_context_create(&mlp_model, &ctx);
  if (s != GROVE_OK)
    return fail("grove_context_create", s);
  s = grove_context_load_weights(ctx, argv[1]);
  if (s != GROVE_OK)
    return fail("grove_context_load_weights", s);

  /* The whole held-out set is one batch: the batch dimension is dynamic. */
  int64_t shape[2] = {ds.n, ds.d};
  void *input = ds.x;
  size_t outBytes = sizeof(float) * ds.n * 10;
#if DIGITS_CUDA
  size_t inBytes = sizeof(float) * ds.n * ds.d;
  if (cudaMalloc(&input, inBytes) != cudaSuccess ||
      cudaMemcpy(input, ds.x, inBytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    fprintf(stderr, "cannot copy the batch to the GPU\n");
    return 1;
  }
#endif
  DLTensor x = {.data = input,
                .device = grove_context_device(ctx),
                .ndim = 2,
                .dtype = {kDLFloat, 32, 1},
                .shape = shape,
                .strides = NULL,
                .byte_offset = 0};
  DLManagedTensor *logits = NULL;
  s = mlp_forward(ctx, &x, &logits);
  if (s != GROVE_OK)
    return fail("mlp_forward", s);

  float *y = malloc(outBytes);
  if (!y)
    return 1;
#if DIGITS_CUDA
  if (cudaMemcpy(y, logits->dl_tensor.data, outBytes, cudaMemcpyDeviceToHost) !=
      cudaSuccess) {
    fprintf(stderr, "cannot copy the logits from the GPU\n");
    return 1;
  }
  cudaFree(input);
#else
  memcpy(y, logits->dl_tensor.data, outBytes);
#endif
  uint32_t correct = 0;
  for (uint32_t i = 0; i < ds.n; ++i) {
    int best = 0;
    for (int c = 1; c < 10; ++c)
      if (y[i * 10 + c] > y[i * 10 + best])
        best = c;
    correct += best == ds.labels[i];
  }
  double accuracy = (double)correct / ds.n;
  printf("accuracy %.6f (%u/%u held-out digits)\n", accuracy, correct, ds.n);
  free(y);
  logits->deleter(logits);
  grove_context_destroy(ctx);
  free_dataset(&ds);

  if (argc == 5) {
    FILE *f = fopen(argv[4], "r");
    double reference;
    if (!f || fscanf(f, "%lf", &reference) != 1) {
      fprintf(stderr, "%s: cannot read the reference accuracy\n", argv[4]);
      return 1;
    }
    fclose(f);
    char ours[32], theirs[32];
    snprintf(ours, sizeof ours, "%.6f", accuracy);
    snprintf(theirs, sizeof theirs, "%.6f", reference);
    printf("reference (PyTorch) %s: %s\n", theirs,
           strcmp(ours, theirs) == 0 ? "equal" : "DIFFERENT");
    return strcmp(ours, theirs) == 0 ? 0 : 1;
  }
  return 0;
}
