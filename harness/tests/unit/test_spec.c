/* Unit tests of sweep specs, environments and app listings (spec.c, env.c, apps.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "apppath.h"
#include "apps.h"
#include "env.h"
#include "mapp_error.h"
#include "job.h"
#include "spec.h"

static const char good_spec[] =
    "name: quick\n"
    "description: test sweep\n"
    "repetitions: 2\n"
    "runs:\n"
    "  - app: heat\n"
    "    variants: [mpi]\n"
    "    backends: [serial, omp, cuda]\n"
    "    ranks: [1, 2]\n"
    "    sizes: [tiny]\n"
    "    scaling: weak\n"
    "    args: [\"--steps\", \"50\"]\n"
    "plots:\n"
    "  reference: {variant: mpi, backend: serial}\n";

/* heat as its --list would describe it: mpi with serial built and omp not,
 * tasks with serial only. */
static const char heat_list[] =
    "{\"app\":\"heat\",\"variants\":["
    "{\"name\":\"mpi\",\"description\":\"d\",\"backends\":[{\"name\":\"serial\",\"built\":true},"
    "{\"name\":\"omp\",\"built\":false}]},"
    "{\"name\":\"tasks\",\"description\":\"t\",\"backends\":[{\"name\":\"serial\",\"built\":true}]}]}";

/* Parses text expecting an input error whose message contains `needle`. */
static void expect_spec_error(const char *text, const char *needle) {
  sweep_spec spec;
  mapp_error_clear();
  assert_int_equal(spec_parse_string(text, "bad.yaml", &spec), MAPP_ERR_INPUT);
  if (!strstr(mapp_error_message(), needle)) fail_msg("message '%s' lacks '%s'", mapp_error_message(), needle);
  mapp_error_clear();
}

static void parses_a_good_spec(void **state) {
  (void)state;
  sweep_spec spec;
  assert_int_equal(spec_parse_string(good_spec, "quick.yaml", &spec), MAPP_OK);
  assert_string_equal(spec.name, "quick");
  assert_int_equal(spec.repetitions, 2);
  assert_int_equal(spec.nruns, 1);
  const spec_run *run = &spec.runs[0];
  assert_string_equal(run->app, "heat");
  assert_int_equal(run->nranks, 2);
  assert_int_equal(run->ranks[1], 2);
  assert_int_equal(run->nthreads, 1); /* default [1] */
  assert_int_equal(run->threads[0], 1);
  assert_int_equal(run->backends.count, 3);
  assert_string_equal(run->scaling, "weak");
  assert_int_equal(run->args.count, 2);
  assert_int_equal(spec.reference.count, 1); /* a single map is a list of one */
  assert_string_equal(spec.reference.items[0].variant, "mpi");
  assert_string_equal(spec.reference.items[0].backend, "serial");
  spec_free(&spec);
}

static void defaults_fill_omitted_lists(void **state) {
  (void)state;
  sweep_spec spec;
  assert_int_equal(spec_parse_string("name: d\nruns:\n  - app: heat\n    ranks: [4]\n", "d.yaml", &spec), MAPP_OK);
  assert_int_equal(spec.repetitions, 1);
  assert_string_equal(spec.runs[0].backends.items[0], "serial");
  assert_string_equal(spec.runs[0].sizes.items[0], "tiny");
  assert_string_equal(spec.runs[0].scaling, "strong");
  assert_int_equal(spec.runs[0].variants.count, 0); /* all of the app's */
  assert_int_equal(spec.reference.count, 0);
  spec_free(&spec);
}

static void reads_a_list_of_references(void **state) {
  (void)state;
  sweep_spec spec;
  assert_int_equal(spec_parse_string("name: r\nruns:\n  - app: heat\n    ranks: [1]\nplots:\n  reference:\n"
                                     "    - {variant: mpi, backend: serial}\n"
                                     "    - {variant: percrm, backend: omp}\n", "r.yaml", &spec), MAPP_OK);
  assert_int_equal(spec.reference.count, 2);
  assert_string_equal(spec.reference.items[0].variant, "mpi");
  assert_string_equal(spec.reference.items[1].variant, "percrm");
  assert_string_equal(spec.reference.items[1].backend, "omp");
  spec_free(&spec);
}

static void rejects_bad_specs(void **state) {
  (void)state;
  expect_spec_error("name: x\nruns:\n  - ranks: [1]\n", "missing required key 'app'");
  expect_spec_error("name: x\nruns:\n  - app: heat\n    ranks: 4\n", "'ranks' must be a list");
  expect_spec_error("name: x\nruns:\n  - app: heat\n    ranks: [1, two]\n", "must be an integer");
  expect_spec_error("name: x\nruns:\n  - app: heat\n    ranks: [0]\n", "at least 1");
  expect_spec_error("name: x\nruns:\n  - app: heat\n    rank: [1]\n    ranks: [1]\n", "unknown key 'rank'");
  expect_spec_error("name: x\nruns:\n  - app: heat\n    ranks: [1]\n    backends: [gpu]\n", "unknown value 'gpu'");
  expect_spec_error("name: x\nruns:\n  - app: heat\n    ranks: [1]\n    scaling: both\n", "weak or strong");
  expect_spec_error("name: ../x\nruns:\n  - app: heat\n    ranks: [1]\n", "'name'");
  expect_spec_error("name: x\n", "missing required key 'runs'");
  expect_spec_error("name: x\nruns: [\n", "not valid YAML");
  const char *runs = "name: x\nruns:\n  - app: heat\n    ranks: [1]\n";
  char text[256];
  snprintf(text, sizeof text, "%splots:\n  reference: [{variant: mpi}]\n", runs);
  expect_spec_error(text, "missing required key 'backend'");
  snprintf(text, sizeof text, "%splots:\n  reference: [{variant: mpi, backend: serial}, {variant: a, backed: omp}]\n", runs);
  expect_spec_error(text, "unknown key 'backed'");
  snprintf(text, sizeof text, "%splots:\n  reference: []\n", runs);
  expect_spec_error(text, "'reference' is an empty list");
  snprintf(text, sizeof text, "%splots:\n  reference: mpi/serial\n", runs);
  expect_spec_error(text, "'reference' must be a list of mappings");
}

static void error_names_the_line(void **state) {
  (void)state;
  expect_spec_error("name: x\nruns:\n  - app: heat\n    ranks: 4\n", "bad.yaml:4:");
}

static void expands_the_product_repetition_outermost(void **state) {
  (void)state;
  sweep_spec spec;
  app_info heat;
  sweep_jobs jobs;
  assert_int_equal(spec_parse_string(good_spec, "quick.yaml", &spec), MAPP_OK);
  assert_int_equal(app_info_parse(heat_list, "heat", &heat), MAPP_OK);
  assert_int_equal(spec_expand(&spec, &heat, 1, &jobs), MAPP_OK);
  assert_int_equal(jobs.count, 2 * 3 * 2); /* repetitions x backends x ranks */
  for (size_t i = 0; i < jobs.count; ++i) assert_int_equal(jobs.items[i].job.repetition, i < 6 ? 0 : 1);
  assert_int_equal(jobs.items[0].combo, COMBO_RUNNABLE);
  assert_string_equal(jobs.items[2].job.backend, "omp");
  assert_int_equal(jobs.items[2].combo, COMBO_NOT_BUILT);
  assert_string_equal(jobs.items[4].job.backend, "cuda");
  assert_int_equal(jobs.items[4].combo, COMBO_NOT_WRITTEN);
  assert_int_equal(jobs.items[1].job.ranks, 2);
  assert_int_equal(jobs.items[0].job.extra_args->count, 2);
  sweep_jobs_free(&jobs);
  app_info_free(&heat);
  spec_free(&spec);
}

static void expansion_checks_apps_and_variants(void **state) {
  (void)state;
  sweep_spec spec;
  app_info heat;
  sweep_jobs jobs;
  assert_int_equal(app_info_parse(heat_list, "heat", &heat), MAPP_OK);
  assert_int_equal(spec_parse_string("name: a\nruns:\n  - app: heat\n    ranks: [1]\n", "a.yaml", &spec), MAPP_OK);
  assert_int_equal(spec_expand(&spec, &heat, 1, &jobs), MAPP_OK);
  assert_int_equal(jobs.count, 2); /* no variants listed: mpi and tasks */
  sweep_jobs_free(&jobs);
  spec_free(&spec);
  assert_int_equal(spec_parse_string("name: a\nruns:\n  - app: heat\n    variants: [nope]\n    ranks: [1]\n",
                                     "a.yaml", &spec), MAPP_OK);
  assert_int_equal(spec_expand(&spec, &heat, 1, &jobs), MAPP_ERR_INPUT);
  mapp_error_clear();
  spec_free(&spec);
  assert_int_equal(spec_parse_string("name: a\nruns:\n  - app: crm\n    ranks: [1]\n", "a.yaml", &spec), MAPP_OK);
  assert_int_equal(spec_expand(&spec, &heat, 1, &jobs), MAPP_ERR_INPUT);
  mapp_error_clear();
  spec_free(&spec);
  app_info_free(&heat);
}

/* matrix: every combination of the flags' values is a job with the flags
 * appended and the values recorded as params; labels and stems tell them
 * apart. */
static void expands_a_matrix(void **state) {
  (void)state;
  sweep_spec spec;
  app_info heat;
  sweep_jobs jobs;
  const char *text = "name: m\nruns:\n  - app: heat\n    variants: [mpi]\n    ranks: [1, 2]\n    label: grid\n"
                     "    args: [\"--steps\", \"5\"]\n    matrix:\n      --rows: [10, 20, 40]\n      cols: [7, x]\n";
  assert_int_equal(spec_parse_string(text, "m.yaml", &spec), MAPP_OK);
  assert_int_equal(spec.runs[0].ncombos, 6);
  assert_int_equal(app_info_parse(heat_list, "heat", &heat), MAPP_OK);
  assert_int_equal(spec_expand(&spec, &heat, 1, &jobs), MAPP_OK);
  assert_int_equal(jobs.count, 6 * 2);
  const job *j = &jobs.items[2 * 2].job; /* combination 2 (x 2 ranks): rows 20, cols 7, the first flag slowest */
  char *args = strv_join(j->extra_args, " ");
  assert_string_equal(args, "--steps 5 --rows 20 --cols 7");
  free(args);
  assert_int_equal(json_integer_value(json_object_get(j->params, "rows")), 20);
  assert_int_equal(json_integer_value(json_object_get(j->params, "cols")), 7);
  assert_string_equal(json_string_value(json_object_get(jobs.items[2].job.params, "cols")), "x");
  char *setting = job_setting(j), *stem = job_stem(j), *other = job_stem(&jobs.items[0].job);
  assert_string_equal(setting, "grid rows=20 cols=7");
  assert_string_equal(stem, "heat-mpi-serial-tiny-strong-n1-t1-grid-rows=20_cols=7-r0");
  assert_string_not_equal(stem, other);
  free(setting);
  free(stem);
  free(other);
  sweep_jobs_free(&jobs);
  app_info_free(&heat);
  spec_free(&spec);
  expect_spec_error("name: m\nruns:\n  - app: heat\n    ranks: [1]\n    matrix: {--rows: []}\n", "'--rows' has no values");
  expect_spec_error("name: m\nruns:\n  - app: heat\n    ranks: [1]\n    matrix: {--rows: 4}\n", "must be a list");
}

/* plots: tables: columns, value (one or a list), where with a list, a
 * matrix flag as written; and every bad table names itself. */
static void parses_tables(void **state) {
  (void)state;
  sweep_spec spec;
  const char *text = "name: t\nruns:\n  - app: subgraph\n    ranks: [1]\nplots:\n  tables:\n"
                     "    - name: metg\n      title: METG per width\n"
                     "      columns: [label, variant, --iterations, app_data.metg_us, app_data.efficiency]\n"
                     "      value: app_data.metg_us\n      where: {label: [metg-w2, metg-w16], backend: threads}\n"
                     "    - name: both\n      columns: [variant, app_data.a, app_data.b]\n"
                     "      value: [app_data.a, app_data.b]\n";
  assert_int_equal(spec_parse_string(text, "t.yaml", &spec), MAPP_OK);
  assert_int_equal(spec.ntables, 2);
  const table_spec *t = &spec.tables[0];
  assert_string_equal(t->name, "metg");
  assert_string_equal(t->title, "METG per width");
  assert_int_equal(t->columns.count, 5);
  assert_string_equal(t->columns.items[2], "iterations");
  assert_int_equal(t->values.count, 1);
  assert_true(table_is_value(t, 3));
  assert_false(table_is_value(t, 4));
  assert_int_equal(t->where_fields.count, 3);
  assert_string_equal(t->where_fields.items[1], "label");
  assert_string_equal(t->where_values.items[1], "metg-w16");
  assert_string_equal(t->where_values.items[2], "threads");
  assert_int_equal(spec.tables[1].values.count, 2);
  assert_null(spec.tables[1].title);
  spec_free(&spec);
}

static void rejects_bad_tables(void **state) {
  (void)state;
  const char *head = "name: x\nruns:\n  - app: heat\n    ranks: [1]\nplots:\n  tables:\n";
  const struct {
    const char *table, *message;
  } bad[] = {
      {"    - {name: m, colums: [variant]}\n", "table 'm': unknown key 'colums'"},
      {"    - {name: m, columns: []}\n", "table 'm': 'columns' is empty"},
      {"    - {name: m}\n", "missing required key 'columns'"},
      {"    - {name: a/b, columns: [variant]}\n", "table 'a/b': 'name' must be letters"},
      {"    - {name: m, columns: [variant]}\n    - {name: m, columns: [backend]}\n", "table 'm' is defined twice"},
      {"    - {name: m, columns: [app_data..metg_us]}\n", "table 'm': column 'app_data..metg_us' is not a field path"},
      {"    - {name: m, columns: [app_data.metg_us.]}\n", "is not a field path"},
      {"    - {name: m, columns: [variant, variant]}\n", "table 'm': column 'variant' is listed twice"},
      {"    - {name: m, columns: [variant], value: app_data.metg_us}\n",
       "table 'm': value 'app_data.metg_us' is not one of its columns"},
      {"    - {name: m, columns: [variant], where: {label: []}}\n", "'label' is an empty list"},
      {"    - {name: m, columns: [variant], where: {'a b': x}}\n", "table 'm': where field 'a b' is not a field path"},
      {"    - {name: m, columns: variant}\n", "'columns' must be a list"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    char text[512];
    snprintf(text, sizeof text, "%s%s", head, bad[i].table);
    expect_spec_error(text, bad[i].message);
  }
  /* figures: a duplicate name, and an unknown key */
  expect_spec_error("name: x\nruns:\n  - app: heat\n    ranks: [1]\nplots:\n  figures:\n"
                    "    - {name: f, x: ranks, y: fom}\n    - {name: f, x: size, y: fom}\n", "figure 'f' is defined twice");
  expect_spec_error("name: x\nruns:\n  - app: heat\n    ranks: [1]\nplots:\n  figures:\n"
                    "    - {name: f, x: ranks, y: fom, colour: red}\n", "unknown key 'colour'");
}

/* plots: ratios: both sides' where, same defaulting to host, and a bad
 * ratio named in its error. */
static void parses_ratios(void **state) {
  (void)state;
  sweep_spec spec;
  const char *text = "name: t\nruns:\n  - app: crm\n    ranks: [1]\nplots:\n  ratios:\n"
                     "    - {name: node, numerator: {label: gpu}, denominator: {label: cpu}, note: n}\n"
                     "    - {name: pair, numerator: {backend: cuda}, denominator: {backend: omp}, same: [host, --instances]}\n";
  assert_int_equal(spec_parse_string(text, "t.yaml", &spec), MAPP_OK);
  assert_int_equal(spec.nratios, 2);
  assert_string_equal(spec.ratios[0].num_values.items[0], "gpu");
  assert_string_equal(spec.ratios[0].den_fields.items[0], "label");
  assert_string_equal(spec.ratios[0].note, "n");
  assert_int_equal(spec.ratios[0].same.count, 1);
  assert_string_equal(spec.ratios[0].same.items[0], "host");
  assert_string_equal(spec.ratios[1].same.items[1], "instances");
  spec_free(&spec);
  const char *head = "name: x\nruns:\n  - app: crm\n    ranks: [1]\nplots:\n  ratios:\n";
  const struct {
    const char *ratio, *message;
  } bad[] = {
      {"    - {name: r, numerator: {label: gpu}}\n", "ratio 'r': numerator and denominator each need a where map"},
      {"    - {name: r, numerator: {label: a}, denominator: {label: b}, over: x}\n", "ratio 'r': unknown key 'over'"},
      {"    - {name: r, numerator: {label: a}, denominator: {label: b}, same: ['a b']}\n",
       "ratio 'r': 'a b' is not a field path"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    char text2[512];
    snprintf(text2, sizeof text2, "%s%s", head, bad[i].ratio);
    expect_spec_error(text2, bad[i].message);
  }
}

static void parses_app_listing(void **state) {
  (void)state;
  app_info heat;
  assert_int_equal(app_info_parse(heat_list, "heat", &heat), MAPP_OK);
  assert_int_equal(heat.nvariants, 2);
  assert_string_equal(heat.variants[0].name, "mpi");
  assert_int_equal(app_combo(&heat, "mpi", "serial"), COMBO_RUNNABLE);
  assert_int_equal(app_combo(&heat, "tasks", "omp"), COMBO_NOT_WRITTEN);
  assert_int_equal(app_combo(&heat, "fork", "serial"), COMBO_UNKNOWN_VARIANT);
  app_info_free(&heat);
  assert_int_equal(app_info_parse("not json", "heat", &heat), MAPP_ERR_INPUT);
  mapp_error_clear();
}

static void parses_environments(void **state) {
  (void)state;
  harness_env env;
  assert_int_equal(env_parse_string("name: l\nlauncher: mpirun\nnp_flag: -np\nlauncher_args: [--oversubscribe]\n"
                                    "env: {A: \"1\"}\n", "l.yaml", &env), MAPP_OK);
  assert_int_equal(env.scheduler, SCHEDULER_NONE);
  assert_true(env.cores_per_node >= 1); /* auto */
  assert_string_equal(env.env_names.items[0], "A");
  assert_string_equal(env.launcher_args.items[0], "--oversubscribe");
  assert_null(env.system); /* none given: each record names its host */
  env_free(&env);
  /* system: the machine's name in every history key; one that would not
   * read as one word there is refused */
  assert_int_equal(env_parse_string("name: l\nsystem: perlmutter-gpu.a100\nlauncher: mpirun\nnp_flag: -np\n", "l.yaml",
                                    &env), MAPP_OK);
  assert_string_equal(env.system, "perlmutter-gpu.a100");
  env_free(&env);
  const char *bad_systems[] = {"\"two words\"", "\"\"", "a/b", "\"x@y\""};
  for (size_t i = 0; i < sizeof bad_systems / sizeof bad_systems[0]; ++i) {
    char text[128];
    snprintf(text, sizeof text, "name: l\nsystem: %s\nlauncher: mpirun\nnp_flag: -np\n", bad_systems[i]);
    assert_int_equal(env_parse_string(text, "l.yaml", &env), MAPP_ERR_INPUT);
    assert_non_null(strstr(mapp_error_message(), "system"));
    mapp_error_clear();
  }
  assert_int_equal(env_parse_string("name: s\nlauncher: srun\nnp_flag: -n\nscheduler: slurm\ncores_per_node: 64\n"
                                    "modules: [gcc]\n", "s.yaml", &env), MAPP_OK);
  assert_int_equal(env.scheduler, SCHEDULER_SLURM);
  assert_int_equal(env.cores_per_node, 64);
  env_free(&env);
  assert_int_equal(env_parse_string("name: s\nlauncher: srun\nnp_flag: -n\nscheduler: pbs\n", "s.yaml", &env),
                   MAPP_ERR_INPUT);
  mapp_error_clear();
  /* the default (envs/local.yaml or its embedded copy) always loads */
  assert_int_equal(env_load(NULL, &env), MAPP_OK);
  assert_string_equal(env.launcher, "mpirun");
  env_free(&env);
}

/* The app path: the build's bin dir, MAPP_APP_PATH, the environment's
 * app_path (relative: from the source tree), in that order, once each. */
static void app_path_in_order(void **state) {
  (void)state;
  harness_env env;
  assert_int_equal(env_parse_string("name: l\nlauncher: mpirun\nnp_flag: -np\napp_path: [tools/bin, /opt/x]\n",
                                    "l.yaml", &env), MAPP_OK);
  char *source = strdup(getenv("MAPP_SOURCE_DIR") ? getenv("MAPP_SOURCE_DIR") : "");
  setenv("MAPP_BIN_DIR", "/b", 1);
  setenv("MAPP_APP_PATH", "/u1::/opt/x", 1);
  strv dirs = {0};
  assert_int_equal(app_path_dirs(&env, &dirs), MAPP_OK);
  assert_int_equal(dirs.count, 4); /* the empty entry and the repeated /opt/x dropped */
  assert_string_equal(dirs.items[0], "/b");
  assert_string_equal(dirs.items[1], "/u1");
  assert_string_equal(dirs.items[2], "/opt/x");
  assert_non_null(strstr(dirs.items[3], "/tools/bin"));
  if (source[0]) assert_int_equal(strncmp(dirs.items[3], source, strlen(source)), 0);
  strv_free(&dirs);
  char *exe = NULL;
  assert_int_equal(app_path_find(&env, "no-such-app", &exe), MAPP_ERR_INPUT);
  assert_non_null(strstr(mapp_error_message(), "no mini-app 'no-such-app' in this build or on the app path"));
  mapp_error_clear();
  assert_int_equal(app_path_find(&env, "../heat", &exe), MAPP_ERR_INPUT);
  mapp_error_clear();
  unsetenv("MAPP_APP_PATH");
  unsetenv("MAPP_BIN_DIR");
  env_free(&env);
  free(source);
  assert_int_equal(env_parse_string("name: l\nlauncher: mpirun\nnp_flag: -np\napp_path: [\"\"]\n", "l.yaml", &env),
                   MAPP_ERR_INPUT);
  mapp_error_clear();
}

/* --list's "baselines" goes into every job of the app: its answers are
 * checked against that app's baselines; "alone": false is kept. */
static void baselines_of_a_peer(void **state) {
  (void)state;
  const char *peer = "{\"baselines\": \"heat\", \"variants\": [{\"name\": \"mpi\", \"alone\": false, \"backends\": "
                     "[{\"name\": \"serial\", \"built\": true}]}]}";
  app_info info;
  assert_int_equal(app_info_parse(peer, "heat-peer", &info), MAPP_OK);
  assert_string_equal(info.baselines, "heat");
  assert_false(info.variants[0].alone);
  sweep_spec spec;
  sweep_jobs jobs;
  assert_int_equal(spec_parse_string("name: p\nruns:\n  - app: heat-peer\n    ranks: [1]\n", "p.yaml", &spec), MAPP_OK);
  assert_int_equal(spec_expand(&spec, &info, 1, &jobs), MAPP_OK);
  assert_string_equal(job_baseline_app(&jobs.items[0].job), "heat");
  sweep_jobs_free(&jobs);
  spec_free(&spec);
  app_info_free(&info);
  assert_int_equal(app_info_parse(heat_list, "heat", &info), MAPP_OK);
  assert_string_equal(info.baselines, "heat");
  assert_true(info.variants[0].alone);
  app_info_free(&info);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(app_path_in_order),
      cmocka_unit_test(baselines_of_a_peer),
      cmocka_unit_test(parses_a_good_spec),
      cmocka_unit_test(defaults_fill_omitted_lists),
      cmocka_unit_test(reads_a_list_of_references),
      cmocka_unit_test(rejects_bad_specs),
      cmocka_unit_test(error_names_the_line),
      cmocka_unit_test(expands_the_product_repetition_outermost),
      cmocka_unit_test(expansion_checks_apps_and_variants),
      cmocka_unit_test(expands_a_matrix),
      cmocka_unit_test(parses_tables),
      cmocka_unit_test(rejects_bad_tables),
      cmocka_unit_test(parses_ratios),
      cmocka_unit_test(parses_app_listing),
      cmocka_unit_test(parses_environments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
