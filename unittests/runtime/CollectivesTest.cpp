//===- CollectivesTest.cpp - The communicator's C API in one process ------===//
//
// What can be checked without mpirun: the collective services in a world of
// one process (no communicator attached), and the C API's argument checks.
// The multi-process behaviour (averages, faults) is
// test/Integration/distributed.py's.
//
//===----------------------------------------------------------------------===//

#include "Error.h"

#include "grove/abi.h"
#include "grove/runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace grove::rt;

namespace {

grove_memref_f32_1 view(std::vector<float> &v) {
  return {v.data(), v.data(), 0, {int64_t(v.size())}, {1}};
}

TEST(Collectives, WorldOfOneLeavesDataAsItIs) {
  clearServiceError(); // what earlier tests on this thread left
  std::vector<float> x = {1, 2, 3, 4}, want = x;
  grove_memref_f32_1 m = view(x);
  _mlir_ciface_grove_rt_all_reduce_f32(&m, /*mean=*/1);
  _mlir_ciface_grove_rt_broadcast_f32(&m, 0);
  EXPECT_EQ(x, want);
  std::vector<float> out(4, -1);
  grove_memref_f32_1 o = view(out);
  _mlir_ciface_grove_rt_all_gather_f32(&m, &o);
  EXPECT_EQ(out, want);
  EXPECT_EQ(grove_rt_world_size(), 1);
  EXPECT_EQ(grove_rt_world_rank(), 0);
  std::string message;
  grove_status status;
  EXPECT_FALSE(takeServiceError(message, status)) << message;
}

TEST(Collectives, StartedAllReduceOwnsACopyInAWorldOfOne) {
  clearServiceError();
  std::vector<float> x = {1, 2, 3}, want = x;
  grove_memref_f32_1 m = view(x);
  int64_t first = _mlir_ciface_grove_rt_all_reduce_start_f32(&m, /*mean=*/1);
  x.assign({7, 8, 9}); // the caller may reuse its buffer at once
  int64_t second = _mlir_ciface_grove_rt_all_reduce_start_f32(&m, 0);
  ASSERT_NE(first, 0);
  ASSERT_NE(second, 0);
  std::vector<float> a(3, -1), b(3, -1);
  grove_memref_f32_1 ma = view(a), mb = view(b);
  // Waited for out of order: each handle keeps its own data.
  _mlir_ciface_grove_rt_collective_wait_f32(second, &mb);
  _mlir_ciface_grove_rt_collective_wait_f32(first, &ma);
  EXPECT_EQ(a, want);
  EXPECT_EQ(b, std::vector<float>({7, 8, 9}));
  std::string message;
  grove_status status;
  EXPECT_FALSE(takeServiceError(message, status)) << message;
}

TEST(Collectives, StartedAllGatherInAWorldOfOne) {
  clearServiceError();
  std::vector<float> x = {4, 5}, out(2, -1);
  grove_memref_f32_1 m = view(x), o = view(out);
  int64_t handle = _mlir_ciface_grove_rt_all_gather_start_f32(&m);
  x.assign({0, 0});
  _mlir_ciface_grove_rt_collective_wait_f32(handle, &o);
  EXPECT_EQ(out, std::vector<float>({4, 5}));
  std::string message;
  grove_status status;
  EXPECT_FALSE(takeServiceError(message, status)) << message;
}

TEST(Collectives, WaitIntoAnotherSizeIsAServiceError) {
  clearServiceError();
  std::vector<float> x = {1, 2, 3}, out(2);
  grove_memref_f32_1 m = view(x), o = view(out);
  int64_t handle = _mlir_ciface_grove_rt_all_reduce_start_f32(&m, 1);
  _mlir_ciface_grove_rt_collective_wait_f32(handle, &o);
  std::string message;
  grove_status status;
  ASSERT_TRUE(takeServiceError(message, status));
  EXPECT_EQ(status, GROVE_ERROR_INTERNAL);
  EXPECT_NE(message.find("does not match the started collective"),
            std::string::npos)
      << message;
}

TEST(Collectives, GatherIntoTheWrongSizeIsAServiceError) {
  clearServiceError();
  std::vector<float> x = {1, 2}, out(3);
  grove_memref_f32_1 m = view(x), o = view(out);
  _mlir_ciface_grove_rt_all_gather_f32(&m, &o);
  std::string message;
  grove_status status;
  ASSERT_TRUE(takeServiceError(message, status));
  EXPECT_EQ(status, GROVE_ERROR_INTERNAL);
  EXPECT_NE(message.find("does not hold one input per rank"), std::string::npos)
      << message;
}

TEST(Collectives, StridedBufferIsAServiceError) {
  clearServiceError();
  std::vector<float> x = {1, 2, 3, 4};
  grove_memref_f32_1 m = {x.data(), x.data(), 0, {2}, {2}};
  _mlir_ciface_grove_rt_all_reduce_f32(&m, 0);
  std::string message;
  grove_status status;
  ASSERT_TRUE(takeServiceError(message, status));
  EXPECT_NE(message.find("not contiguous"), std::string::npos) << message;
}

TEST(Collectives, CApiChecksArguments) {
  EXPECT_EQ(grove_comm_rank(nullptr), 0);
  EXPECT_EQ(grove_comm_size(nullptr), 1);
  grove_comm_destroy(nullptr);
  EXPECT_EQ(grove_comm_create(nullptr, nullptr), GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(grove_last_error()).find("out_comm is NULL"),
            std::string::npos);
  grove_comm *comm = reinterpret_cast<grove_comm *>(1);
  grove_comm_options options;
  grove_comm_options_init(&options);
  EXPECT_EQ(options.struct_size, sizeof(options));
  EXPECT_GT(options.timeout_seconds, 0);
  options.timeout_seconds = 0;
  EXPECT_EQ(grove_comm_create(&options, &comm), GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(std::string(grove_last_error()).find("timeout_seconds"),
            std::string::npos);
  options.struct_size = 1;
  EXPECT_EQ(grove_comm_create(&options, &comm), GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(grove_comm_create_from_mpi(nullptr, nullptr, &comm),
            GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(grove_context_set_comm(nullptr, nullptr),
            GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(grove_comm_all_reduce(nullptr, nullptr, 0),
            GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(grove_comm_barrier(nullptr), GROVE_ERROR_INVALID_ARGUMENT);
  grove_comm_stats stats;
  EXPECT_EQ(grove_comm_get_stats(nullptr, &stats),
            GROVE_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(grove_status_string(GROVE_ERROR_PEER), "GROVE_ERROR_PEER");
}

} // namespace

namespace {

TEST(Collectives, TopKTakesLargestMagnitudesTiesToLowerIndex) {
  clearServiceError();
  std::vector<float> x = {1, -5, 3, 5, 0.5f, -3, NAN, 2};
  std::vector<float> values(4);
  std::vector<int32_t> indices(4);
  grove_memref_f32_1 in = view(x), v = view(values);
  grove_memref_i32_1 i = {indices.data(), indices.data(), 0, {4}, {1}};
  _mlir_ciface_grove_rt_top_k_f32(&in, &v, &i);
  // NaN first, then |5| twice, then |3| at the lower index; index order.
  EXPECT_EQ(indices, (std::vector<int32_t>{1, 2, 3, 6}));
  EXPECT_EQ(values[0], -5);
  EXPECT_EQ(values[1], 3);
  EXPECT_EQ(values[2], 5);
  EXPECT_TRUE(std::isnan(values[3]));
  std::string message;
  grove_status status;
  EXPECT_FALSE(takeServiceError(message, status)) << message;
}

TEST(Collectives, TopKLargerThanInputIsAServiceError) {
  clearServiceError();
  std::vector<float> x = {1, 2}, values(3);
  std::vector<int32_t> indices(3);
  grove_memref_f32_1 in = view(x), v = view(values);
  grove_memref_i32_1 i = {indices.data(), indices.data(), 0, {3}, {1}};
  _mlir_ciface_grove_rt_top_k_f32(&in, &v, &i);
  std::string message;
  grove_status status;
  ASSERT_TRUE(takeServiceError(message, status));
  EXPECT_EQ(status, GROVE_ERROR_INVALID_ARGUMENT);
}

} // namespace
