//===- CApiTest.cpp - Runs the C99 smoke test in CApi.c -------------------===//

#include <gtest/gtest.h>

extern "C" int grove_test_c_api(void);

TEST(CApi, UsableFromC99) { EXPECT_EQ(grove_test_c_api(), 0); }
