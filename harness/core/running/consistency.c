#include "consistency.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baseline.h"
#include "strv.h"
#include "tolerance.h"
#include "fsutil.h"
#include "mapp_error.h"

bool consistency_applies(const job *j, bool bitwise_ranks) {
  return bitwise_ranks && strcmp(j->scaling, "strong") == 0;
}

/* The job's configuration and repetition, without its rank count, as
 * `app` would run it with `variant` in `setting` (NULL: the job's own). */
static char *config_key_of(const job *j, const char *app, const char *variant, const char *setting) {
  char *own = setting ? NULL : job_setting(j);
  if (!setting) setting = own;
  char *key = str_printf("%s|%s|%s|t%ld|%s|r%ld|%s", app, variant, j->backend, j->threads, j->size,
                         j->repetition, setting ? setting : "");
  free(own);
  return key;
}

static char *config_key(const job *j) { return config_key_of(j, j->app, j->variant, NULL); }

static consistency_ref *find_ref(consistency_book *book, const char *key) {
  for (size_t i = 0; i < book->count; ++i)
    if (strcmp(book->items[i].key, key) == 0) return &book->items[i];
  return NULL;
}

static int add_ref(consistency_book *book, char *key, const char *answer, char *record_key) {
  if (book->count == book->capacity) {
    size_t grown = book->capacity ? 2 * book->capacity : 16;
    consistency_ref *items = realloc(book->items, grown * sizeof *items);
    if (!items) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory keeping a 1-rank answer");
    book->items = items;
    book->capacity = grown;
  }
  char *copy = strdup(answer);
  if (!copy) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory keeping a 1-rank answer");
  book->items[book->count++] = (consistency_ref){.key = key, .answer = copy, .record_key = record_key};
  return MAPP_OK;
}

/* j's answer as its configuration's reference under `key` (taken, freed
 * on failure). */
static int keep_answer(consistency_book *book, char *key, const job *j, const job_files *files) {
  char *record_key = job_key(j);
  int status = record_key ? add_ref(book, key, files->output, record_key) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status != MAPP_OK) {
    free(key);
    free(record_key);
  }
  return status;
}

static int set_status(json_t *record, const char *status, const char *reason) {
  json_t *c = json_pack("{s:s, s:s?}", "status", status, "reason", reason);
  if (!c) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_object_set_new(record, "consistency", c);
  return MAPP_OK;
}

static const tolerance_override exact = {.model_set = true, .model = TOL_EXACT};

/* The verdict of a comparison that could not be made against `reference`,
 * saying why (the pending error, cleared); NULL when out of memory. */
static json_t *failed_comparison(const char *reference) {
  json_t *verdict = json_pack("{s:s, s:s, s:s}", "status", "fail", "file", reference, "error", mapp_error_message());
  mapp_error_clear();
  return verdict;
}

/* Against the reference answer at `tol` (bit for bit: &exact), the verdict
 * into the record (with `extra` merged into it, stolen; may be NULL);
 * *differs when the answers differ. A comparison that cannot be made (an
 * answer of another shape, a dataset missing) is a failure saying why. */
static int compare_answers(const char *reference, const char *answer, const tolerance_override *tol, json_t *extra,
                           job_result *res, bool *differs) {
  compare_report report;
  json_t *verdict = NULL;
  if (compare_files(reference, answer, tol, &report) == MAPP_OK) {
    verdict = compare_report_json(&report);
    compare_report_free(&report);
  } else {
    verdict = failed_comparison(reference);
  }
  if (verdict && extra) json_object_update(verdict, extra);
  json_decref(extra);
  if (!verdict) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_object_set_new(res->record, "consistency", verdict);
  *differs = strcmp(json_string_value(json_object_get(verdict, "status")), "pass") != 0;
  if (*differs && res->outcome == OUTCOME_OK) job_set_outcome(res, OUTCOME_FAIL_CONSISTENCY);
  return MAPP_OK;
}

static int compare_with(consistency_ref *ref, const char *answer, job_result *res) {
  bool differs = false;
  json_t *about = json_pack("{s:s}", "reference_key", ref->record_key);
  if (!about) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  MAPP_TRY(compare_answers(ref->answer, answer, &exact, about, res, &differs));
  ref->failed |= differs;
  return MAPP_OK;
}

int consistency_judge(consistency_book *book, const job *j, const job_files *files, job_result *res, bool *keep) {
  *keep = false;
  if (res->exit_code != 0) return MAPP_OK; /* no answer to compare; the run has failed already */
  char *key = config_key(j);
  if (!key) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  consistency_ref *ref = find_ref(book, key);
  if (ref || j->ranks != 1 || res->outcome != OUTCOME_OK) {
    free(key);
    if (ref) return compare_with(ref, files->output, res);
    return set_status(res->record, "unavailable",
                      j->ranks == 1 ? "this 1-rank run failed"
                                    : "no passing 1-rank run of this configuration and repetition ran before it");
  }
  /* The first passing 1-rank answer of the configuration is the reference. */
  MAPP_TRY(keep_answer(book, key, j, files));
  *keep = true;
  return set_status(res->record, "reference", NULL);
}

/* ------------------------------------------------ a peer's answers */

int consistency_keep(consistency_book *book, const job *j, const job_files *files, const job_result *res, bool *keep) {
  *keep = false;
  if (res->exit_code != 0 || res->outcome != OUTCOME_OK || j->ranks != 1 || !path_exists(files->output))
    return MAPP_OK;
  char *key = config_key(j);
  if (!key) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (find_ref(book, key)) {
    free(key);
    return MAPP_OK;
  }
  MAPP_TRY(keep_answer(book, key, j, files));
  *keep = true;
  return MAPP_OK;
}

int consistency_judge_peer(consistency_book *book, const job *j, const char *peer_of, const char *answer_of,
                           const job_files *files, job_result *res) {
  if (res->exit_code != 0) return MAPP_OK; /* no answer to compare; the run has failed already */
  if (!path_exists(files->output)) return set_status(res->record, "unavailable", "this run wrote no answer");
  /* The mini-app's name for the variant, where the peer names its modes otherwise. */
  const char *variant = json_string_value(json_object_get(res->record, "peer_variant"));
  char *key = config_key_of(j, peer_of, variant ? variant : j->variant, answer_of);
  if (!key) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  consistency_ref *ref = find_ref(book, key);
  free(key);
  if (!ref) {
    char *reason = str_printf("no passing 1-rank run of mapp-%s in this configuration%s%s and repetition ran "
                              "before it", peer_of, answer_of ? " with the setting " : "", answer_of ? answer_of : "");
    int status = reason ? set_status(res->record, "unavailable", reason) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    free(reason);
    return status;
  }
  tolerance_override stated = {0};
  bool has_tolerance = false;
  if (baseline_stated_tolerance(res->record, &stated, &has_tolerance) != MAPP_OK) {
    json_t *c = failed_comparison(ref->answer);
    if (!c) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    json_object_set_new(res->record, "consistency", c);
    if (res->outcome == OUTCOME_OK) job_set_outcome(res, OUTCOME_FAIL_CONSISTENCY);
    return MAPP_OK;
  }
  json_t *about = json_pack("{s:s, s:s}", "reference_key", ref->record_key, "peer_of", peer_of);
  if (!about) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  bool differs = false;
  MAPP_TRY(compare_answers(ref->answer, files->output, has_tolerance ? &stated : &exact, about, res, &differs));
  ref->failed |= differs;
  return MAPP_OK;
}

/* ------------------------------------------------ weak answers, 1 rank */

bool consistency_weak_applies(const job *j, bool bitwise_ranks, bool weak_reference) {
  return weak_reference && bitwise_ranks && j->ranks > 1 && strcmp(j->scaling, "weak") == 0;
}

/* path with its ".h5", ".json" or ".log" ending made ".weakref" + it. */
static char *reference_path(const char *path) {
  const char *dot = strrchr(path, '.');
  return str_printf("%.*s.weakref%s", (int)(dot - path), path, dot);
}

static int reference_files(const job_files *files, job_files *ref) {
  *ref = (job_files){.output = reference_path(files->output), .result = reference_path(files->result),
                     .log = reference_path(files->log)};
  if (ref->output && ref->result && ref->log) return MAPP_OK;
  job_files_free(ref);
  return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
}

/* j's problem on 1 rank: its flags plus --weak-ranks N, untimed (one run
 * of compute whatever min_time says) and not compared with a baseline. */
static job reference_job(const job *j, strv *args) {
  job ref = *j;
  ref.ranks = 1;
  ref.min_time = 0.0;
  ref.check = CHECK_NONE;
  ref.extra_args = args;
  return ref;
}

/* The rank count whose weak problem the answer holds: the record's
 * answer_ranks where the run says it answered only that many ranks' share
 * (the others' work charged on a simulated cluster), else the job's. */
static long answered_ranks(const job *j, const json_t *record) {
  const json_t *v = json_object_get(record, "answer_ranks");
  return json_is_integer(v) && json_integer_value(v) > 0 ? (long)json_integer_value(v) : j->ranks;
}

static int reference_args(const job *j, long weak_ranks, strv *args) {
  *args = (strv){0};
  int status = j->extra_args ? strv_extend(args, j->extra_args) : MAPP_OK;
  if (status == MAPP_OK) status = strv_push(args, "--weak-ranks");
  if (status == MAPP_OK) status = strv_pushf(args, "%ld", weak_ranks);
  if (status != MAPP_OK) strv_free(args);
  return status;
}

static void remove_files(const job_files *files) {
  unlink(files->output);
  unlink(files->result);
  unlink(files->log);
}

/* The verdict when the reference could not answer: the answer stays unchecked. */
static int reference_failed(long weak_ranks, const job_files *ref_files, const job_result *ref, job_result *res) {
  char verdict[64];
  job_outcome_text(ref, verdict, sizeof verdict);
  char *reason = str_printf("the 1-rank reference (--weak-ranks %ld) failed: %s (log: %s)", weak_ranks, verdict,
                            ref_files->log);
  json_t *c = reason ? json_pack("{s:s, s:s}", "status", "unavailable", "reason", reason) : NULL;
  free(reason);
  if (!c) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_object_set_new(res->record, "consistency", c);
  return MAPP_OK;
}

int consistency_judge_weak(const harness_env *env, const job *j, const job_files *files,
                           const execute_options *opt, bool keep_files, job_result *res) {
  if (res->exit_code != 0) return MAPP_OK; /* no answer to compare; the run has failed already */
  strv args;
  long weak_ranks = answered_ranks(j, res->record);
  MAPP_TRY(reference_args(j, weak_ranks, &args));
  job ref = reference_job(j, &args);
  job_files ref_files;
  int status = reference_files(files, &ref_files);
  if (status != MAPP_OK) {
    strv_free(&args);
    return status;
  }
  execute_options ref_opt = *opt;
  ref_opt.check_baseline = false;
  ref_opt.keep_output = true;
  job_result ref_res = {0};
  bool differs = false, answered = false;
  status = job_execute(env, &ref, &ref_files, &ref_opt, &ref_res);
  if (status == MAPP_OK) {
    answered = ref_res.exit_code == 0 && ref_res.outcome == OUTCOME_OK;
    json_t *about = json_pack("{s:{s:i, s:I, s:f}}", "reference", "ranks", 1, "weak_ranks", (json_int_t)weak_ranks,
                              "elapsed_s", ref_res.elapsed_s);
    if (!about) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    else if (answered) status = compare_answers(ref_files.output, files->output, &exact, about, res, &differs);
    else {
      json_decref(about);
      status = reference_failed(weak_ranks, &ref_files, &ref_res, res);
    }
  }
  if (status == MAPP_OK && answered && !differs && !keep_files) remove_files(&ref_files);
  job_result_free(&ref_res);
  job_files_free(&ref_files);
  strv_free(&args);
  return status;
}

void consistency_book_clear(consistency_book *book, bool keep_files) {
  for (size_t i = 0; i < book->count; ++i) {
    if (!keep_files && !book->items[i].failed) unlink(book->items[i].answer);
    free(book->items[i].key);
    free(book->items[i].answer);
    free(book->items[i].record_key);
  }
  free(book->items);
  *book = (consistency_book){0};
}
