/* The driver every mini-app shares (mapp_app.h): parsing, MPI start-up at
 * the variant's thread level, --list, presets, threads, the hooks in their
 * phases, the record, the summary, the verdict and the exit code. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapp.h"
#include "mapp_machine.h"

enum { COMMON_OPTION_ROWS = 13, CHOICES_LEN = 256 };
/* --min-time never repeats the timed phase more often than this: a compute
 * hook that takes no measurable time cannot loop for ever. */
enum { MAX_ITERATIONS = 1000000 };

/* ------------------------------------------------------------ presets */

/* Each preset row starts with its name. */
static const char *preset_name(mapp_presets presets, size_t i) {
  return *(const char *const *)((const char *)presets.table + i * presets.stride);
}

static void preset_choices(mapp_presets presets, char *buf, size_t len) {
  buf[0] = '\0';
  for (size_t i = 0; i < presets.count; ++i) {
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s", used ? "|" : "", preset_name(presets, i));
  }
}

int mapp_preset_find(const char *app, mapp_presets presets, const char *size, const void **out) {
  for (size_t i = 0; i < presets.count; ++i)
    if (strcmp(preset_name(presets, i), size) == 0) {
      *out = (const char *)presets.table + i * presets.stride;
      return MAPP_OK;
    }
  char names[CHOICES_LEN];
  preset_choices(presets, names, sizeof names);
  return mapp_fail(MAPP_ERR_INPUT, "%s has no size '%s' (choose one of %s)", app, size, names);
}

/* ------------------------------------------------------------ parsing */

/* The choices strings of the common flags, derived from the app's tables. */
typedef struct {
  char variants[CHOICES_LEN], backends[CHOICES_LEN], sizes[CHOICES_LEN];
} common_choices;

static void common_rows(const mapp_app *app, mapp_common_args *a, const common_choices *c,
                        mapp_option rows[COMMON_OPTION_ROWS]) {
  const mapp_option table[COMMON_OPTION_ROWS] = {
      {.name = "backend", .kind = MAPP_OPT_CHOICE, .dest = &a->backend, .help = "backend to run on",
       .choices = c->backends},
      {.name = "variant", .kind = MAPP_OPT_CHOICE, .dest = &a->variant, .help = "implementation variant",
       .choices = c->variants},
      {.name = "size", .kind = MAPP_OPT_CHOICE, .dest = &a->size, .help = "problem size preset",
       .choices = c->sizes},
      {.name = "scaling", .kind = MAPP_OPT_CHOICE, .dest = &a->scaling,
       .help = "weak: the size is per rank; strong: the size is global", .choices = "weak|strong"},
      {.name = "steps", .kind = MAPP_OPT_LONG, .dest = &a->steps, .help = "time steps", .min = 1,
       .max = 1000000000L, .default_text = "from --size", .preset_field = app->preset_steps,
       .changes = app->steps_change_size ? MAPP_CHANGES_SIZE : MAPP_CHANGES_ANSWER},
      {.name = "threads", .kind = MAPP_OPT_LONG, .dest = &a->threads,
       .help = "OpenMP threads per rank on the omp backend (0: OMP_NUM_THREADS); 1 on the others", .min = 0,
       .max = 4096},
      {.name = "output", .kind = MAPP_OPT_STRING, .dest = &a->output,
       .help = "write the answer fields to this HDF5 file"},
      {.name = "result", .kind = MAPP_OPT_STRING, .dest = &a->result, .help = "write the JSON result record to this file"},
      {.name = "list", .kind = MAPP_OPT_FLAG, .dest = &a->list,
       .help = "print the variants and backends of this build as JSON and exit"},
      {.name = "quiet", .kind = MAPP_OPT_FLAG, .dest = &a->quiet,
       .help = "do not print the summary line and the machine's warnings"},
      {.name = "min-time", .kind = MAPP_OPT_DOUBLE, .dest = &a->min_time, .dmin = 0.0, .dmax = 1e6,
       .help = "seconds: run the timed phase again from the same initial state until the timed runs last this "
               "long together (Google Benchmark's min_time); the first is a warm-up, left out when more than one "
               "ran, and every run's answer must be the same bit for bit; 0: once"},
      {.name = "print-case", .kind = MAPP_OPT_FLAG, .dest = &a->print_case,
       .help = "print the baseline case these options answer (the size preset's, or none: a custom problem) and "
               "the record's size, then exit without running"},
      {.name = "weak-ranks", .kind = MAPP_OPT_LONG, .dest = &a->weak_ranks, .min = 0, .max = 1L << 24,
       .help = "with --scaling weak: solve the global problem of this many ranks on the ranks that run (its case "
               "is tiny-weakN as on N ranks; answers of rank-invariant apps equal it bit for bit, which is how a "
               "sweep checks a weak answer without a baseline); 0: the ranks that run"},
  };
  memcpy(rows, table, sizeof table);
}

static size_t count_options(const mapp_option *opts) {
  size_t n = 0;
  while (opts && opts[n].kind != MAPP_OPT_END) ++n;
  return n;
}

/* Common flags then the app's, parsed on every rank before MPI starts (the
 * variant decides the thread level); a failure is recorded, not printed.
 * The table and what the line gave stay in run->options and run->cli. */
static int parse_line(const mapp_app *app, mapp_run *run, const char *prog, int argc, char **argv, bool *help) {
  common_choices choices;
  mapp_variant_choices(app->variants, choices.variants, sizeof choices.variants);
  mapp_backend_choices(mapp_variant_backends(app->variants), choices.backends, sizeof choices.backends);
  preset_choices(app->presets, choices.sizes, sizeof choices.sizes);
  run->common = (mapp_common_args){.backend = mapp_backend_name(MAPP_BACKEND_SERIAL),
                                   .variant = app->default_variant ? app->default_variant : app->variants[0].name,
                                   .size = "tiny", .scaling = "strong"};
  /* The first variant's first backend is the default when it has no serial. */
  for (int b = 0; b < MAPP_BACKEND_COUNT && !(app->variants[0].backends & MAPP_BACKEND_BIT(SERIAL)); ++b)
    if (app->variants[0].backends & (1u << b)) {
      run->common.backend = mapp_backend_name((mapp_backend)b);
      break;
    }
  size_t napp = count_options(app->options);
  mapp_option *opts = calloc(COMMON_OPTION_ROWS + napp + 1, sizeof *opts);
  if (!opts) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory parsing arguments");
  common_rows(app, &run->common, &choices, opts);
  if (napp) memcpy(opts + COMMON_OPTION_ROWS, app->options, napp * sizeof *opts);
  opts[COMMON_OPTION_ROWS + napp] = (mapp_option)MAPP_OPTION_END;
  run->options = opts;
  int status = mapp_cli_parse(prog, app->summary, opts, false, argc, argv, &run->cli);
  *help = run->cli.help_shown;
  return status;
}

/* Options not given take their preset's value; the run leaves its preset's
 * case when a given option declared to change the answer changes it. */
static void apply_options(mapp_run *run) {
  run->custom_case = run->custom_size = false;
  for (int i = 0; i < run->cli.noptions; ++i) {
    const mapp_option *o = &run->options[i];
    const char *field = o->preset_field ? (const char *)run->preset + o->preset_field : NULL;
    mapp_opt_value reference = run->cli.defaults[i];
    if (field && o->kind == MAPP_OPT_LONG) memcpy(&reference.l, field, sizeof reference.l);
    if (field && o->kind == MAPP_OPT_DOUBLE) memcpy(&reference.d, field, sizeof reference.d);
    if (!run->cli.given[i]) {
      if (field) mapp_opt_value_set(o, reference);
      continue;
    }
    if (!mapp_opt_changes_problem(o, reference)) continue;
    run->custom_case = true;
    run->custom_size |= o->changes == MAPP_CHANGES_SIZE;
  }
}

bool mapp_run_given(const mapp_run *run, const char *name) {
  for (int i = 0; i < run->cli.noptions; ++i)
    if (strcmp(run->options[i].name, name) == 0) return run->cli.given[i];
  return false;
}

static int required_thread_level(const mapp_app *app, const mapp_run *run) {
  /* SimGrid SMPI provides MPI_THREAD_SINGLE only; a simulated rank is one
   * thread (check_simulable refuses the variants that need more), so the
   * main thread's MPI calls are all there is. */
  if (MAPP_SIMULATED) return MPI_THREAD_SINGLE;
  const mapp_variant_info *v = mapp_variant_find(app->variants, run->common.variant);
  return v && v->mpi_threads == MAPP_MPI_MULTIPLE ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED;
}

/* ------------------------------------------------------------ the run */

void mapp_run_dim(mapp_run *run, const char *name, long global, long per_rank) {
  if (run->rec.ndims < MAPP_RECORD_MAX_DIMS) run->rec.dims[run->rec.ndims++] = (mapp_dim){name, global, per_rank};
}

void mapp_run_check(mapp_run *run, const char *name, bool passed, double value, double bound) {
  if (run->rec.nchecks < MAPP_RECORD_MAX_CHECKS)
    run->rec.checks[run->rec.nchecks++] = (mapp_check){name, passed ? 1 : 0, value, bound};
  else
    run->checks_dropped++;
}

/* A check dropped for want of room would hide a failure: the run fails. */
static int checks_all_recorded(const mapp_run *run) {
  if (run->checks_dropped == 0) return MAPP_OK;
  return mapp_fail(MAPP_ERR_SYSTEM, "%s recorded %d checks, more than a record holds (%d)", run->app->name,
                   run->rec.nchecks + run->checks_dropped, MAPP_RECORD_MAX_CHECKS);
}

/* The object under which key's last part goes in app_data, created as
 * needed; *leaf is that last part. */
static int app_data_parent(mapp_run *run, const char *key, json_t **parent, const char **leaf) {
  if (!run->rec.extra && !(run->rec.extra = json_object()))
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory building the record's app_data");
  json_t *at = run->rec.extra;
  const char *dot;
  while ((dot = strchr(key, '.'))) {
    char part[64];
    snprintf(part, sizeof part, "%.*s", (int)(dot - key), key);
    json_t *next = json_object_get(at, part);
    if (!next && json_object_set_new(at, part, next = json_object()))
      return mapp_fail(MAPP_ERR_SYSTEM, "out of memory building app_data.%s", part);
    if (!json_is_object(next)) return mapp_fail(MAPP_ERR_SYSTEM, "app_data.%s is already a value, not an object", part);
    at = next;
    key = dot + 1;
  }
  *parent = at;
  *leaf = key;
  return MAPP_OK;
}

int mapp_run_set(mapp_run *run, const char *key, json_t *value) {
  if (!value) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory building app_data.%s", key);
  json_t *parent = NULL;
  const char *leaf = NULL;
  int status = app_data_parent(run, key, &parent, &leaf);
  if (status != MAPP_OK) {
    json_decref(value);
    return status;
  }
  if (json_object_set_new(parent, leaf, value))
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory setting app_data.%s", key);
  return MAPP_OK;
}

static MPI_Op mpi_op(mapp_reduce_op op) {
  return op == MAPP_REDUCE_SUM ? MPI_SUM : op == MAPP_REDUCE_MIN ? MPI_MIN : MPI_MAX;
}

int mapp_run_reduce(mapp_run *run, const char *key, double local, mapp_reduce_op op, double *global) {
  double value;
  MAPP_MPI(MPI_Allreduce(&local, &value, 1, MPI_DOUBLE, mpi_op(op), run->mpi.comm));
  if (global) *global = value;
  return mapp_run_set(run, key, json_real(value));
}

int mapp_run_reduce_long(mapp_run *run, const char *key, long local, mapp_reduce_op op, long *global) {
  long value;
  MAPP_MPI(MPI_Allreduce(&local, &value, 1, MPI_LONG, mpi_op(op), run->mpi.comm));
  if (global) *global = value;
  return mapp_run_set(run, key, json_integer(value));
}

int mapp_run_weak_ranks(const mapp_run *run) {
  return run->common.weak_ranks > 0 ? (int)run->common.weak_ranks : run->mpi.nranks;
}

long mapp_run_scaled(const mapp_run *run, long per_rank) {
  return strcmp(run->common.scaling, "weak") == 0 ? per_rank * mapp_run_weak_ranks(run) : per_rank;
}

/* The baseline case this run answers: the preset's name, "-weakN" under
 * weak scaling for N > 1 ranks (--weak-ranks, else the ranks that run), or
 * none for a custom problem. */
static const char *case_name(mapp_run *run) {
  if (run->custom_case) return NULL;
  int weak_ranks = run->answer_ranks > 0 ? run->answer_ranks : mapp_run_weak_ranks(run);
  if (strcmp(run->common.scaling, "weak") == 0 && weak_ranks > 1) {
    snprintf(run->case_buf, sizeof run->case_buf, "%s-weak%d", run->common.size, weak_ranks);
    return run->case_buf;
  }
  return run->common.size;
}

/* What the record says of every run, before the app describes its own. */
static void record_common(mapp_run *run, const char *app_name) {
  mapp_record *rec = &run->rec;
  rec->app = app_name;
  rec->variant = run->common.variant;
  rec->backend = run->common.backend;
  rec->size = run->custom_size ? "custom" : run->common.size;
  rec->scaling = run->common.scaling;
  rec->case_name = case_name(run);
  rec->answer_ranks = run->answer_ranks;
  rec->ranks = run->mpi.nranks;
  rec->threads = run->threads;
  rec->gpus = run->backend == MAPP_BACKEND_CUDA;
  if (rec->gpus && mapp_cuda_describe(&run->gpu)) rec->gpu = &run->gpu;
  rec->fom_name = run->app->fom_name;
  rec->bytes_moved = -1.0;
  rec->output = run->common.output;
  rec->argc = run->argc;
  rec->argv = run->argv;
  rec->iterations = &run->iterations;
  rec->disturbance = &run->disturbance;
}

/* --weak-ranks names the weak problem of another rank count: weak only. */
static int check_weak_ranks(const mapp_run *run) {
  if (run->common.weak_ranks > 0 && strcmp(run->common.scaling, "weak") != 0)
    return mapp_fail(MAPP_ERR_INPUT, "--weak-ranks %ld: it names the problem of --scaling weak on that many ranks, "
                     "and this run is --scaling %s", run->common.weak_ranks, run->common.scaling);
  return MAPP_OK;
}

/* --min-time needs an app that can repeat its timed phase. */
static int check_min_time(const mapp_app *app, const mapp_run *run) {
  if (run->common.min_time > 0.0 && (!app->reset || !app->digest))
    return mapp_fail(MAPP_ERR_INPUT, "--min-time: %s cannot repeat its timed phase (it has no reset hook)", app->name);
  return MAPP_OK;
}

/* Under SimGrid SMPI (the simulated build) every rank is a thread of one
 * process and the simulator runs them one at a time: an OpenMP team or
 * worker threads of a rank stall it (measured: an OpenMP region with several
 * threads per rank never finished), MPI calls from threads are not modelled,
 * and no device is simulated. Such a run is refused, naming why. */
static int check_simulable(const mapp_app *app, const mapp_run *run) {
  if (!MAPP_SIMULATED) return MAPP_OK;
  if (run->backend != MAPP_BACKEND_SERIAL)
    return mapp_fail(MAPP_ERR_INPUT,
                     "%s: backend '%s' cannot run simulated (SimGrid SMPI runs ranks one at a time in one process, "
                     "so thread teams and devices are not simulated); use --backend serial",
                     app->name, run->common.backend);
  if (run->variant->mpi_threads == MAPP_MPI_MULTIPLE)
    return mapp_fail(MAPP_ERR_INPUT,
                     "%s: variant '%s' cannot run simulated (it calls MPI from worker threads, which SimGrid SMPI "
                     "does not model)", app->name, run->variant->name);
  return MAPP_OK;
}

/* Resolve the variant, backend, threads and preset, then the app's setup. */
static int run_setup(const mapp_app *app, mapp_run *run, const char *prog, void **state) {
  mapp_timer_start(&run->timers, MAPP_PHASE_SETUP);
  int status = mapp_select_backend(app->name, app->variants, run->common.variant, run->common.backend,
                                   &run->variant, &run->backend);
  if (status == MAPP_OK) status = check_simulable(app, run);
  /* Before setup: libraries plan for the thread count in force (FFTW). */
  if (status == MAPP_OK) run->threads = mapp_set_threads(run->backend == MAPP_BACKEND_OMP ? run->common.threads : 1);
  if (status == MAPP_OK) status = mapp_preset_find(app->name, app->presets, run->common.size, &run->preset);
  if (status == MAPP_OK) apply_options(run);
  if (status == MAPP_OK) status = check_min_time(app, run);
  if (status == MAPP_OK) status = check_weak_ranks(run);
  if (status == MAPP_OK) status = app->setup(run, state);
  mapp_timer_stop(&run->timers, MAPP_PHASE_SETUP);
  if (run->service_rank) return status;
  return mapp_agree(run->mpi.comm, prog, status);
}

/* One call of the compute hook after a barrier; *seconds its wall time,
 * max over ranks. A hook that splits its time into phases (compute,
 * communication, I/O) keeps its split; otherwise all of it was computation. */
static int compute_once(const mapp_app *app, mapp_run *run, const char *prog, void *state, double *seconds) {
  MPI_Barrier(run->mpi.comm);
  mapp_timers before = run->timers;
  double start = mapp_now();
  int status = app->compute(run, state);
  double elapsed = mapp_now() - start;
  if (memcmp(before.total, run->timers.total, sizeof before.total) == 0)
    run->timers.total[MAPP_PHASE_COMPUTE] += elapsed;
  MAPP_MPI(MPI_Allreduce(&elapsed, seconds, 1, MPI_DOUBLE, MPI_MAX, run->mpi.comm));
  MAPP_TRY(mapp_agree(run->mpi.comm, prog, status));
  return mapp_iterations_push(&run->iterations, *seconds);
}

/* Between iterations, untimed: the state back where setup left it. */
static int reset_once(const mapp_app *app, mapp_run *run, const char *prog, void *state) {
  double start = mapp_now();
  int status = mapp_agree(run->mpi.comm, prog, app->reset(run, state));
  double elapsed = mapp_now() - start, slowest;
  MAPP_MPI(MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, run->mpi.comm));
  run->iterations.reset_s += slowest;
  return status;
}

/* The iteration's answer against the first's, on every rank; *differ counts
 * the iterations whose answer differed on some rank. */
static int compare_digest(const mapp_app *app, mapp_run *run, const char *prog, void *state, uint64_t *first,
                          int *differ) {
  uint64_t digest = MAPP_DIGEST_INIT;
  MAPP_TRY(mapp_agree(run->mpi.comm, prog, app->digest(run, state, &digest)));
  if (run->iterations.count == 1) *first = digest;
  int mine = digest != *first, any;
  MAPP_MPI(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, run->mpi.comm));
  *differ += any;
  return MAPP_OK;
}

/* Whether --min-time asks for another iteration: until the timed ones (all
 * but the warm-up) last min_time together; a first iteration that alone
 * lasts min_time is the figure. Every rank sees the same maxima. */
static bool more_iterations(const mapp_iterations *it) {
  if (it->min_time <= 0.0 || it->count >= MAX_ITERATIONS) return false;
  if (it->count == 1) return it->seconds[0] < it->min_time;
  double after_warmup = 0.0;
  for (int i = 1; i < it->count; ++i) after_warmup += it->seconds[i];
  return after_warmup < it->min_time;
}

/* The phases one iteration added to the timers, kept for the fastest
 * iteration seen (seconds: its time, max over ranks, the same on every rank,
 * so every rank keeps the same iteration). */
typedef struct {
  double seconds;
  double added[MAPP_PHASE_COUNT];
} iteration_phases;

static void keep_if_fastest(iteration_phases *fastest, double seconds, const mapp_timers *before,
                            const mapp_timers *after) {
  if (!(seconds < fastest->seconds)) return;
  fastest->seconds = seconds;
  for (int p = 0; p < MAPP_PHASE_COUNT; ++p) fastest->added[p] = after->total[p] - before->total[p];
}

/* The compute hook once, or with --min-time as often as it asks; each
 * iteration's answer held to the first's. run->compute_s is the fastest
 * timed iteration: noise on a shared machine only ever adds time (another
 * guest contending for the core or its caches, a preemption), so the fastest
 * iteration is the estimate of the code's own time that such noise moves
 * least (Chen and Revels, "Robust benchmarking in noisy environments",
 * 2016). The phases are that iteration's, on top of what came before the
 * first; the record keeps every iteration's time and their mean. The
 * disturbance is measured over the timed iterations. */
static int run_compute(const mapp_app *app, mapp_run *run, const char *prog, void *state, int *differ) {
  mapp_iterations *it = &run->iterations;
  it->min_time = run->common.min_time;
  const mapp_timers at_start = run->timers;
  iteration_phases first_phases = {.seconds = INFINITY}, timed_phases = {.seconds = INFINITY};
  mapp_disturb_sample before, after_first, end;
  uint64_t first = 0;
  mapp_disturb_sample_take(&before);
  double seconds;
  int status = compute_once(app, run, prog, state, &seconds);
  if (status == MAPP_OK) keep_if_fastest(&first_phases, seconds, &at_start, &run->timers);
  mapp_disturb_sample_take(&after_first);
  bool repeat = status == MAPP_OK && app->digest && it->min_time > 0.0;
  if (repeat) status = compare_digest(app, run, prog, state, &first, differ);
  while (repeat && status == MAPP_OK && more_iterations(it)) {
    status = reset_once(app, run, prog, state);
    mapp_timers before_iteration = run->timers;
    if (status == MAPP_OK) status = compute_once(app, run, prog, state, &seconds);
    if (status == MAPP_OK) keep_if_fastest(&timed_phases, seconds, &before_iteration, &run->timers);
    if (status == MAPP_OK) status = compare_digest(app, run, prog, state, &first, differ);
  }
  mapp_disturb_sample_take(&end);
  if (status != MAPP_OK) return status;
  it->warmup = it->count > 1;
  const iteration_phases *figure = it->warmup ? &timed_phases : &first_phases;
  for (int p = MAPP_PHASE_COMPUTE; p < MAPP_PHASE_COUNT; ++p) run->timers.total[p] = at_start.total[p] + figure->added[p];
  run->compute_s = mapp_iterations_fastest_s(it);
  return mapp_disturbance_between(it->warmup ? &after_first : &before, &end, run->mpi.comm, &run->disturbance);
}

static int run_output(const mapp_app *app, mapp_run *run, const char *prog, void *state) {
  if (!run->common.output || !app->write) return MAPP_OK;
  mapp_timer_start(&run->timers, MAPP_PHASE_IO);
  int status = app->write(run, state, run->common.output);
  mapp_timer_stop(&run->timers, MAPP_PHASE_IO);
  return mapp_agree(run->mpi.comm, prog, status);
}

/* The record to --result and the summary line, on rank 0. */
static int run_report(mapp_run *run, const char *prog, double start) {
  MAPP_TRY(mapp_timers_reduce(&run->timers, run->mpi.comm, run->rec.phases));
  double wall = mapp_now() - start;
  MAPP_MPI(MPI_Allreduce(&wall, &run->rec.wall_s, 1, MPI_DOUBLE, MPI_MAX, run->mpi.comm));
  int status = MAPP_OK;
  if (run->mpi.rank == 0) {
    run->rec.machine = mapp_machine_json();
    if (!run->rec.machine) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory describing the machine");
    if (status == MAPP_OK && run->common.result) status = mapp_record_write(&run->rec, run->common.result);
    if (status == MAPP_OK && !run->common.quiet) {
      mapp_record_summary(&run->rec, stdout);
      mapp_machine_warn(run->rec.machine, prog, stderr);
    }
    json_decref(run->rec.machine);
    run->rec.machine = NULL;
  }
  return mapp_agree(run->mpi.comm, prog, status);
}

/* The hooks in their phases; *verdict is 1 when a verification failed. */
static int run_app(const mapp_app *app, mapp_run *run, const char *prog, int *verdict) {
  double start = mapp_now();
  mapp_timers_init(&run->timers);
  void *state = NULL;
  int differ = 0;
  int status = run_setup(app, run, prog, &state);
  if (run->service_rank) {
    if (app->destroy) app->destroy(state);
    mapp_error_clear();
    return status;
  }
  if (status == MAPP_OK) status = run_compute(app, run, prog, state, &differ);
  if (status == MAPP_OK) {
    record_common(run, app->name);
    status = mapp_agree(run->mpi.comm, prog, app->verify ? app->verify(run, state) : MAPP_OK);
  }
  if (status == MAPP_OK) status = mapp_agree(run->mpi.comm, prog, checks_all_recorded(run));
  /* The determinism --min-time checks for free: every iteration's answer the first's. */
  if (status == MAPP_OK && run->iterations.count > 1)
    mapp_run_check(run, "iterations-identical", differ == 0, differ, 0.0);
  if (status == MAPP_OK) status = mapp_agree(run->mpi.comm, prog, app->describe ? app->describe(run, state) : MAPP_OK);
  if (status == MAPP_OK) status = mapp_agree(run->mpi.comm, prog, checks_all_recorded(run));
  if (status == MAPP_OK) status = run_output(app, run, prog, state);
  if (app->destroy) app->destroy(state);
  if (status == MAPP_OK) status = run_report(run, prog, start);
  json_decref(run->rec.extra);
  run->rec.extra = NULL;
  mapp_iterations_free(&run->iterations);
  *verdict = status == MAPP_OK && strcmp(mapp_record_verdict(&run->rec), "fail") == 0 ? MAPP_ERR_VERIFY : MAPP_OK;
  return status;
}

/* --print-case: the case and size the options make, before MPI starts (a
 * weak run's case gets its rank count appended when it runs). */
static int print_case(const mapp_app *app, mapp_run *run) {
  MAPP_TRY(mapp_preset_find(app->name, app->presets, run->common.size, &run->preset));
  apply_options(run);
  printf("case=%s size=%s\n", run->custom_case ? "none" : run->common.size,
         run->custom_size ? "custom" : run->common.size);
  return MAPP_OK;
}

/* This process's rank as the MPI launcher set it before MPI starts (Open
 * MPI, PMI, PMIx, Slurm), 0 when none did. */
static long launcher_rank(void) {
  static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    const char *value = getenv(names[i]);
    if (value && *value) return strtol(value, NULL, 10);
  }
  return 0;
}

static void free_run(mapp_run *run) {
  mapp_cli_free(&run->cli);
  free(run->options);
  free(run);
}

static void print_list(const mapp_app *app) {
  mapp_print_variants_json(app->name, app->variants, app->bitwise_variants, app->bitwise_ranks,
                           app->reset && app->digest, app->headline, stdout);
}

int mapp_app_main(const mapp_app *app, int argc, char **argv) {
  char prog[64];
  snprintf(prog, sizeof prog, "mapp-%s", app->name);
  mapp_run *run = calloc(1, sizeof *run);
  if (!run) return mapp_report_error(prog, mapp_fail(MAPP_ERR_SYSTEM, "out of memory starting %s", prog));
  run->app = app;
  run->argc = argc;
  run->argv = argv;
  bool help = false;
  int status = parse_line(app, run, prog, argc, argv, &help);
  if (status == MAPP_OK && !help && run->common.print_case) {
    status = mapp_report_error(prog, print_case(app, run));
    free_run(run);
    return status;
  }
  /* --list needs no MPI: answered before it starts (the harness asks every
   * app, many times a sweep). Under a launcher, its first rank answers. */
  if (status == MAPP_OK && !help && run->common.list && !MAPP_SIMULATED) {
    if (launcher_rank() == 0)
      print_list(app);
    free_run(run);
    return MAPP_OK;
  }
  /* A line that does not parse is refused before MPI starts: every rank
   * parsed the same line, the launcher's first rank says why, and an MPI
   * start (a singleton's daemon, under load) adds nothing to stderr but
   * its own warnings. Simulated ranks share one process: MPI runs there. */
  if (status != MAPP_OK && !MAPP_SIMULATED) {
    if (launcher_rank() == 0) mapp_report_error(prog, status);
    else mapp_error_clear();
    free_run(run);
    return status;
  }
  int level = status == MAPP_OK ? required_thread_level(app, run) : MPI_THREAD_FUNNELED;
  int started = mapp_mpi_init(&argc, &argv, level, &run->mpi);
  if (status == MAPP_OK) status = started;
  /* Every rank parsed the same line: only rank 0 reports it. */
  if (run->mpi.rank != 0) mapp_error_clear();
  status = mapp_agree(run->mpi.comm, prog, status);
  int verdict = MAPP_OK;
  if (status == MAPP_OK && !help) {
    if (run->common.list) {
      if (run->mpi.rank == 0)
        print_list(app);
    } else {
      status = run_app(app, run, prog, &verdict);
    }
  }
  MPI_Finalize();
  free_run(run);
  return status != MAPP_OK ? status : verdict;
}
