/* JUnit XML (junit.c): names from job keys, records judged as job_judge
 * writes them (pass, wrong answer, missing baseline, timeout, crash,
 * skip), hostile text escaped into well-formed XML, the suite's counts,
 * and an unwritable path answered with one clear input error.
 *
 * With a folder argument it writes there, instead, the documents that
 * junit.sh validates against the schema (sample.xml, empty.xml). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fsutil.h"
#include "junit.h"
#include "mapp_error.h"

/* Everything a log or a flag could carry: markup, the end of a CDATA
 * section, controls, a terminal escape, bytes that are not UTF-8 (a lone
 * 0xff, an overlong '/', a UTF-16 surrogate) and real UTF-8. */
static const char hostile[] = "]]> <b>&amp;\"q\" 'a' \x01\x02\x1b[31mred\x7f \xff \xc0\xaf \xed\xa0\x80 "
                              "\xc2\xb5s \xe2\x88\x9e \xf0\x9f\x9a\x80\r\n\tend";

static char scratch[64];

static int make_scratch(void **state) {
  (void)state;
  snprintf(scratch, sizeof scratch, "/tmp/mapp-junit-XXXXXX");
  return mkdtemp(scratch) ? 0 : -1;
}

static int remove_scratch(void **state) {
  (void)state;
  char *command = str_printf("rm -rf '%s'", scratch);
  int status = command ? system(command) : -1;
  free(command);
  return status == 0 ? 0 : -1;
}

static char *scratch_file(const char *name, const char *text) {
  char *path = path_join(scratch, name);
  assert_non_null(path);
  assert_int_equal(write_text_file(path, text), MAPP_OK);
  return path;
}

/* A record as job_judge writes it: a passing heat run on n ranks. */
static json_t *heat_record(long ranks, long repetition, const char *log) {
  char key[96];
  snprintf(key, sizeof key, "heat|mpi|serial|n%ld|t1|tiny|weak|r%ld", ranks, repetition);
  return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:s, s:s, s:{s:s, s:f}, s:{s:s}, "
                   "s:{s:s, s:s}, s:s}",
                   "key", key, "app", "heat", "variant", "mpi", "backend", "serial", "size", "tiny", "scaling", "weak",
                   "ranks", (json_int_t)ranks, "threads", (json_int_t)1, "repetition", (json_int_t)repetition,
                   "exit_code", (json_int_t)0, "elapsed_s", 0.25, "log", log, "launch",
                   "mpirun -np 1 /build/bin/mapp-heat --size tiny", "fom", "name", "cell-updates/s", "value", 7.5e8,
                   "verification", "status", "pass", "baseline", "status", "pass", "file", "/b/heat/tiny.h5", "check",
                   "required");
}

static char *render(const junit_suite *s) {
  char *xml = NULL;
  assert_int_equal(junit_render(s, &xml), MAPP_OK);
  assert_non_null(xml);
  return xml;
}

static junit_suite *new_suite(const char *name) {
  junit_suite *s = NULL;
  assert_int_equal(junit_suite_new(name, &s), MAPP_OK);
  junit_suite_set_timestamp(s, 1700000000); /* 2023-11-14T22:13:20 */
  return s;
}

static void expect_contains(const char *xml, const char *text) {
  if (!strstr(xml, text)) fail_msg("the document lacks '%s':\n%s", text, xml);
}

static void expect_lacks(const char *xml, const char *text) {
  if (strstr(xml, text)) fail_msg("the document has '%s':\n%s", text, xml);
}

static void names(const char *key, const char *classname, const char *name) {
  char *c = NULL, *n = NULL;
  assert_int_equal(junit_names_of_key(key, &c, &n), MAPP_OK);
  assert_string_equal(c, classname);
  assert_string_equal(n, name);
  free(c);
  free(n);
}

static void names_from_keys(void **state) {
  (void)state;
  names("heat|mpi|serial|n4|t1|tiny|weak|r0", "mapp.heat.mpi.serial", "tiny weak n4 t1 r0");
  names("heat|mpi|serial|n4|t1|tiny|weak|r2|snap5", "mapp.heat.mpi.serial", "tiny weak n4 t1 r2 [snap5]");
  names("heat|tasks|omp|n1|t2|small|strong|r-1", "mapp.heat.tasks.omp", "small strong n1 t2");
  names("heat|mpi|serial|n1|t1|tiny|weak|r-1|--steps 50", "mapp.heat.mpi.serial", "tiny weak n1 t1 [--steps 50]");
  /* configuration keys (no repetition), a setting holding the separator */
  names("crm|batched|cuda|n2|t1|tiny|weak", "mapp.crm.batched.cuda", "tiny weak n2 t1");
  names("crm|batched|cuda|n2|t1|tiny|weak|a|b", "mapp.crm.batched.cuda", "tiny weak n2 t1 [a|b]");
  char *c = NULL, *n = NULL;
  assert_int_equal(junit_names_of_key("heat|mpi|serial|n4", &c, &n), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "heat|mpi|serial|n4"));
  assert_null(c);
  assert_null(n);
  mapp_error_clear();
}

/* Every character of the document is one XML 1.0 allows, in UTF-8: no
 * control but tab and newline, no byte sequence that is not UTF-8. */
static void expect_xml_chars(const char *xml) {
  for (const unsigned char *p = (const unsigned char *)xml; *p; ++p) {
    if (*p < 0x20 && *p != '\n' && *p != '\t') fail_msg("control 0x%02x at offset %td", *p, (const char *)p - xml);
    assert_true(*p != 0xff && *p != 0xc0 && *p != 0xed); /* the hostile bytes never pass through */
  }
}

static void hostile_text_escaped(void **state) {
  (void)state;
  junit_suite *s = new_suite("hostile <suite> & co");
  junit_property props[] = {{"fom", "1e9"}, {"note <&>", hostile}};
  junit_case c = {.classname = "mapp.heat.mpi.serial", .name = "tiny weak n1 t1 r0", .time_s = 1.5,
                  .status = JUNIT_FAILURE, .type = "verification", .message = hostile, .details = hostile,
                  .properties = props, .property_count = 2};
  assert_int_equal(junit_add_case(s, &c), MAPP_OK);
  assert_int_equal(junit_suite_property(s, "revision", hostile), MAPP_OK);
  char *xml = render(s);
  expect_xml_chars(xml);
  expect_lacks(xml, "]]>");
  expect_lacks(xml, "<b>");
  expect_contains(xml, "name=\"hostile &lt;suite&gt; &amp; co\"");
  expect_contains(xml, "]]&gt; &lt;b&gt;&amp;amp;&quot;q&quot; &apos;a&apos; \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd[31mred\x7f");
  expect_contains(xml, "\xc2\xb5s \xe2\x88\x9e \xf0\x9f\x9a\x80"); /* µs ∞ and an emoji kept */
  expect_contains(xml, "&#13;&#10;&#9;end\""); /* in attributes, line breaks and tabs survive as references */
  expect_contains(xml, "&#13;\n\tend");       /* in text, \r as a reference (a parser would drop it) */
  /* each bad byte one U+FFFD: 0xff; 0xc0 0xaf; 0xed, 0xa0, 0x80 */
  expect_contains(xml, " \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd ");
  expect_contains(xml, "name=\"mapp.heat.mpi.serial/tiny weak n1 t1 r0/note &lt;&amp;&gt;\"");
  expect_contains(xml, "timestamp=\"2023-11-14T22:13:20\"");
  expect_contains(xml, "time=\"1.500\"");
  free(xml);
  junit_suite_free(s);
}

static void counts_and_times(void **state) {
  (void)state;
  junit_suite *s = new_suite("counts");
  const junit_status statuses[] = {JUNIT_PASS, JUNIT_FAILURE, JUNIT_ERROR, JUNIT_SKIPPED, JUNIT_FAILURE};
  const double times[] = {1.25, -3, 0.5, 0, 1.0 / 0.0}; /* negative and infinite count as 0 */
  for (int i = 0; i < 5; ++i) {
    char name[24];
    snprintf(name, sizeof name, "case %d", i);
    junit_case c = {.classname = "mapp.x", .name = name, .time_s = times[i], .status = statuses[i]};
    assert_int_equal(junit_add_case(s, &c), MAPP_OK);
  }
  junit_counts n;
  junit_suite_counts(s, &n);
  assert_int_equal(n.tests, 5);
  assert_int_equal(n.failures, 2);
  assert_int_equal(n.errors, 1);
  assert_int_equal(n.skipped, 1);
  char *xml = render(s);
  expect_contains(xml, "tests=\"5\" failures=\"2\" errors=\"1\" skipped=\"1\" time=\"1.750\"");
  expect_contains(xml, "<failure type=\"failure\"></failure>"); /* no type given: the element's name */
  expect_contains(xml, "<error type=\"error\"></error>");
  expect_contains(xml, "<skipped></skipped>");
  expect_contains(xml, "name=\"case 4\" time=\"0.000\"");
  free(xml);
  junit_suite_set_time(s, 12.0625);
  xml = render(s);
  expect_contains(xml, "time=\"12.062\"");
  free(xml);
  junit_case nameless = {.classname = "mapp.x", .name = ""};
  assert_int_equal(junit_add_case(s, &nameless), MAPP_ERR_INPUT);
  mapp_error_clear();
  junit_suite_free(s);
  assert_int_equal(junit_suite_new("", &s), MAPP_ERR_INPUT);
  assert_null(s);
  mapp_error_clear();
}

/* The case of one record, rendered alone. */
static char *record_xml(const json_t *record) {
  junit_suite *s = new_suite("records");
  assert_int_equal(junit_add_record(s, record), MAPP_OK);
  char *xml = render(s);
  junit_suite_free(s);
  return xml;
}

static void passing_record(void **state) {
  (void)state;
  json_t *r = heat_record(2, 1, "/nowhere/heat.log");
  json_object_set_new(r, "verdict", json_pack("{s:s, s:f}", "kind", "stable", "half_width", 0.01));
  json_object_set_new(r, "repetitions", json_integer(5));
  json_object_set_new(r, "attempts", json_integer(2));
  char *xml = record_xml(r);
  expect_contains(xml, "<testcase classname=\"mapp.heat.mpi.serial\" name=\"tiny weak n2 t1 r1\" time=\"0.250\"/>");
  const char *props[] = {"/fom\" value=\"7.5e+08\"", "/fom_unit\" value=\"cell-updates/s\"",
                         "/verdict\" value=\"stable\"", "/repetitions\" value=\"5\"", "/attempts\" value=\"2\""};
  for (size_t i = 0; i < sizeof props / sizeof *props; ++i) {
    char *full = str_printf("<property name=\"mapp.heat.mpi.serial/tiny weak n2 t1 r1%s/>", props[i]);
    expect_contains(xml, full);
    free(full);
  }
  expect_contains(xml, "failures=\"0\" errors=\"0\" skipped=\"0\"");
  free(xml);
  json_decref(r);
}

/* A wrong answer: the failure names the field, the log and the command,
 * and shows the log's last 40 lines. */
static void baseline_failure_with_log_tail(void **state) {
  (void)state;
  char *log_text = strdup("");
  for (int i = 1; i <= 100; ++i) {
    char *longer = str_printf("%sstep %d <ok> & \x01 done\n", log_text, i);
    free(log_text);
    log_text = longer;
  }
  char *log = scratch_file("wrong.log", log_text);
  json_t *r = heat_record(1, 0, log);
  json_object_set_new(r, "baseline",
                      json_pack("{s:s, s:s, s:[{s:s, s:s, s:f, s:f, s:f, s:I, s:b}]}", "status", "fail", "file",
                                "/b/heat/tiny.h5", "fields", "name", "temperature", "model", "exact", "bound", 0.0,
                                "worst_abs", 0.001, "worst_rel", 0.5, "violations", (json_int_t)12, "passed", 0));
  char *xml = record_xml(r);
  expect_contains(xml, "<failure type=\"baseline\" message=\"answer differs from baseline /b/heat/tiny.h5: "
                       "temperature (exact, bound 0): worst abs 0.001, rel 0.5, 12 values out of bounds\">");
  expect_contains(xml, "log: ");
  expect_contains(xml, log);
  expect_contains(xml, "reproduce: mpirun -np 1 /build/bin/mapp-heat --size tiny\n");
  expect_contains(xml, "--- the end of the log ---\nstep 61 &lt;ok&gt; &amp; \xef\xbf\xbd done\n");
  expect_contains(xml, "step 100 &lt;ok&gt;");
  expect_lacks(xml, "step 60 ");
  expect_contains(xml, "properties:\n  fom: 7.5e+08\n  fom_unit: cell-updates/s\n</failure>");
  expect_xml_chars(xml);
  free(xml);
  json_decref(r);
  free(log);
  free(log_text);
}

static void verification_and_consistency_failures(void **state) {
  (void)state;
  json_t *r = heat_record(1, 0, "/nowhere/heat.log");
  json_object_set_new(r, "exit_code", json_integer(1));
  json_object_set_new(r, "verification",
                      json_pack("{s:s, s:f, s:[{s:s, s:b}, {s:s, s:b}]}", "status", "fail", "worst_error", 0.25,
                                "checks", "name", "finite", "passed", 1, "name", "max-principle", "passed", 0));
  char *xml = record_xml(r);
  expect_contains(xml, "<failure type=\"verification\" message=\"verification failed (worst error 0.25): "
                       "max-principle\">");
  expect_contains(xml, "(no log to show: No such file or directory)");
  free(xml);
  json_decref(r);
  r = heat_record(4, 0, "/nowhere/heat.log");
  json_object_set_new(r, "consistency", json_pack("{s:s, s:s, s:s}", "status", "fail", "file", "/r/n1.h5", "error",
                                                  "dataset temperature: shape 10x12, expected 20x12"));
  xml = record_xml(r);
  expect_contains(xml, "<failure type=\"consistency\" message=\"answer differs from the sweep&apos;s 1-rank answer "
                       "/r/n1.h5: dataset temperature: shape 10x12, expected 20x12\">");
  free(xml);
  json_decref(r);
}

static void missing_required_baseline(void **state) {
  (void)state;
  json_t *r = heat_record(2, 0, "/nowhere/heat.log");
  json_object_set_new(r, "baseline", json_pack("{s:s, s:s, s:s}", "status", "missing", "file",
                                               "/b/heat/tiny-weak2.h5", "bless",
                                               "mapp bless heat --size tiny --scaling weak -n 2"));
  char *xml = record_xml(r);
  expect_contains(xml, "<failure type=\"missing-baseline\" message=\"no baseline to check the answer against "
                       "(check: required): missing /b/heat/tiny-weak2.h5\">");
  expect_contains(xml, "bless: mapp bless heat --size tiny --scaling weak -n 2\n");
  free(xml);
  json_object_set_new(r, "check", json_string("optional")); /* optional: a missing baseline is no failure */
  xml = record_xml(r);
  expect_lacks(xml, "<failure");
  free(xml);
  json_decref(r);
}

static void timeouts(void **state) {
  (void)state;
  json_t *r = heat_record(1, 0, "/nowhere/heat.log");
  json_object_set_new(r, "exit_code", json_integer(137));
  json_object_set_new(r, "elapsed_s", json_real(12.04));
  json_object_set_new(r, "timeout", json_true());
  json_object_set_new(r, "time_limit_s", json_real(12));
  char *xml = record_xml(r);
  expect_contains(xml, "<failure type=\"timeout\" message=\"timed out after 12.04 s (limit 12 s)\">");
  expect_contains(xml, "time=\"12.040\"");
  free(xml);
  json_object_del(r, "timeout");
  json_object_set_new(r, "status", json_string("timeout"));
  xml = record_xml(r);
  expect_contains(xml, "<failure type=\"timeout\"");
  free(xml);
  json_decref(r);
  r = heat_record(1, 0, "/nowhere/heat.log"); /* collect: Slurm ended the job at its limit */
  json_object_set_new(r, "exit_code", json_integer(-1));
  json_object_set_new(r, "scheduler_state", json_string("TIMEOUT"));
  xml = record_xml(r);
  expect_contains(xml, "message=\"timed out: the batch job ran past its time limit (Slurm: TIMEOUT)\"");
  free(xml);
  json_object_set_new(r, "scheduler_state", json_string("CANCELLED"));
  xml = record_xml(r);
  expect_contains(xml, "<error type=\"exit\" message=\"the batch job ended without this run&apos;s status "
                       "(Slurm: CANCELLED)\">");
  free(xml);
  json_decref(r);
}

/* Records as job_judge writes them now: the "outcome" decides, a stopped
 * launch carries "timeout": {limit_s, elapsed_s, killed}, and each launch
 * of a retried run is one of "attempts". */
static void outcome_field_decides(void **state) {
  (void)state;
  json_t *r = heat_record(1, 0, "/nowhere/heat.log");
  json_object_set_new(r, "exit_code", json_integer(137));
  json_object_set_new(r, "outcome", json_string("timeout"));
  json_object_set_new(r, "time_limit_s", json_real(5));
  json_object_set_new(r, "timeout", json_pack("{s:f, s:f, s:b}", "limit_s", 5.0, "elapsed_s", 10.1897, "killed", 1));
  json_object_set_new(r, "attempts", json_pack("[{s:i}, {s:i}]", "exit_code", 137, "exit_code", 137));
  char *xml = record_xml(r);
  expect_contains(xml, "<failure type=\"timeout\" message=\"timed out after 10.19 s (limit 5 s)\">");
  expect_contains(xml, "r0/attempts\" value=\"2\"/>");
  expect_contains(xml, "  attempts: 2\n");
  free(xml);
  const char *outcomes[][2] = {{"unchecked", "<failure type=\"missing-baseline\""},
                               {"consistency", "<failure type=\"consistency\""},
                               {"verify", "<failure type=\"verification\""},
                               {"exit", "<error type=\"exit\""},
                               {"ok", "failures=\"0\" errors=\"0\""}};
  for (size_t i = 0; i < sizeof outcomes / sizeof *outcomes; ++i) {
    json_object_set_new(r, "outcome", json_string(outcomes[i][0]));
    json_object_del(r, "timeout");
    json_object_set_new(r, "exit_code", json_integer(0));
    xml = record_xml(r);
    expect_contains(xml, outcomes[i][1]);
    free(xml);
  }
  json_decref(r);
}

/* An app that rejected its input: an error, with the app's own line. */
static void crashed_and_skipped_runs(void **state) {
  (void)state;
  char *log = scratch_file("bad.log", "mpirun noise\nmapp-heat: error: --rows must be >= 1, got 0\nmore\n");
  json_t *r = heat_record(1, 0, log);
  json_object_set_new(r, "exit_code", json_integer(2));
  char *xml = record_xml(r);
  expect_contains(xml, "<error type=\"exit\" message=\"exit code 2: --rows must be &gt;= 1, got 0\">");
  free(xml);
  json_object_set_new(r, "exit_code", json_integer(139));
  xml = record_xml(r);
  expect_contains(xml, "message=\"exit code 139 (signal 11): --rows must be");
  free(xml);
  char *empty = scratch_file("empty.log", "");
  json_object_set_new(r, "log", json_string(empty));
  xml = record_xml(r);
  expect_contains(xml, "message=\"exit code 139 (signal 11)\">");
  expect_contains(xml, "(the log is empty)\n");
  free(xml);
  free(empty);
  json_decref(r);
  r = json_pack("{s:s, s:b, s:s}", "key", "heat|mpi|cuda|n1|t1|tiny|weak|r0", "skipped", 1, "reason",
                "backend cuda is not built");
  xml = record_xml(r);
  expect_contains(xml, "name=\"tiny weak n1 t1 r0\" time=\"0.000\">\n      <skipped message=\"backend cuda is "
                       "not built\">backend cuda is not built\n</skipped>");
  free(xml);
  json_decref(r);
  junit_suite *s = new_suite("unnamed");
  r = json_pack("{s:s}", "app", "heat");
  assert_int_equal(junit_add_record(s, r), MAPP_ERR_INPUT);
  mapp_error_clear();
  json_decref(r);
  junit_suite_free(s);
  free(log);
}

/* An unwritable path: one input error, one line, naming the path and why. */
static void unwritable_path(void **state) {
  (void)state;
  junit_suite *s = new_suite("unwritable");
  const char *path = "/nonexistent-mapp-dir/junit.xml";
  assert_int_equal(junit_write(s, path), MAPP_ERR_INPUT);
  const char *message = mapp_error_message();
  assert_non_null(strstr(message, path));
  assert_non_null(strstr(message, "No such file or directory"));
  assert_null(strchr(message, '\n'));
  mapp_error_clear();
  assert_int_equal(junit_write(s, scratch), MAPP_ERR_INPUT); /* a folder */
  assert_non_null(strstr(mapp_error_message(), scratch));
  mapp_error_clear();
  char *file = path_join(scratch, "ok.xml");
  assert_int_equal(junit_write(s, file), MAPP_OK);
  char *text = NULL;
  assert_int_equal(read_text_file(file, &text), MAPP_OK);
  expect_contains(text, "tests=\"0\"");
  free(text);
  free(file);
  junit_suite_free(s);
}

/* The suite junit.sh validates: every outcome, hostile text, a real log. */
static int add_sample_cases(junit_suite *s, const char *log) {
  json_t *records = json_array(), *wrong = heat_record(2, 0, log), *timeout = heat_record(4, 0, log);
  json_object_set_new(wrong, "verification", json_pack("{s:s}", "status", "fail"));
  json_object_set_new(timeout, "status", json_string("timeout"));
  json_array_append_new(records, heat_record(1, 0, log));
  json_array_append_new(records, wrong);
  json_array_append_new(records, timeout);
  json_array_append_new(records, json_pack("{s:s, s:b}", "key", "heat|mpi|cuda|n1|t1|tiny|weak|r0", "skipped", 1));
  size_t i;
  json_t *r;
  int status = junit_suite_property(s, "revision", "abc123-dirty");
  json_array_foreach(records, i, r) if (status == MAPP_OK) status = junit_add_record(s, r);
  json_decref(records);
  junit_case crash = {.classname = "mapp.crm.batched.omp", .name = hostile, .time_s = 0.125, .status = JUNIT_ERROR,
                      .type = "exit", .message = hostile, .details = hostile};
  return status == MAPP_OK ? junit_add_case(s, &crash) : status;
}

/* A suite named NAME written to DIR/FILE, with the sample's cases or none. */
static int write_suite(const char *dir, const char *file, const char *name, bool with_cases) {
  char *log = path_join(dir, "sample.log"), *xml = path_join(dir, file);
  junit_suite *s = NULL;
  int status = log && xml ? write_text_file(log, hostile) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) status = junit_suite_new(name, &s);
  if (status == MAPP_OK && with_cases) status = add_sample_cases(s, log);
  if (status == MAPP_OK) status = junit_write(s, xml);
  junit_suite_free(s);
  free(log);
  free(xml);
  return status;
}

static int write_samples(const char *dir) {
  int status = write_suite(dir, "sample.xml", "sample & <sweep>", true);
  if (status == MAPP_OK) status = write_suite(dir, "empty.xml", "empty", false);
  return mapp_report_error("test_junit", status);
}

int main(int argc, char **argv) {
  if (argc > 1) return write_samples(argv[1]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(names_from_keys),
      cmocka_unit_test(hostile_text_escaped),
      cmocka_unit_test(counts_and_times),
      cmocka_unit_test(passing_record),
      cmocka_unit_test(baseline_failure_with_log_tail),
      cmocka_unit_test(verification_and_consistency_failures),
      cmocka_unit_test(missing_required_baseline),
      cmocka_unit_test(timeouts),
      cmocka_unit_test(outcome_field_decides),
      cmocka_unit_test(crashed_and_skipped_runs),
      cmocka_unit_test(unwritable_path),
  };
  return cmocka_run_group_tests(tests, make_scratch, remove_scratch);
}
