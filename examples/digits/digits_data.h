/* digits_data.h - reads the digits files of models/mlp (digits_test.bin,
 * and examples/train_digits' training split): format in
 * models/mlp/README.md. Shared by the example apps. */
#ifndef GROVE_EXAMPLES_DIGITS_DATA_H
#define GROVE_EXAMPLES_DIGITS_DATA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  uint32_t n, d;
  float *x;
  int32_t *labels;
} dataset;

/* Reads a digits file into `ds`; 0 on success, else 1 with a message. */
static int read_dataset(const char *path, dataset *ds) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 1;
  }
  char magic[4];
  uint32_t header[3];
  if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "GRVD", 4) != 0 ||
      fread(header, 4, 3, f) != 3 || header[0] != 1 || header[2] != 64 ||
      header[1] == 0 || header[1] > 1000000) {
    fprintf(stderr, "%s: not a digits test file\n", path);
    fclose(f);
    return 1;
  }
  ds->n = header[1];
  ds->d = header[2];
  ds->x = malloc(sizeof(float) * ds->n * ds->d);
  ds->labels = malloc(sizeof(int32_t) * ds->n);
  int ok = ds->x && ds->labels &&
           fread(ds->x, sizeof(float), (size_t)ds->n * ds->d, f) ==
               (size_t)ds->n * ds->d &&
           fread(ds->labels, sizeof(int32_t), ds->n, f) == ds->n;
  fclose(f);
  if (!ok) {
    fprintf(stderr, "%s: truncated\n", path);
    return 1;
  }
  return 0;
}

static void free_dataset(dataset *ds) {
  free(ds->x);
  free(ds->labels);
}

#endif /* GROVE_EXAMPLES_DIGITS_DATA_H */
