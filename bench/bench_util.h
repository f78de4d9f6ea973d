/* bench/bench_util.h - timing helpers shared by the C benchmark drivers. */
#ifndef GROVE_BENCH_UTIL_H
#define GROVE_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

/* Monotonic clock in nanoseconds. */
static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* qsort comparator for int64_t samples. */
static inline int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

#endif /* GROVE_BENCH_UTIL_H */
