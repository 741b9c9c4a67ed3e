/* Error propagation for libmapp and the mini-apps, in PETSc's manner: every
 * function that can fail returns an int status the caller checks, the first
 * failure records one message naming what failed and with what value, and
 * main prints that message once and exits with the status.
 *
 * Exit codes are part of the contract (DESIGN.md): 0 ok, 1 a failed
 * verification, 2 bad input (flags, files, shapes), 3 a system failure
 * (out of memory, MPI or HDF5 failing on valid input).
 *
 * Serial: nothing here needs MPI, so the harness links it without MPI.
 * What does (MAPP_MPI, mapp_agree) is in mapp_error_mpi.h.
 *
 * Where an error came from: the mapp_fail that recorded the message (or
 * the MAPP_MPI whose call failed) and every MAPP_TRY that passed the
 * failure up record their file, line and function in a small per-thread
 * trace, as PETSc's PetscCall adds a frame per level. The one line on
 * stderr stays as it is; under MAPP_DEBUG=1 (mapp_config.h)
 * mapp_report_error prints the frames after it, innermost first:
 *   PROG: error: MESSAGE
 *     at mapp_cli.c:120 in parse_value
 *     at mapp_cli.c:310 in mapp_cli_parse */
#ifndef MAPP_ERROR_H
#define MAPP_ERROR_H

#include <stddef.h>

enum {
  MAPP_OK = 0,
  MAPP_ERR_VERIFY = 1,
  MAPP_ERR_INPUT = 2,
  MAPP_ERR_SYSTEM = 3,
};

/* Records "fmt..." as the message of this failure (the first recorded
 * message wins until mapp_error_clear; the trace then restarts at the
 * caller's line) and returns code, so it is used as
 * `return mapp_fail(MAPP_ERR_INPUT, "--rows must be >= 1, got %ld", rows);` */
#define mapp_fail(code, ...) mapp_fail_at(__FILE__, __LINE__, __func__, (code), __VA_ARGS__)
int mapp_fail_at(const char *file, int line, const char *func, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
const char *mapp_error_message(void);
/* Forgets the message and the trace (a failure that was handled). */
void mapp_error_clear(void);

/* Propagate a non-zero status to the caller, adding this line to the trace. */
#define MAPP_TRY(expr)                                                                             \
  do {                                                                                             \
    int mapp_try_status_ = (expr);                                                                 \
    if (mapp_try_status_ != MAPP_OK)                                                               \
      return mapp_trace(mapp_try_status_, __FILE__, __LINE__, __func__);                           \
  } while (0)

/* One call that carried a failure up: __FILE__, __LINE__ and __func__. */
typedef struct {
  const char *file;
  int line;
  const char *func;
} mapp_frame;
enum { MAPP_TRACE_MAX = 32 }; /* frames kept; outer ones beyond are counted */
/* Adds a frame to this thread's trace when status is a failure; returns status. */
int mapp_trace(int status, const char *file, int line, const char *func);
/* This thread's frames, innermost (where the failure began) first; returns
 * how many (at most MAPP_TRACE_MAX); *dropped, if given, the outer frames
 * that did not fit. */
int mapp_error_frames(const mapp_frame **frames, int *dropped);

/* Print the pending message (if any) as one line and return status; under
 * MAPP_DEBUG=1 the trace follows, one "  at FILE:LINE in FUNC" per line.
 * For use outside MPI (harness, serial tools); mapp_agree prints with it. */
int mapp_report_error(const char *prog, int status);

/* Checked allocation helpers: record "out of memory allocating N bytes for
 * WHAT". Zero bytes is an input error, never a NULL that looks like success
 * (a size product that wrapped to 0, or an empty problem), and so is a
 * request beyond this machine's physical memory (exit 2 naming the bytes,
 * rather than an overcommitted allocation that is killed later). */
int mapp_alloc(void **out, size_t bytes, const char *what);
int mapp_calloc(void **out, size_t count, size_t size, const char *what);

/* *out = a * b, or an input error "WHAT: A x B overflows" when the product
 * does not fit a size_t. Chain it for every size computed from user input
 * (rows x cols x sizeof(double)) before allocating or indexing with it. */
int mapp_size_mul(size_t a, size_t b, size_t *out, const char *what);
/* An input error naming the bytes when `bytes` exceeds this machine's
 * physical memory (mapp_alloc checks this itself; for sizes that are
 * summed over ranks or allocated piecewise). */
int mapp_size_fits_memory(size_t bytes, const char *what);

#endif
