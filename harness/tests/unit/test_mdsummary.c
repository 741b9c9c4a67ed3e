/* The CI summary's writer (mdsummary.c): tables, text and links as GitHub
 * reads them with record strings escaped; the limit held whatever is
 * offered, with a cut line whose counts add up; a table cut before its
 * first row leaves no header; a block's headings demoted but not a code
 * block's lines; a GitHub step summary appended to, never replaced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fsutil.h"
#include "mapp_error.h"
#include "mdsummary.h"

static const char *const two[] = {"name", "value"};

static void tables_and_text_as_github_reads_them(void **state) {
  (void)state;
  md_summary m;
  char *text = NULL;
  assert_int_equal(md_summary_open(&m, 4000, "Full report: [r](x.html)"), MAPP_OK);
  md_heading(&m, 2, "mapp <report>");
  md_para(&m, "a | b\nc `<kept>`");
  md_table(&m, "lr", two);
  md_cell(&m, "a|b");
  md_cell(&m, "%d", 42);
  md_row_end(&m);
  md_cell(&m, "only one");
  md_row_end(&m);
  md_table_end(&m);
  assert_int_equal(md_summary_finish(&m, &text), MAPP_OK);
  assert_string_equal(text, "## mapp &lt;report>\n\n"
                            "a | b c `<kept>`\n\n"
                            "| name | value |\n|---|---:|\n| a\\|b | 42 |\n| only one | |\n\n"
                            "Full report: [r](x.html)\n");
  free(text);
}

/* Rows of every length, then a paragraph: under the limit, the link line
 * last, and the rows kept plus the rows the cut line counts are all. */
static void the_limit_holds_and_the_cut_line_counts(void **state) {
  (void)state;
  enum { ROWS = 3000, LIMIT = 6000 };
  md_summary m;
  char *text = NULL;
  assert_int_equal(md_summary_open(&m, LIMIT, "Full report: [report.html](r/report.html)"), MAPP_OK);
  md_table(&m, "lr", two);
  for (int i = 0; i < ROWS; ++i) {
    static const char filler[] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
    md_cell(&m, "configuration %d %.*s", i, i % 97, filler);
    md_cell(&m, "%d", i);
    md_row_end(&m);
  }
  md_table_end(&m);
  md_para(&m, "after the table");
  assert_int_equal(md_summary_finish(&m, &text), MAPP_OK);
  assert_true(strlen(text) < LIMIT);
  assert_null(strstr(text, "after the table"));
  size_t kept = 0;
  for (const char *p = strstr(text, "| configuration "); p; p = strstr(p + 1, "| configuration ")) ++kept;
  size_t left = 0, of = 0, other = 0;
  const char *cut = strstr(text, "**Cut to stay under 6,000 characters:** ");
  assert_non_null(cut);
  assert_int_equal(sscanf(cut, "**Cut to stay under 6,000 characters:** %zu table rows (of %zu) and %zu other line",
                          &left, &of, &other), 3);
  assert_int_equal(kept + left, ROWS);
  assert_int_equal(of, ROWS);
  assert_int_equal(other, 1);
  assert_true(kept > 10);
  const char *link = "Full report: [report.html](r/report.html)\n";
  assert_string_equal(text + strlen(text) - strlen(link), link);
  free(text);
}

static void a_table_cut_before_its_first_row_has_no_header(void **state) {
  (void)state;
  md_summary m;
  char *text = NULL;
  assert_int_equal(md_summary_open(&m, 400, "link"), MAPP_OK);
  md_para(&m, "%0100d", 0);
  md_table(&m, "lr", two);
  md_cell(&m, "%0200d", 1);
  md_row_end(&m);
  md_table_end(&m);
  assert_int_equal(md_summary_finish(&m, &text), MAPP_OK);
  assert_null(strstr(text, "| name"));
  assert_non_null(strstr(text, "1 table row (of 1) and 0 other lines left out"));
  free(text);
}

static void a_block_is_demoted_but_not_its_code(void **state) {
  (void)state;
  md_summary m;
  char *text = NULL;
  assert_int_equal(md_summary_open(&m, 4000, "link"), MAPP_OK);
  md_block(&m, "## What each technique buys here\n\n```sh\n# a comment\n```\n\n", 1);
  assert_int_equal(md_summary_finish(&m, &text), MAPP_OK);
  assert_string_equal(text, "### What each technique buys here\n\n```sh\n# a comment\n```\n\nlink\n");
  free(text);
}

static void links_and_their_limits(void **state) {
  (void)state;
  char *line = md_link_line("Full report", "a [b]", "https://ci/x (1)/r.html?a=1&b=2");
  assert_non_null(line);
  assert_string_equal(line, "Full report: [a \\[b\\]](https://ci/x%20%281%29/r.html?a=1&b=2)");
  free(line);
  md_summary m;
  char long_link[MD_SUMMARY_MAX_LINK + 2];
  memset(long_link, 'x', sizeof long_link - 1);
  long_link[sizeof long_link - 1] = '\0';
  assert_int_equal(md_summary_open(&m, MD_SUMMARY_LIMIT, long_link), MAPP_ERR_INPUT);
  mapp_error_clear();
}

static void a_step_summary_is_appended_to(void **state) {
  (void)state;
  char dir[] = "/tmp/mapp-test-mdsummary.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char *path = path_join(dir, "step.md");
  assert_int_equal(write_text_file(path, "an earlier step\n"), MAPP_OK);
  unsetenv("GITHUB_STEP_SUMMARY");
  assert_int_equal(md_summary_append_step("ignored\n"), MAPP_OK); /* unset: nothing */
  setenv("GITHUB_STEP_SUMMARY", path, 1);
  assert_int_equal(md_summary_append_step("## one\n"), MAPP_OK);
  assert_int_equal(md_summary_append_step("## two\n"), MAPP_OK);
  char *text = NULL;
  assert_int_equal(read_text_file(path, &text), MAPP_OK);
  assert_string_equal(text, "an earlier step\n\n## one\n\n## two\n");
  free(text);
  char *missing = path_join(dir, "no/such/folder/step.md");
  setenv("GITHUB_STEP_SUMMARY", missing, 1);
  assert_int_equal(md_summary_append_step("x\n"), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), missing));
  mapp_error_clear();
  unsetenv("GITHUB_STEP_SUMMARY");
  unlink(path);
  rmdir(dir);
  free(missing);
  free(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tables_and_text_as_github_reads_them),
      cmocka_unit_test(the_limit_holds_and_the_cut_line_counts),
      cmocka_unit_test(a_table_cut_before_its_first_row_has_no_header),
      cmocka_unit_test(a_block_is_demoted_but_not_its_code),
      cmocka_unit_test(links_and_their_limits),
      cmocka_unit_test(a_step_summary_is_appended_to),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
