#include "mapp_error.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first message of a failure; later ones are consequences. Thread-local
 * so task variants can fail on any thread without a race. */
static _Thread_local char error_message[1024];

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

void mapp_error_clear(void) { error_message[0] = '\0'; }

int mapp_report_error(const char *prog, int status) {
  if (status != MAPP_OK) {
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

int mapp_alloc(void **out, size_t bytes, const char *what) {
  /* 64-byte alignment: cache lines and AVX-512 loads. */
  size_t rounded = (bytes + 63) / 64 * 64;
  *out = rounded ? aligned_alloc(64, rounded) : NULL;
  if (rounded && !*out)
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory allocating %zu bytes for %s", bytes, what);
  return MAPP_OK;
}

int mapp_calloc(void **out, size_t count, size_t size, const char *what) {
  if (size && count > SIZE_MAX / size)
    return mapp_fail(MAPP_ERR_INPUT, "%s: %zu x %zu bytes overflows", what, count, size);
  MAPP_TRY(mapp_alloc(out, count * size, what));
  if (*out) memset(*out, 0, count * size);
  return MAPP_OK;
}
