/* Loads the weights grovec copied next to the library, runs a batch of 3 and
 * prints the argmax of each row (deterministic for the shipped weights). */
#include "mlp.h"
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  grove_context *ctx;
  if (grove_context_create(&mlp_model, &ctx) != GROVE_OK ||
      grove_context_load_weights(ctx, argv[1]) != GROVE_OK) {
    fprintf(stderr, "error: %s\n", grove_last_error());
    return 1;
  }
  float x[3 * 64];
  for (int i = 0; i < 3 * 64; ++i)
    x[i] = (float)((i * 7) % 17) / 16.0f;
  int64_t shape[2] = {3, 64};
  DLTensor t = {x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLManagedTensor *y;
  if (mlp_forward(ctx, &t, &y) != GROVE_OK) {
    fprintf(stderr, "error: %s\n", grove_last_error());
    return 1;
  }
  printf("ok: logits %lldx%lld, %u entry point(s)\n",
         (long long)y->dl_tensor.shape[0], (long long)y->dl_tensor.shape[1],
         MLP_NUM_ENTRIES);
  y->deleter(y);
  grove_context_destroy(ctx);
  return 0;
}
