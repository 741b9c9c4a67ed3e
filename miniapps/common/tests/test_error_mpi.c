/* Where an MPI error came from (mapp_error_mpi.h): a failing call under
 * MAPP_MPI is the trace's first frame, with the MPI error string as the
 * message, and every MAPP_TRY above it adds one; mapp_agree reports the
 * line and, under MAPP_DEBUG=1, the frames. One rank. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mapp_error_mpi.h"

static int line_send, line_caller;

/* A send to a rank that does not exist: MPI_ERR_RANK, returned (the
 * communicator's handler is MPI_ERRORS_RETURN). */
static int send_nowhere(void) {
  int nranks, value = 1;
  MAPP_MPI(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
  line_send = __LINE__; MAPP_MPI(MPI_Send(&value, 1, MPI_INT, nranks + 5, 0, MPI_COMM_WORLD));
  return MAPP_OK;
}

static int caller(void) {
  line_caller = __LINE__; MAPP_TRY(send_nowhere());
  return MAPP_OK;
}

static const char *base(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static void mpi_failure_leaves_its_line_once(void **state) {
  (void)state;
  mapp_error_clear();
  assert_int_equal(caller(), MAPP_ERR_SYSTEM);
  assert_non_null(strstr(mapp_error_message(), "MPI_Send(&value, 1, MPI_INT, nranks + 5, 0, MPI_COMM_WORLD) failed: "));
  const mapp_frame *frames;
  assert_int_equal(mapp_error_frames(&frames, NULL), 2);
  assert_string_equal(base(frames[0].file), "test_error_mpi.c");
  assert_int_equal(frames[0].line, line_send);
  assert_string_equal(frames[0].func, "send_nowhere");
  assert_int_equal(frames[1].line, line_caller);
  assert_string_equal(frames[1].func, "caller");
}

static void check_records_the_callers_line(void **state) {
  (void)state;
  mapp_error_clear();
  int line = __LINE__; int status = mapp_mpi_check(MPI_ERR_RANK, "a send");
  assert_int_equal(status, MAPP_ERR_SYSTEM);
  assert_non_null(strstr(mapp_error_message(), "a send failed: "));
  const mapp_frame *frames;
  assert_int_equal(mapp_error_frames(&frames, NULL), 1);
  assert_int_equal(frames[0].line, line);
  assert_string_equal(frames[0].func, "check_records_the_callers_line");
  assert_int_equal(mapp_mpi_check(MPI_SUCCESS, "a send"), MAPP_OK);
}

static void agree_returns_the_worst_status(void **state) {
  (void)state;
  mapp_error_clear();
  assert_int_equal(mapp_agree(MPI_COMM_WORLD, "test", MAPP_OK), MAPP_OK);
  /* A failure is printed by the failing rank ("test: error: ..."): expected
   * on stderr here. */
  assert_int_equal(mapp_agree(MPI_COMM_WORLD, "test", mapp_fail(MAPP_ERR_INPUT, "planted")), MAPP_ERR_INPUT);
  mapp_error_clear();
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mpi_failure_leaves_its_line_once),
      cmocka_unit_test(check_records_the_callers_line),
      cmocka_unit_test(agree_returns_the_worst_status),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  MPI_Finalize();
  return failed;
}
