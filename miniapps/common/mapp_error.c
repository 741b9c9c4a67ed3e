#include "mapp_error.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapp_config.h"

/* The first message of a failure; later ones are consequences. Thread-local
 * so task variants can fail on any thread without a race. */
static _Thread_local char error_message[1024];
/* Set once the message was printed: agreeing on a status again (a caller
 * and its callee both agree) does not print it twice. */
static _Thread_local bool error_reported;
/* The calls that carried the failure up, innermost first: the frame of the
 * mapp_fail that recorded the message, then one per MAPP_TRY it passed. */
static _Thread_local mapp_frame trace[MAPP_TRACE_MAX];
static _Thread_local int trace_count, trace_dropped;

int mapp_trace(int status, const char *file, int line, const char *func) {
  if (status == MAPP_OK) return status;
  if (trace_count < MAPP_TRACE_MAX)
    trace[trace_count++] = (mapp_frame){.file = file, .line = line, .func = func};
  else
    ++trace_dropped;
  return status;
}

int mapp_error_frames(const mapp_frame **frames, int *dropped) {
  *frames = trace;
  if (dropped) *dropped = trace_dropped;
  return trace_count;
}

int mapp_fail_at(const char *file, int line, const char *func, int code, const char *fmt, ...) {
  /* Later failures are consequences of the first: its message and its
   * trace stand, and the consequence adds no frame. */
  if (error_message[0] == '\0') {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    va_end(ap);
    trace_count = trace_dropped = 0;
    mapp_trace(code, file, line, func);
  }
  return code;
}

const char *mapp_error_message(void) { return error_message; }

void mapp_error_clear(void) {
  error_message[0] = '\0';
  error_reported = false;
  trace_count = trace_dropped = 0;
}

/* "dir/file.c" -> "file.c": __FILE__ is the path the build passed. */
static const char *file_name(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  return slash ? slash + 1 : path ? path : "?";
}

static void print_trace(FILE *out) {
  for (int i = 0; i < trace_count; ++i)
    fprintf(out, "  at %s:%d in %s\n", file_name(trace[i].file), trace[i].line, trace[i].func ? trace[i].func : "?");
  if (trace_dropped > 0) fprintf(out, "  ... %d outer frames not kept\n", trace_dropped);
}

int mapp_report_error(const char *prog, int status) {
  if (status != MAPP_OK && !error_reported) {
    error_reported = true;
    fprintf(stderr, "%s: error: %s\n", prog, error_message[0] ? error_message : "unknown failure");
    if (mapp_config_read().debug) print_trace(stderr);
    fflush(stderr);
  }
  return status;
}

int mapp_size_mul(size_t a, size_t b, size_t *out, const char *what) {
  if (b != 0 && a > SIZE_MAX / b) {
    *out = 0;
    return mapp_fail(MAPP_ERR_INPUT, "%s: %zu x %zu overflows the address space (more than %zu bytes)", what, a,
                     b, (size_t)SIZE_MAX);
  }
  *out = a * b;
  return MAPP_OK;
}

static size_t physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return SIZE_MAX; /* unknown: only malloc can say */
  return (size_t)pages > SIZE_MAX / (size_t)page ? SIZE_MAX : (size_t)pages * (size_t)page;
}

int mapp_size_fits_memory(size_t bytes, const char *what) {
  size_t memory = physical_memory();
  if (bytes <= memory) return MAPP_OK;
  return mapp_fail(MAPP_ERR_INPUT, "%s needs %zu bytes (%.3g GiB), more than this machine's %zu bytes of memory", what,
                   bytes, (double)bytes / (1024.0 * 1024.0 * 1024.0), memory);
}

int mapp_alloc(void **out, size_t bytes, const char *what) {
  *out = NULL;
  if (bytes == 0)
    return mapp_fail(MAPP_ERR_INPUT, "%s: 0 bytes requested (an empty problem, or a size product that overflowed)",
                     what);
  MAPP_TRY(mapp_size_fits_memory(bytes, what));
  /* 64-byte alignment: cache lines and AVX-512 loads. bytes is at most the
   * physical memory here, so rounding up cannot wrap. */
  size_t rounded = (bytes + 63) / 64 * 64;
  *out = aligned_alloc(64, rounded);
  if (!*out) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory allocating %zu bytes for %s", bytes, what);
  return MAPP_OK;
}

int mapp_calloc(void **out, size_t count, size_t size, const char *what) {
  size_t bytes;
  *out = NULL;
  MAPP_TRY(mapp_size_mul(count, size, &bytes, what));
  MAPP_TRY(mapp_alloc(out, bytes, what));
  memset(*out, 0, bytes);
  return MAPP_OK;
}
