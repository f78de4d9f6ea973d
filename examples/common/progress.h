/* progress.h - the training examples' progress bar. It redraws one line
 * with carriage returns, so it is drawn only when stderr is a terminal:
 * piped into a log, the examples' own lines (one an epoch or an interval,
 * on stdout) are the record, as tqdm writes off a terminal. */
#ifndef GROVE_EXAMPLES_PROGRESS_H
#define GROVE_EXAMPLES_PROGRESS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static inline int progress_visible(void) {
  static int visible = -1;
  if (visible < 0)
    visible = isatty(fileno(stderr));
  return visible;
}

/* "\r[####....] <what>": `done` of `total` filled. */
static inline void progress_bar(uint64_t done, uint64_t total, const char *fmt,
                                ...) __attribute__((format(printf, 3, 4)));
static inline void progress_bar(uint64_t done, uint64_t total, const char *fmt,
                                ...) {
  enum { WIDTH = 30 };
  if (!progress_visible())
    return;
  int filled = total ? (int)(done * WIDTH / total) : WIDTH;
  char bar[WIDTH + 1];
  for (int i = 0; i < WIDTH; ++i)
    bar[i] = i < filled ? '#' : '.';
  bar[WIDTH] = 0;
  fprintf(stderr, "\r[%s] ", bar);
  va_list args;
  va_start(args, fmt);
  vfprintf(stderr, fmt, args);
  va_end(args);
}

/* Ends the bar's line (before other output), where one was drawn. */
static inline void progress_end(void) {
  if (progress_visible())
    fputc('\n', stderr);
}

#endif /* GROVE_EXAMPLES_PROGRESS_H */
