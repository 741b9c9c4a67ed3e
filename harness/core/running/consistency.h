/* Rank invariance as a check that needs no stored file. An app whose
 * --list declares "bitwise_ranks" gives the same answer bit for bit for one
 * global problem on any rank count; a sweep therefore compares each n-rank
 * answer of a strong-scaling job with the 1-rank answer of the same
 * configuration (variant, backend, threads, size, setting) and repetition
 * that ran before it, and records the verdict as "consistency":
 *   {"status": "reference"}                  the 1-rank run whose answer is kept
 *   {"status": "pass"|"fail", "file": REF, "reference_key": KEY, "worst_abs": ..., "fields": [...]}
 *                                           (KEY: the 1-rank run's record key; the
 *                                           comparison checks both answers, so the
 *                                           coverage counts the 1-rank configuration too)
 *   {"status": "unavailable", "reason": ...}  no 1-rank answer to compare with
 * Weak-scaling jobs solve a different global problem on each rank count,
 * so they take no part in that comparison. Where their entry asks for it
 * (`weak_reference: true`), a weak job on n > 1 ranks of a rank-invariant
 * app is instead compared with the same global problem solved on 1 rank
 * (`--weak-ranks n`), which the harness launches right after it through
 * the same environment: the check for weak answers no baseline holds (a
 * simulated sweep to 1,024 ranks). Its "consistency" says so:
 *   {"status": "pass"|"fail", ..., "reference": {"ranks": 1, "weak_ranks": n, "elapsed_s": ...}}
 *   {"status": "unavailable", "reason": "the 1-rank reference ... failed ..."}
 * A peer (a program whose --list says "peer_of": APP: the production
 * system APP stands for) solves APP's problem its own way: its answer is
 * compared with APP's 1-rank answer of the same configuration (variant,
 * the record's peer_variant where the peer names its modes otherwise;
 * backend, threads, size, setting) and repetition that ran before it, at
 * the tolerance its record states (baseline_tolerance; bit for bit where
 * it states none), so every answer of a sweep that runs both is checked by
 * an independent implementation, also where no baseline holds the case:
 *   {"status": "pass"|"fail", "file": APP_ANSWER, "reference_key": KEY, "peer_of": APP, ...}
 *   {"status": "unavailable", "reason": ...}  no answer of APP to compare with */
#ifndef HARNESS_CONSISTENCY_H
#define HARNESS_CONSISTENCY_H

#include <stdbool.h>
#include <stddef.h>

#include "execute.h"
#include "job.h"

typedef struct {
  char *key;    /* the configuration without its rank count */
  char *answer; /* the 1-rank answer file */
  char *record_key; /* the 1-rank run's record key */
  bool failed;  /* an answer differed from it: kept, since the failure names it */
} consistency_ref;

typedef struct {
  consistency_ref *items;
  size_t count, capacity;
} consistency_book;

/* Whether j's answer takes part: a strong-scaling job of a rank-invariant app. */
bool consistency_applies(const job *j, bool bitwise_ranks);
/* After j ran with its answer at files->output (still on disk): a passing
 * 1-rank run becomes its configuration's reference (*keep: its answer must
 * stay until consistency_book_clear); an n-rank run that answered is
 * compared with the reference, and a difference turns res->outcome into
 * OUTCOME_FAIL_CONSISTENCY. Only system failures are errors. */
int consistency_judge(consistency_book *book, const job *j, const job_files *files, job_result *res, bool *keep);
/* After j, a run of an app that a program of the sweep is a peer of: a
 * passing 1-rank answer is kept for the peer (*keep) unless one of its
 * configuration and repetition already is. The record is left as it is. */
int consistency_keep(consistency_book *book, const job *j, const job_files *files, const job_result *res, bool *keep);
/* After j, a run of a peer of `peer_of`: its answer against that app's kept
 * answer of the same configuration and repetition (in the setting
 * `answer_of` where not NULL, else j's own), at the record's
 * baseline_tolerance; a difference turns res->outcome into
 * OUTCOME_FAIL_CONSISTENCY. Only system failures are errors. */
int consistency_judge_peer(consistency_book *book, const job *j, const char *peer_of, const char *answer_of,
                           const job_files *files, job_result *res);
/* Whether j's answer is checked against a 1-rank run of its weak problem. */
bool consistency_weak_applies(const job *j, bool bitwise_ranks, bool weak_reference);
/* After j ran with its answer at files->output: launches the 1-rank
 * reference through env (its files beside j's, STEM.weakref.*), compares
 * bit for bit and records the verdict; a difference turns res->outcome into
 * OUTCOME_FAIL_CONSISTENCY, a reference that fails leaves the answer
 * unchecked ("unavailable"). The reference's files are removed unless
 * keep_files or the answers differ. Only system failures are errors. */
int consistency_judge_weak(const harness_env *env, const job *j, const job_files *files,
                           const execute_options *opt, bool keep_files, job_result *res);
/* Forgets the references, removing their answer files unless keep_files
 * (a sweep's --keep-output) or an answer differed from them: at the end of
 * each repetition and of the sweep. */
void consistency_book_clear(consistency_book *book, bool keep_files);

#endif
