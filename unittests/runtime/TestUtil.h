//===- TestUtil.h - Helpers shared by the runtime tests ---------*- C++ -*-===//
#ifndef GROVE_UNITTESTS_TESTUTIL_H
#define GROVE_UNITTESTS_TESTUTIL_H

#include "grove/abi.h"
#include "grove/runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace grove::test {

/// A host tensor that owns its storage and exposes a DLTensor over it. The
/// DLTensor's fields may be mutated freely by tests to build bad inputs.
template <typename T> class HostTensor {
public:
  HostTensor(std::vector<int64_t> shape, std::vector<T> values,
             DLDataType dtype)
      : shapeVec(std::move(shape)), values(std::move(values)) {
    t.data = this->values.empty() ? nullptr : this->values.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(shapeVec.size());
    t.dtype = dtype;
    t.shape = shapeVec.data();
    t.strides = nullptr;
    t.byte_offset = 0;
  }
  HostTensor(const HostTensor &) = delete;
  HostTensor &operator=(const HostTensor &) = delete;

  DLTensor *get() { return &t; }
  DLTensor t{};
  std::vector<int64_t> shapeVec;
  std::vector<T> values;
};

/// Memref descriptors of f32 data, as generated code passes them to the
/// runtime's services (grove/abi.h), from their fields.
inline grove_memref_f32_2 memref2(float *p, int64_t off, int64_t s0, int64_t s1,
                                  int64_t st0, int64_t st1) {
  return {p, p, off, {s0, s1}, {st0, st1}};
}
inline grove_memref_f32_3 memref3(float *p, int64_t off, int64_t s0, int64_t s1,
                                  int64_t s2, int64_t st0, int64_t st1,
                                  int64_t st2) {
  return {p, p, off, {s0, s1, s2}, {st0, st1, st2}};
}

/// Drops the service error a direct call of a runtime service parked on
/// this thread (the next runtime entry point clears it: here a context of
/// an empty model). Returns whether that entry point succeeded.
inline bool clearParkedServiceError() {
  grove_model_def model = {GROVE_ABI_VERSION, 0, "m",
                           "{\"format\":\"grove-model\",\"version\":7,"
                           "\"module\":\"m\",\"target\":\"host\",\n"
                           "\"state\":[],\n"
                           "\"entries\":[]}\n",
                           nullptr};
  grove_context *ctx = nullptr;
  if (grove_context_create(&model, &ctx) != GROVE_OK)
    return false;
  grove_context_destroy(ctx);
  return true;
}

inline DLDataType f32() { return {kDLFloat, 32, 1}; }
inline DLDataType i32() { return {kDLInt, 32, 1}; }

using F32Tensor = HostTensor<float>;

/// Owns a DLManagedTensor returned by the runtime.
struct ManagedPtr {
  DLManagedTensor *p = nullptr;
  ManagedPtr() = default;
  explicit ManagedPtr(DLManagedTensor *p) : p(p) {}
  ManagedPtr(const ManagedPtr &) = delete;
  ~ManagedPtr() {
    if (p && p->deleter)
      p->deleter(p);
  }
  const float *f32data() const {
    return static_cast<const float *>(p->dl_tensor.data);
  }
  std::vector<float> values() const;
};

/// Asserts `status == expected` and that a non-empty message is recorded.
/// Also checks that the message contains `needle` if given.
::testing::AssertionResult failsWith(grove_status status, grove_status expected,
                                     const std::string &needle = "");

#define EXPECT_FAILS(call, expected, ...)                                      \
  EXPECT_TRUE(::grove::test::failsWith((call), (expected), ##__VA_ARGS__))

#define ASSERT_GROVE_OK(call)                                                  \
  do {                                                                         \
    grove_status grove_s_ = (call);                                            \
    ASSERT_EQ(grove_s_, GROVE_OK)                                              \
        << grove_status_string(grove_s_) << ": " << grove_last_error();        \
  } while (0)

/// 8-byte little-endian length + header + data.
std::string safetensorsImage(const std::string &header,
                             const std::string &data);
/// Raw little-endian bytes of a float vector.
std::string floatBytes(const std::vector<float> &v);

/// A fresh directory under the gtest temp dir, removed on destruction.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return dir; }
  std::string file(const std::string &name) const { return dir + "/" + name; }
  void write(const std::string &name, const std::string &bytes) const;
  /// Names of the entries in the directory.
  std::vector<std::string> list() const;

private:
  std::string dir;
};

std::string readFile(const std::string &path);

} // namespace grove::test

#endif // GROVE_UNITTESTS_TESTUTIL_H
