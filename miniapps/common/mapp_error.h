/* Error propagation for libmapp and the mini-apps, in PETSc's manner: every
 * function that can fail returns an int status the caller checks, the first
 * failure records one message naming what failed and with what value, and
 * main prints that message once and exits with the status.
 *
 * Exit codes are part of the contract (DESIGN.md): 0 ok, 1 a failed
 * verification, 2 bad input (flags, files, shapes), 3 a system failure
 * (out of memory, MPI or HDF5 failing on valid input). */
#ifndef MAPP_ERROR_H
#define MAPP_ERROR_H

#include <mpi.h>
#include <stddef.h>

enum {
  MAPP_OK = 0,
  MAPP_ERR_VERIFY = 1,
  MAPP_ERR_INPUT = 2,
  MAPP_ERR_SYSTEM = 3,
};

/* Records "fmt..." as the message of this failure (the first recorded
 * message wins until mapp_error_clear) and returns code, so it is used as
 * `return mapp_fail(MAPP_ERR_INPUT, "--rows must be >= 1, got %ld", rows);` */
int mapp_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *mapp_error_message(void);
void mapp_error_clear(void);

/* Propagate a non-zero status to the caller. */
#define MAPP_TRY(expr)                                                                             \
  do {                                                                                             \
    int mapp_try_status_ = (expr);                                                                 \
    if (mapp_try_status_ != MAPP_OK) return mapp_try_status_;                                      \
  } while (0)

/* Collective: every rank passes its status; all get the worst one back, and
 * the lowest failing rank's message is printed once on stderr as
 * "PROG: error: MESSAGE". Ranks that did not fail do not print. */
int mapp_agree(MPI_Comm comm, const char *prog, int status);

/* Print the pending message (if any) as one line and return status;
 * for use outside MPI (harness, serial tools). */
int mapp_report_error(const char *prog, int status);

/* Wrap an MPI call: on failure record the MPI error string. */
int mapp_mpi_check(int mpi_status, const char *what);
#define MAPP_MPI(call) MAPP_TRY(mapp_mpi_check((call), #call))

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
