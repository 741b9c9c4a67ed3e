#include "mapp_error.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first message of a failure; later ones are consequences. Thread-local
 * so task variants can fail on any thread without a race. */
static _Thread_local char error_message[1024];
/* Set once the message was printed: agreeing on a status again (a caller
 * and its callee both agree) does not print it twice. */
static _Thread_local bool error_reported;

int mapp_fail(int code, const char *fmt, ...) {
  if (error_message[0] == '\0') {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    va_end(ap);
  }
  return code;
}

const char *mapp_error_message(void) { return error_message; }

void mapp_error_clear(void) {
  error_message[0] = '\0';
  error_reported = false;
}

int mapp_report_error(const char *prog, int status) {
  if (status != MAPP_OK && !error_reported) {
    error_reported = true;
    fprintf(stderr, "%s: error: %s\n", prog, error_message[0] ? error_message : "unknown failure");
    fflush(stderr);
  }
  return status;
}

int mapp_agree(MPI_Comm comm, const char *prog, int status) {
  int rank, worst = status, first_failing;
  MPI_Comm_rank(comm, &rank);
  int candidate = status != MAPP_OK ? rank : INT_MAX;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, comm);
  MPI_Allreduce(&candidate, &first_failing, 1, MPI_INT, MPI_MIN, comm);
  if (status != MAPP_OK && rank == first_failing) mapp_report_error(prog, status);
  return worst;
}

int mapp_mpi_check(int mpi_status, const char *what) {
  if (mpi_status == MPI_SUCCESS) return MAPP_OK;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(mpi_status, text, &len);
  return mapp_fail(MAPP_ERR_SYSTEM, "%s failed: %s", what, text);
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
