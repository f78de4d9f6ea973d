/*===- CApi.c - runtime.h must be usable from plain C ---------------------===*
 *
 * Compiled as C99 so that any C++-only construct in grove/runtime.h or
 * grove/abi.h breaks the build. CApiTest.cpp runs the function below.
 *
 *===----------------------------------------------------------------------===*/

#include "grove/runtime.h"

#include <string.h>

static const grove_model_def kCModel = {
    GROVE_ABI_VERSION, 0, "cmodel",
    "{\"format\":\"grove-model\",\"version\":7,\"module\":\"cmodel\","
    "\"target\":\"host\",\n"
    "\"state\":[{\"name\":\"k\",\"dtype\":\"i32\",\"shape\":[2]}],\n"
    "\"entries\":[]}\n",
    NULL};

/* Returns 0 on success, else the number of the failed step. */
int grove_test_c_api(void) {
  grove_context *ctx = NULL;
  const grove_tensor_sig *sig = NULL;
  int32_t values[2] = {3, 4};
  int64_t shape[1] = {2};
  DLTensor t;
  DLTensor view;

  if (grove_context_create(&kCModel, &ctx) != GROVE_OK)
    return 1;
  if (grove_context_num_params(ctx) != 1 ||
      grove_context_param(ctx, 0, &sig) != GROVE_OK || sig->ndim != 1)
    return 2;
  memset(&t, 0, sizeof(t));
  t.data = values;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = kDLInt;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  if (grove_context_set_weight(ctx, "k", &t) != GROVE_OK)
    return 3;
  if (grove_context_get_weight(ctx, "k", &view) != GROVE_OK ||
      ((const int32_t *)view.data)[1] != 4)
    return 4;
  if (grove_invoke(ctx, "missing", NULL, 0, NULL, 0) !=
          GROVE_ERROR_INVALID_ARGUMENT ||
      strlen(grove_last_error()) == 0)
    return 5;
  if (strcmp(grove_status_string(GROVE_ERROR_IO), "GROVE_ERROR_IO") != 0)
    return 6;
  grove_context_destroy(ctx);
  return 0;
}
