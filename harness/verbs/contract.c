/* mapp contract PROGRAM: whether a program keeps the mapp contract
 * (docs/contract.md), one line per check, before a sweep finds out:
 *   name        an executable named mapp-NAME
 *   list        --list prints JSON of the form list.schema.json says
 *   help        --help exits 0
 *   run V/B     a tiny run of each usable variant/backend, launched as a
 *               sweep launches it, exits 0 with one record valid against
 *               record.schema.json (naming that run) and an HDF5 answer
 *   print-case  --size tiny --print-case prints "case=C size=S", the case
 *               the tiny run's record names
 *   bad flag, bad size   an unknown flag and --size nonsense exit 2 with
 *               one line on stderr
 * A verb of its own rather than `list --check`: it runs the program (list
 * only asks), writes files, and its exit status says whether the program
 * keeps the contract: 0 it does, 1 it breaks it, 2 bad input to mapp. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apppath.h"
#include "apps.h"
#include "env.h"
#include "execute.h"
#include "fsutil.h"
#include "h5util.h"
#include "mapp_error.h"
#include "verbs.h"

/* Seconds a probe (--list, --help, bad input) and a tiny run may take. */
enum { PROBE_LIMIT_S = 60, RUN_LIMIT_S = 300 };

typedef struct {
  const harness_env *env;
  const char *app, *exe, *dir; /* dir: where the probes and runs write */
  int checks, failed;
  char *record_case; /* the first tiny run's case ("none" for null), for print-case */
} contract_ctx;

/* One line per check: "NAME  ok (DETAIL)" or "NAME  FAILED: WHAT". */
static void report(contract_ctx *c, const char *check, const char *failure, const char *detail) {
  ++c->checks;
  c->failed += failure != NULL;
  if (failure) printf("%-26s FAILED: %s\n", check, failure);
  else if (detail && detail[0]) printf("%-26s ok (%s)\n", check, detail);
  else printf("%-26s ok\n", check);
  fflush(stdout);
}

/* A check whose failure is the message mapp_fail recorded (then cleared). */
static void report_error(contract_ctx *c, const char *check) {
  report(c, check, mapp_error_message(), NULL);
  mapp_error_clear();
}

/* What a probe printed and how it ended. */
typedef struct {
  char *out, *err;
  proc_outcome proc;
} probe;

static void probe_free(probe *p) {
  free(p->out);
  free(p->err);
  *p = (probe){0};
}

/* Runs the program itself (no launcher: a launcher adds its own lines to
 * a failing rank's), stdout and stderr each to a file of its own. */
static int run_probe(const contract_ctx *c, const char *const args[], probe *p) {
  *p = (probe){0};
  char *out = path_join(c->dir, "probe.out"), *err = path_join(c->dir, "probe.err");
  strv argv = {0};
  int status = out && err ? strv_push(&argv, c->exe) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; status == MAPP_OK && args[i]; ++i) status = strv_push(&argv, args[i]);
  if (status == MAPP_OK) unlink(out);
  proc_request req = {.argv = &argv, .env_names = &c->env->env_names, .env_values = &c->env->env_values,
                      .log_path = out, .err_path = err, .time_limit_s = PROBE_LIMIT_S};
  if (status == MAPP_OK) status = proc_run(&req, &p->proc);
  if (status == MAPP_OK) status = read_text_file(out, &p->out);
  if (status == MAPP_OK) status = read_text_file(err, &p->err);
  strv_free(&argv);
  free(out);
  free(err);
  if (status != MAPP_OK) probe_free(p);
  return status;
}

/* Lines with something on them. */
static size_t count_lines(const char *text) {
  size_t lines = 0;
  for (const char *line = text; *line;) {
    size_t len = strcspn(line, "\n");
    lines += strspn(line, " \t\r") < len;
    line += len + (line[len] == '\n');
  }
  return lines;
}

/* An exit code that is not the one wanted, said with the program's own words. */
static char *exit_failure(const probe *p, int want) {
  if (p->proc.timed_out) return str_printf("still running after %d s (stopped)", PROBE_LIMIT_S);
  char first[160] = "";
  snprintf(first, sizeof first, "%.*s", (int)strcspn(p->err, "\n"), p->err);
  return str_printf("exited %d, not %d%s%s", p->proc.exit_code, want, first[0] ? ": " : "", first);
}

static void check_name(contract_ctx *c, const char *base) {
  char *failure = strncmp(base, "mapp-", 5) == 0 && app_name_plain(base + 5)
                      ? NULL
                      : str_printf("'%s' is not named mapp-NAME (NAME: letters, digits, '.', '_', '-'): the harness "
                                   "runs mapp-NAME as app NAME",
                                   base);
  char *detail = str_printf("runs as app '%s'", c->app);
  report(c, "name", failure, detail);
  free(failure);
  free(detail);
}

static void check_help(contract_ctx *c) {
  const char *const args[] = {"--help", NULL};
  probe p;
  if (run_probe(c, args, &p) != MAPP_OK) {
    report_error(c, "help");
    return;
  }
  char *failure = p.proc.exit_code != 0 || p.proc.timed_out ? exit_failure(&p, 0)
                  : !p.out[0]                               ? strdup("--help printed nothing on stdout")
                                                            : NULL;
  report(c, "help", failure, "exit 0");
  free(failure);
  probe_free(&p);
}

/* The line count, and what the second line said: what a reader needs to
 * tell the program's own second sentence from a library's warning. */
static char *extra_lines_failure(const char *err, size_t lines) {
  const char *second = err + strcspn(err, "\n");
  while (*second == '\n' || *second == ' ' || *second == '\t' || *second == '\r') ++second;
  if (!*second) return str_printf("exited 2 but printed %zu lines on stderr, not one", lines);
  size_t shown = strcspn(second, "\n");
  return str_printf("exited 2 but printed %zu lines on stderr, not one; the second: \"%.*s\"", lines,
                    (int)(shown < 160 ? shown : 160), second);
}

/* Bad input: exit 2, one line on stderr. */
static void check_refusal(contract_ctx *c, const char *check, const char *const args[]) {
  probe p;
  if (run_probe(c, args, &p) != MAPP_OK) {
    report_error(c, check);
    return;
  }
  size_t lines = count_lines(p.err);
  char *failure = p.proc.exit_code != MAPP_ERR_INPUT || p.proc.timed_out
                      ? exit_failure(&p, MAPP_ERR_INPUT)
                  : lines != 1 ? extra_lines_failure(p.err, lines)
                               : NULL;
  char *detail = str_printf("exit 2: %.*s", (int)strcspn(p.err, "\n"), p.err);
  report(c, check, failure, detail);
  free(failure);
  free(detail);
  probe_free(&p);
}

/* "case=C size=S" alone on stdout, C the case the tiny run recorded. */
static char *print_case_failure(const contract_ctx *c, const probe *p) {
  if (p->proc.exit_code != 0 || p->proc.timed_out) return exit_failure(p, 0);
  char kase[128], size[128], rest;
  if (sscanf(p->out, "case=%127s size=%127s %c", kase, size, &rest) != 2)
    return str_printf("printed \"%.*s\", not one line \"case=CASE size=SIZE\"", (int)strcspn(p->out, "\n"), p->out);
  if (strcmp(size, "tiny") != 0) return str_printf("says size=%s for --size tiny", size);
  if (c->record_case && strcmp(kase, c->record_case) != 0)
    return str_printf("says case=%s, but the tiny run's record names case %s", kase, c->record_case);
  return NULL;
}

static void check_print_case(contract_ctx *c) {
  const char *const args[] = {"--size", "tiny", "--print-case", NULL};
  probe p;
  if (run_probe(c, args, &p) != MAPP_OK) {
    report_error(c, "print-case");
    return;
  }
  char *failure = print_case_failure(c, &p);
  char *detail = str_printf("%.*s", (int)strcspn(p.out, "\n"), p.out);
  report(c, "print-case", failure, detail);
  free(failure);
  free(detail);
  probe_free(&p);
}

/* The answer file: HDF5 with at least one dataset. */
static char *answer_failure(const char *output, size_t *datasets) {
  if (!path_exists(output)) return str_printf("wrote no answer file (--output %s)", output);
  h5_quiet();
  hid_t file;
  strv names = {0};
  int status = h5_open_read(output, &file);
  if (status == MAPP_OK) {
    status = h5_list_datasets(file, output, &names);
    h5_close(file);
  }
  *datasets = names.count;
  strv_free(&names);
  char *failure = status != MAPP_OK ? str_printf("the answer %s is not HDF5 (%s)", output, mapp_error_message())
                  : !*datasets      ? str_printf("the answer %s has no datasets", output)
                                    : NULL;
  mapp_error_clear();
  return failure;
}

/* Why a tiny run failed, in one line: what it broke, its exit (with its
 * own error line), its answer. */
static char *run_failure(const contract_ctx *c, const job_result *res, const job_files *files, size_t *datasets) {
  if (res->contract_error) return strdup(res->contract_error);
  if (res->outcome == OUTCOME_FAIL_TIMEOUT) return str_printf("still running after %d s (stopped)", RUN_LIMIT_S);
  if (res->outcome != OUTCOME_OK) {
    char verdict[64], prog[128];
    job_outcome_text(res, verdict, sizeof verdict);
    snprintf(prog, sizeof prog, "mapp-%s", c->app);
    char *message = proc_log_error(files->log, prog);
    char *failure = str_printf("a tiny run should pass: %s%s%s (log: %s)", verdict, message ? ": " : "",
                               message ? message : "", files->log);
    free(message);
    return failure;
  }
  return answer_failure(files->output, datasets);
}

static void keep_case(contract_ctx *c, const json_t *record) {
  if (c->record_case || !json_object_get(record, "case")) return;
  const char *kase = json_string_value(json_object_get(record, "case"));
  c->record_case = strdup(kase ? kase : "none");
}

/* A tiny run launched as a sweep launches it (the environment's launcher,
 * 1 rank), judged as a sweep judges it. */
static void check_run(contract_ctx *c, const char *variant, const char *backend) {
  char check[128];
  snprintf(check, sizeof check, "run %s/%s", variant, backend);
  job j = {.app = c->app, .exe = c->exe, .variant = variant, .backend = backend, .size = "tiny",
           .scaling = "strong", .ranks = 1, .threads = 1, .repetition = -1, .time_limit = RUN_LIMIT_S};
  execute_options opt = {.check_baseline = false, .keep_output = true};
  job_files files;
  job_result res = {0};
  env_apply_to_job(c->env, &j);
  int status = job_files_make(c->dir, &j, &files);
  if (status == MAPP_OK) status = job_execute(c->env, &j, &files, &opt, &res);
  if (status != MAPP_OK) {
    report_error(c, check);
  } else {
    size_t datasets = 0;
    char *failure = run_failure(c, &res, &files, &datasets);
    char *detail =
        str_printf("exit 0, record valid, answer HDF5 with %zu dataset%s", datasets, datasets == 1 ? "" : "s");
    if (!res.contract_error) keep_case(c, res.record);
    report(c, check, failure, detail);
    free(failure);
    free(detail);
  }
  job_result_free(&res);
  job_files_free(&files);
}

/* Every usable variant/backend --list names: each is an answer the
 * program promises; a variant that is not "alone" (it writes no answer,
 * or needs another's run first) is left out, as the generic tests do. */
static void check_runs(contract_ctx *c, const app_info *info) {
  size_t runs = 0;
  for (size_t v = 0; v < info->nvariants; ++v) {
    const app_variant *var = &info->variants[v];
    char label[96];
    snprintf(label, sizeof label, "run %s/*", var->name);
    if (!var->alone) printf("%-26s skipped (\"alone\": false in --list)\n", label);
    for (size_t b = 0; var->alone && b < var->nbackends; ++b)
      if (var->backends[b].usable) {
        check_run(c, var->name, var->backends[b].name);
        ++runs;
      }
  }
  if (!runs) report(c, "run", "--list names no usable variant/backend that runs alone: nothing can run here", NULL);
}

static void check_list_and_runs(contract_ctx *c) {
  app_info info;
  if (app_query_program(c->app, c->exe, c->env, &info) != MAPP_OK) {
    report_error(c, "list");
    printf("%-26s not tried: a sweep runs only what --list names\n", "run");
    return;
  }
  size_t usable = 0, backends = 0;
  for (size_t v = 0; v < info.nvariants; ++v)
    for (size_t b = 0; b < info.variants[v].nbackends; ++b, ++backends) usable += info.variants[v].backends[b].usable;
  char *detail = str_printf("%zu variant%s, %zu of %zu backends usable here%s%s", info.nvariants,
                            info.nvariants == 1 ? "" : "s", usable, backends,
                            strcmp(info.baselines, info.name) ? ", baselines of " : "",
                            strcmp(info.baselines, info.name) ? info.baselines : "");
  report(c, "list", NULL, detail);
  free(detail);
  check_runs(c, &info);
  app_info_free(&info);
}

static void check_all(contract_ctx *c, const char *base) {
  const char *const bad_flag[] = {"--no-such-flag-of-mapp-contract", NULL};
  const char *const bad_size[] = {"--size", "nonsense", NULL};
  check_name(c, base);
  check_list_and_runs(c);
  check_help(c);
  check_print_case(c);
  check_refusal(c, "bad flag", bad_flag);
  check_refusal(c, "bad size", bad_size);
}

/* PROGRAM: a path (with a '/'), or a name on the app path (mapp-NAME or NAME). */
static int resolve_program(const harness_env *env, const char *program, char **exe, char **app) {
  *exe = *app = NULL;
  if (strchr(program, '/')) {
    if (access(program, X_OK) != 0 || path_is_dir(program))
      return mapp_fail(MAPP_ERR_INPUT, "%s is not an executable file", program);
    *exe = path_absolute(program);
  } else {
    MAPP_TRY(app_path_find(env, strncmp(program, "mapp-", 5) == 0 ? program + 5 : program, exe));
  }
  char *base = *exe ? path_stem(*exe, "") : NULL;
  if (base) *app = strdup(strncmp(base, "mapp-", 5) == 0 && base[5] ? base + 5 : base);
  free(base);
  return *exe && *app ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

/* --out DIR keeps what the checks wrote; else a temporary folder, removed. */
static int make_work_dir(const char *out, char *dir, size_t len) {
  if (out) {
    snprintf(dir, len, "%s", out);
    return make_dirs(out);
  }
  snprintf(dir, len, "/tmp/mapp-contract-XXXXXX");
  return mkdtemp(dir) ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "cannot create a temporary folder");
}

static int remove_work_dir(const char *dir) {
  strv argv = {0};
  int status = strv_push(&argv, "rm");
  if (status == MAPP_OK) status = strv_push(&argv, "-rf");
  if (status == MAPP_OK) status = strv_push(&argv, dir);
  proc_outcome out;
  proc_request req = {.argv = &argv};
  if (status == MAPP_OK) status = proc_run(&req, &out);
  strv_free(&argv);
  return status;
}

static int contract_program(const char *program, const char *env_path, const char *out) {
  harness_env env;
  MAPP_TRY(env_load(env_path, &env));
  contract_ctx c = {.env = &env};
  char *exe = NULL, *app = NULL, dir[4096] = "";
  int status = resolve_program(&env, program, &exe, &app);
  if (status == MAPP_OK) status = make_work_dir(out, dir, sizeof dir);
  if (status == MAPP_OK) {
    c.app = app;
    c.exe = exe;
    c.dir = dir;
    char *base = path_stem(exe, "");
    printf("%s (%s):\n", exe, env.name);
    check_all(&c, base ? base : exe);
    free(base);
    if (c.failed)
      printf("mapp-%s breaks the mapp contract: %d of %d checks failed (docs/contract.md)\n", app, c.failed, c.checks);
    else
      printf("mapp-%s keeps the mapp contract (%d checks)\n", app, c.checks);
    status = c.failed ? MAPP_ERR_VERIFY : MAPP_OK;
    if (!out && remove_work_dir(dir) != MAPP_OK) mapp_error_clear(); /* a temporary folder left behind is no failure */
  }
  free(c.record_case);
  free(exe);
  free(app);
  env_free(&env);
  return status;
}

int verb_contract(int argc, char **argv) {
  const char *env_path = NULL, *out = NULL;
  const mapp_option opts[] = {
      {.name = "env", .kind = MAPP_OPT_STRING, .dest = &env_path,
       .help = "environment: its launcher runs the tiny runs, its app_path is searched",
       .default_text = "envs/local.yaml"},
      {.name = "out", .kind = MAPP_OPT_STRING, .dest = &out,
       .help = "keep the records, answers and logs of the checks in this folder",
       .default_text = "a temporary folder, removed"},
      MAPP_OPTION_END};
  verb_args args;
  int status = verb_parse("contract", "PROGRAM",
                          "Check that a program keeps the mapp contract (docs/contract.md), so mapp run and sweeps\n"
                          "can run it like a mini-app: its name, --list (each usable variant/backend), --help, a tiny\n"
                          "run of each usable variant/backend (one record valid against\n"
                          "docs/schema/record.schema.json, an HDF5 answer), --print-case, and bad input (exit 2,\n"
                          "one line on stderr). PROGRAM is a path, or a name on the app path (the build's bin dir,\n"
                          "MAPP_APP_PATH, the environment's app_path). One line per check; exit 0 when every check\n"
                          "passes, 1 when one fails.",
                          opts, 1, 1, false, argc, argv, &args);
  if (status == MAPP_OK && !args.help_shown) status = contract_program(args.cli.positional[0], env_path, out);
  verb_args_free(&args);
  return status;
}
