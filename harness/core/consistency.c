#include "consistency.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tolerance.h"
#include "fsutil.h"
#include "mapp_error.h"

bool consistency_applies(const job *j, bool bitwise_ranks) {
  return bitwise_ranks && strcmp(j->scaling, "strong") == 0;
}

/* The job's configuration and repetition, without its rank count. */
static char *config_key(const job *j) {
  char *setting = job_setting(j);
  char *key = str_printf("%s|%s|%s|t%ld|%s|r%ld|%s", j->app, j->variant, j->backend, j->threads, j->size,
                         j->repetition, setting ? setting : "");
  free(setting);
  return key;
}

static consistency_ref *find_ref(consistency_book *book, const char *key) {
  for (size_t i = 0; i < book->count; ++i)
    if (strcmp(book->items[i].key, key) == 0) return &book->items[i];
  return NULL;
}

static int add_ref(consistency_book *book, char *key, const char *answer) {
  if (book->count == book->capacity) {
    size_t grown = book->capacity ? 2 * book->capacity : 16;
    consistency_ref *items = realloc(book->items, grown * sizeof *items);
    if (!items) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory keeping a 1-rank answer");
    book->items = items;
    book->capacity = grown;
  }
  char *copy = strdup(answer);
  if (!copy) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory keeping a 1-rank answer");
  book->items[book->count++] = (consistency_ref){.key = key, .answer = copy};
  return MAPP_OK;
}

static int set_status(json_t *record, const char *status, const char *reason) {
  json_t *c = json_pack("{s:s, s:s?}", "status", status, "reason", reason);
  if (!c) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_object_set_new(record, "consistency", c);
  return MAPP_OK;
}

/* Bit for bit against the reference; a comparison that cannot be made (an
 * answer of another shape, a dataset missing) is a failure saying why. */
static int compare_with(consistency_ref *ref, const char *answer, job_result *res) {
  const tolerance_override exact = {.model_set = true, .model = TOL_EXACT};
  compare_report report;
  json_t *verdict = NULL;
  if (compare_files(ref->answer, answer, &exact, &report) == MAPP_OK) {
    verdict = compare_report_json(&report);
    compare_report_free(&report);
  } else {
    verdict = json_pack("{s:s, s:s, s:s}", "status", "fail", "file", ref->answer, "error", mapp_error_message());
    mapp_error_clear();
  }
  if (!verdict) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  json_object_set_new(res->record, "consistency", verdict);
  const char *status = json_string_value(json_object_get(verdict, "status"));
  if (strcmp(status, "pass") != 0) {
    ref->failed = true;
    if (res->outcome == OUTCOME_OK) job_set_outcome(res, OUTCOME_FAIL_CONSISTENCY);
  }
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
  int status = add_ref(book, key, files->output);
  if (status != MAPP_OK) {
    free(key);
    return status;
  }
  *keep = true;
  return set_status(res->record, "reference", NULL);
}

void consistency_book_clear(consistency_book *book, bool keep_files) {
  for (size_t i = 0; i < book->count; ++i) {
    if (!keep_files && !book->items[i].failed) unlink(book->items[i].answer);
    free(book->items[i].key);
    free(book->items[i].answer);
  }
  free(book->items);
  *book = (consistency_book){0};
}
