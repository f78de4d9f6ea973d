/* train_util.h - what the training examples share: error reporting, a
 * deterministic generator (the same weights and shuffles on every
 * machine), a shuffle and a progress bar (progress.h). Header-only: each
 * example is one C file. */
#ifndef GROVE_EXAMPLES_TRAIN_UTIL_H
#define GROVE_EXAMPLES_TRAIN_UTIL_H

#include "progress.h"

#include <grove/runtime.h>

#include <stdint.h>
#include <stdio.h>

static int fail(const char *what, grove_status s) {
  fprintf(stderr, "%s: %s: %s\n", what, grove_status_string(s),
          grove_last_error());
  return 1;
}

/* xorshift64*. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_u64(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static double next_unit(void) { return (next_u64() >> 11) * 0x1.0p-53; }

static void shuffle(uint32_t *order, uint32_t n) {
  for (uint32_t i = n - 1; i > 0; --i) {
    uint32_t j = (uint32_t)(next_u64() % (i + 1));
    uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
}

static inline void progress(int epoch, int epochs, uint32_t done,
                            uint32_t total, double loss) {
  progress_bar(done, total, "epoch %2d/%d %4u/%u loss %.4f", epoch, epochs,
               done, total, loss);
}

#endif /* GROVE_EXAMPLES_TRAIN_UTIL_H */
