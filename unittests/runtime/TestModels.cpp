//===- TestModels.cpp - Hand-written stand-ins for grovec output ----------===//

#include "TestModels.h"

#include "grove/abi.h"

#include <cstdlib>
#include <cstring>

namespace grove::test {
namespace {

const char kAddDescriptor[] =
    "{\"format\":\"grove-model\",\"version\":7,\"module\":\"addmodel\","
    "\"target\":\"host\",\n"
    "\"state\":[{\"name\":\"w\",\"dtype\":\"f32\",\"shape\":[4]}],\n"
    "\"entries\":[{\"name\":\"add\",\"args\":[{\"state\":\"w\",\"access\":"
    "\"read\"},{\"input\":0}],\"inputs\":[{\"name\":\"x\",\"dtype\":\"f32\","
    "\"shape\":[-1,4]}],\"outputs\":[{\"name\":\"y\",\"dtype\":\"f32\","
    "\"shape\":[-1,4]}]},\n"
    "{\"name\":\"identity\",\"args\":[{\"state\":\"w\",\"access\":\"read\"},{"
    "\"input\":0}],\"inputs\":[{\"name\":\"x\",\"dtype\":\"f32\",\"shape\":[-1]"
    "}],\"outputs\":[{\"name\":\"y\",\"dtype\":\"f32\",\"shape\":[-1]}]},\n"
    "{\"name\":\"constant\",\"args\":[{\"state\":\"w\",\"access\":\"read\"}],"
    "\"inputs\":[],\"outputs\":[{\"name\":\"c\",\"dtype\":\"f32\",\"shape\":[3]"
    "}]},\n"
    "{\"name\":\"transpose\",\"args\":[{\"state\":\"w\",\"access\":\"read\"},{"
    "\"input\":0}],\"inputs\":[{\"name\":\"x\",\"dtype\":\"f32\",\"shape\":[2,"
    "3]}],\"outputs\":[{\"name\":\"y\",\"dtype\":\"f32\",\"shape\":[3,2]}]},\n"
    "{\"name\":\"param_alias\",\"args\":[{\"state\":\"w\",\"access\":\"read\"}]"
    ",\"inputs\":[],\"outputs\":[{\"name\":\"w\",\"dtype\":\"f32\",\"shape\":["
    "4]}]},\n"
    "{\"name\":\"twice\",\"args\":[{\"state\":\"w\",\"access\":\"read\"},{"
    "\"input\":0}],\"inputs\":[{\"name\":\"x\",\"dtype\":\"f32\",\"shape\":[-1]"
    "}],\"outputs\":[{\"name\":\"a\",\"dtype\":\"f32\",\"shape\":[-1]},{"
    "\"name\":\"b\",\"dtype\":\"f32\",\"shape\":[-1]}]},\n"
    "{\"name\":\"stats\",\"args\":[{\"state\":\"w\",\"access\":\"read\"},{"
    "\"input\":0}],\"inputs\":[{\"name\":\"x\",\"dtype\":\"f32\",\"shape\":[-1,"
    "4]}],\"outputs\":[{\"name\":\"rowsum\",\"dtype\":\"f32\",\"shape\":[-1]},{"
    "\"name\":\"total\",\"dtype\":\"f32\",\"shape\":[]}]},\n"
    "{\"name\":\"bad_shape\",\"args\":[{\"state\":\"w\",\"access\":\"read\"}],"
    "\"inputs\":[],\"outputs\":[{\"name\":\"y\",\"dtype\":\"f32\",\"shape\":[3]"
    "}]},\n"
    "{\"name\":\"wrong_static\",\"args\":[{\"state\":\"w\",\"access\":\"read\"}"
    "],\"inputs\":[],\"outputs\":[{\"name\":\"y\",\"dtype\":\"f32\",\"shape\":["
    "3]}]},\n"
    "{\"name\":\"bad_matmul\",\"args\":[{\"state\":\"w\",\"access\":\"read\"}],"
    "\"inputs\":[],\"outputs\":[]},\n"
    "{\"name\":\"matmul\",\"args\":[{\"state\":\"w\",\"access\":\"read\"},{"
    "\"input\":0},{\"input\":1}],\"inputs\":[{\"name\":\"a\",\"dtype\":\"f32\","
    "\"shape\":[-1,-1]},{\"name\":\"b\",\"dtype\":\"f32\",\"shape\":[-1,-1]}],"
    "\"outputs\":[{\"name\":\"c\",\"dtype\":\"f32\",\"shape\":[-1,-1]}]},\n"
    "{\"name\":\"nothing\",\"args\":[{\"state\":\"w\",\"access\":\"read\"}],"
    "\"inputs\":[],\"outputs\":[]},\n"
    "{\"name\":\"bounded\",\"args\":[{\"input\":0}],\"inputs\":[{\"name\":"
    "\"labels\",\"dtype\":\"i32\",\"shape\":[-1],\"preconditions\":[{\"kind\":"
    "\"below\",\"bound\":4}]}],\"outputs\":[]}]}\n";

/// Results come from the runtime's allocator, as generated code's do (the
/// runtime frees them with it).
float *allocFloats(int64_t n) {
  return static_cast<float *>(
      _mlir_memref_to_llvm_alloc(sizeof(float) * (n > 0 ? n : 1)));
}

template <int R>
void setCompact(Memref<R> &m, void *buf, const int64_t *sizes) {
  m.allocated = m.aligned = buf;
  m.offset = 0;
  int64_t stride = 1;
  for (int i = R - 1; i >= 0; --i) {
    m.sizes[i] = sizes[i];
    m.strides[i] = stride;
    stride *= sizes[i];
  }
}

void add(void **args) {
  auto *w = static_cast<Memref<1> *>(args[0]);
  auto *x = static_cast<Memref<2> *>(args[1]);
  auto *y = static_cast<Memref<2> *>(args[2]);
  const int64_t rows = x->sizes[0], cols = x->sizes[1];
  float *out = allocFloats(rows * cols);
  const float *xs = static_cast<const float *>(x->aligned) + x->offset;
  const float *ws = static_cast<const float *>(w->aligned) + w->offset;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out[i * cols + j] =
          xs[i * x->strides[0] + j * x->strides[1]] + ws[j * w->strides[0]];
  setCompact(*y, out, x->sizes);
}

void identity(void **args) {
  // Returning an input memref unchanged, as MLIR does for `return %arg`.
  *static_cast<Memref<1> *>(args[2]) = *static_cast<Memref<1> *>(args[1]);
}

float kConstantData[3] = {1.5f, 2.5f, 3.5f};

void constant(void **args) {
  auto *y = static_cast<Memref<1> *>(args[1]);
  y->allocated = reinterpret_cast<void *>(uintptr_t(0xdeadbeef));
  y->aligned = kConstantData;
  y->offset = 0;
  y->sizes[0] = 3;
  y->strides[0] = 1;
}

void transpose(void **args) {
  auto *x = static_cast<Memref<2> *>(args[1]);
  auto *y = static_cast<Memref<2> *>(args[2]);
  // Copy x (2x3) into a fresh row-major buffer with a 1-element prefix, then
  // return its transpose as a strided view with non-zero offset.
  float *buf = allocFloats(7);
  buf[0] = -1.0f;
  const float *xs = static_cast<const float *>(x->aligned) + x->offset;
  for (int i = 0; i < 6; ++i)
    buf[1 + i] = xs[i];
  y->allocated = y->aligned = buf;
  y->offset = 1;
  y->sizes[0] = 3;
  y->sizes[1] = 2;
  y->strides[0] = 1;
  y->strides[1] = 3;
}

void paramAlias(void **args) {
  *static_cast<Memref<1> *>(args[1]) = *static_cast<Memref<1> *>(args[0]);
}

void twice(void **args) {
  auto *x = static_cast<Memref<1> *>(args[1]);
  auto *out = static_cast<Memref<1> *>(args[2]); // two results back to back
  const int64_t n = x->sizes[0];
  float *buf = allocFloats(n);
  for (int64_t i = 0; i < n; ++i)
    buf[i] = 2.0f * static_cast<const float *>(x->aligned)[x->offset + i];
  setCompact(out[0], buf, x->sizes);
  setCompact(out[1], buf, x->sizes);
}

void stats(void **args) {
  auto *x = static_cast<Memref<2> *>(args[1]);
  // Results: a rank-1 descriptor (5 words) followed by a rank-0 one (3).
  auto *rowsum = static_cast<Memref<1> *>(args[2]);
  auto *total = reinterpret_cast<Memref0 *>(rowsum + 1);
  const int64_t rows = x->sizes[0];
  float *sums = allocFloats(rows);
  float *all = allocFloats(1);
  *all = 0.0f;
  const float *xs = static_cast<const float *>(x->aligned) + x->offset;
  for (int64_t i = 0; i < rows; ++i) {
    sums[i] = 0.0f;
    for (int64_t j = 0; j < 4; ++j)
      sums[i] += xs[i * 4 + j];
    *all += sums[i];
  }
  setCompact(*rowsum, sums, &rows);
  total->allocated = total->aligned = all;
  total->offset = 0;
}

void *gBadShapeBuffer = nullptr;

void badShape(void **args) {
  auto *y = static_cast<Memref<1> *>(args[1]); // args[0] is param w
  // The runtime cannot trust (so will not free) a buffer described this
  // badly; the test frees it through freeBadShapeBuffer().
  gBadShapeBuffer = allocFloats(3);
  y->allocated = y->aligned = gBadShapeBuffer;
  y->offset = 0;
  y->sizes[0] = -5;
  y->strides[0] = 1;
}

void wrongStatic(void **args) {
  auto *y = static_cast<Memref<1> *>(args[1]);
  int64_t four = 4;
  setCompact(*y, allocFloats(4), &four);
}

void badMatmul(void **) {
  float a[6] = {}, b[6] = {}, c[4] = {};
  // A is 2x3, B is 2x3 (should be 3xN): K mismatch.
  grove_memref_f32_2 am = {a, a, 0, {2, 3}, {3, 1}},
                     bm = {b, b, 0, {2, 3}, {3, 1}},
                     cm = {c, c, 0, {2, 2}, {2, 1}};
  _mlir_ciface_grove_rt_matmul_f32(0, 0, 1.0f, 0.0f, &am, &bm, &cm);
}

void matmul(void **args) {
  auto *a = static_cast<Memref<2> *>(args[1]);
  auto *b = static_cast<Memref<2> *>(args[2]);
  auto *c = static_cast<Memref<2> *>(args[3]);
  int64_t sizes[2] = {a->sizes[0], b->sizes[1]};
  float *buf = allocFloats(sizes[0] * sizes[1]);
  setCompact(*c, buf, sizes);
  // Memref<2> is grove_memref_f32_2's layout with untyped pointers.
  static_assert(sizeof(Memref<2>) == sizeof(grove_memref_f32_2), "layout");
  grove_memref_f32_2 am, bm;
  std::memcpy(&am, a, sizeof am);
  std::memcpy(&bm, b, sizeof bm);
  grove_memref_f32_2 cm = {
      buf, buf, 0, {sizes[0], sizes[1]}, {c->strides[0], c->strides[1]}};
  _mlir_ciface_grove_rt_matmul_f32(0, 0, 1.0f, 0.0f, &am, &bm, &cm);
}

void nothing(void **) {}

int gBoundedCalls = 0;
void bounded(void **) { ++gBoundedCalls; }

const grove_packed_fn kAddEntries[] = {
    add,      identity,    constant,  transpose, paramAlias, twice,  stats,
    badShape, wrongStatic, badMatmul, matmul,    nothing,    bounded};

const char kTwoDescriptor[] =
    "{\"format\":\"grove-model\",\"version\":7,\"module\":\"two\",\"target\":"
    "\"host\",\n"
    "\"state\":[{\"name\":\"a\",\"dtype\":\"f32\",\"shape\":[2,2]},{\"name\":"
    "\"b\",\"dtype\":\"i32\",\"shape\":[3]}],\n"
    "\"entries\":[]}\n";

} // namespace

const grove_model_def addmodel_model = {GROVE_ABI_VERSION, 13, "addmodel",
                                        kAddDescriptor, kAddEntries};
const grove_model_def addmodel_twin_model = {GROVE_ABI_VERSION, 13, "addmodel",
                                             kAddDescriptor, kAddEntries};

int boundedCalls() { return gBoundedCalls; }
const grove_model_def two_model = {GROVE_ABI_VERSION, 0, "two", kTwoDescriptor,
                                   nullptr};

void freeBadShapeBuffer() {
  _mlir_memref_to_llvm_free(gBadShapeBuffer);
  gBadShapeBuffer = nullptr;
}

int32_t addmodel_add(struct grove_context *ctx, const void *x, void *out0) {
  void *args[] = {const_cast<void *>(x), out0};
  return grove_rt_invoke(ctx, &addmodel_model, 0, args);
}

} // namespace grove::test
