/* Where an error came from (mapp_error.h): a failure three calls deep
 * leaves one frame per level, innermost first; under MAPP_DEBUG=1 the
 * reported line is followed by them, and without it the report is the one
 * line it always was. Links the serial core only (no MPI). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mapp_error.h"

/* Three levels: innermost fails, middle and outer pass it up. Each notes the
 * line of its failing call (on the same line, so __LINE__ is that line). */
static int line_innermost, line_middle, line_outer;

static int innermost(int value) {
  line_innermost = __LINE__; return mapp_fail(MAPP_ERR_INPUT, "value %d is bad", value);
}

static int middle(int value) {
  line_middle = __LINE__; MAPP_TRY(innermost(value));
  return MAPP_OK;
}

static int outer(int value) {
  line_outer = __LINE__; MAPP_TRY(middle(value));
  return MAPP_OK;
}

static int succeeds(void) { return MAPP_OK; }

static int passes_success(void) {
  MAPP_TRY(succeeds());
  return MAPP_OK;
}

/* Recurses `depth` levels through MAPP_TRY below a failure. */
static int deep(int depth) {
  if (depth == 0) return mapp_fail(MAPP_ERR_SYSTEM, "bottom");
  MAPP_TRY(deep(depth - 1));
  return MAPP_OK;
}

static const char *base(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static void assert_frame(const mapp_frame *f, int line, const char *func) {
  assert_string_equal(base(f->file), "test_error.c");
  assert_int_equal(f->line, line);
  assert_string_equal(f->func, func);
}

/* What mapp_report_error writes on stderr (malloc'd). */
static char *report_to_string(const char *prog, int status) {
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  assert_true(saved >= 0);
  assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
  int returned = mapp_report_error(prog, status);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  assert_int_equal(returned, status);
  assert_int_equal(fseek(tmp, 0, SEEK_END), 0);
  long size = ftell(tmp);
  assert_true(size >= 0);
  rewind(tmp);
  char *text = calloc((size_t)size + 1, 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)size, tmp), (size_t)size);
  fclose(tmp);
  return text;
}

static void three_levels_leave_three_frames(void **state) {
  (void)state;
  mapp_error_clear();
  assert_int_equal(outer(7), MAPP_ERR_INPUT);
  assert_string_equal(mapp_error_message(), "value 7 is bad");
  const mapp_frame *frames;
  int dropped = -1;
  assert_int_equal(mapp_error_frames(&frames, &dropped), 3);
  assert_int_equal(dropped, 0);
  assert_frame(&frames[0], line_innermost, "innermost");
  assert_frame(&frames[1], line_middle, "middle");
  assert_frame(&frames[2], line_outer, "outer");
}

static void debug_prints_the_frames_after_the_line(void **state) {
  (void)state;
  mapp_error_clear();
  int status = outer(7);
  setenv("MAPP_DEBUG", "1", 1);
  char *text = report_to_string("prog", status);
  unsetenv("MAPP_DEBUG");
  char expected[512];
  snprintf(expected, sizeof expected,
           "prog: error: value 7 is bad\n"
           "  at test_error.c:%d in innermost\n"
           "  at test_error.c:%d in middle\n"
           "  at test_error.c:%d in outer\n",
           line_innermost, line_middle, line_outer);
  assert_string_equal(text, expected);
  free(text);
}

static void without_debug_the_report_is_one_line(void **state) {
  (void)state;
  const char *settings[] = {NULL, "0", ""};
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; ++i) {
    mapp_error_clear();
    int status = outer(7);
    if (settings[i])
      setenv("MAPP_DEBUG", settings[i], 1);
    else
      unsetenv("MAPP_DEBUG");
    char *text = report_to_string("prog", status);
    assert_string_equal(text, "prog: error: value 7 is bad\n");
    free(text);
  }
  unsetenv("MAPP_DEBUG");
}

static void a_consequence_keeps_the_first_trace(void **state) {
  (void)state;
  mapp_error_clear();
  assert_int_equal(outer(7), MAPP_ERR_INPUT);
  /* A later failure (a cleanup that fails because the first did) neither
   * replaces the message nor adds its line. */
  assert_int_equal(mapp_fail(MAPP_ERR_SYSTEM, "cleanup failed"), MAPP_ERR_SYSTEM);
  assert_string_equal(mapp_error_message(), "value 7 is bad");
  const mapp_frame *frames;
  assert_int_equal(mapp_error_frames(&frames, NULL), 3);
  assert_frame(&frames[0], line_innermost, "innermost");
  /* Handled: the next failure starts a trace of its own. */
  mapp_error_clear();
  assert_int_equal(mapp_error_frames(&frames, NULL), 0);
  assert_int_equal(middle(1), MAPP_ERR_INPUT);
  assert_int_equal(mapp_error_frames(&frames, NULL), 2);
  assert_frame(&frames[1], line_middle, "middle");
}

static void success_leaves_no_frame(void **state) {
  (void)state;
  mapp_error_clear();
  assert_int_equal(passes_success(), MAPP_OK);
  const mapp_frame *frames;
  assert_int_equal(mapp_error_frames(&frames, NULL), 0);
}

static void a_deep_chain_keeps_the_innermost_frames(void **state) {
  (void)state;
  mapp_error_clear();
  const int depth = MAPP_TRACE_MAX + 8;
  assert_int_equal(deep(depth), MAPP_ERR_SYSTEM);
  const mapp_frame *frames;
  int dropped = 0;
  assert_int_equal(mapp_error_frames(&frames, &dropped), MAPP_TRACE_MAX);
  assert_int_equal(dropped, depth + 1 - MAPP_TRACE_MAX);
  for (int i = 0; i < MAPP_TRACE_MAX; ++i) assert_string_equal(frames[i].func, "deep");
  setenv("MAPP_DEBUG", "1", 1);
  char *text = report_to_string("prog", MAPP_ERR_SYSTEM);
  unsetenv("MAPP_DEBUG");
  char tail[64];
  snprintf(tail, sizeof tail, "  ... %d outer frames not kept\n", dropped);
  size_t n = strlen(text), t = strlen(tail);
  assert_true(n > t);
  assert_string_equal(text + n - t, tail);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(three_levels_leave_three_frames),
      cmocka_unit_test(debug_prints_the_frames_after_the_line),
      cmocka_unit_test(without_debug_the_report_is_one_line),
      cmocka_unit_test(a_consequence_keeps_the_first_trace),
      cmocka_unit_test(success_leaves_no_frame),
      cmocka_unit_test(a_deep_chain_keeps_the_innermost_frames),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
