/* A figure judges itself before any verdict is drawn from it: each record
 * says how long its timed phase lasted and whether something took its CPU
 * (verdict_record), and each configuration's repetitions get one of four
 * verdicts (verdict_judge), checked in this order:
 *
 *   too-short  the median timed phase is below VERDICT_MIN_TIMED_S (10 ms):
 *              timer resolution, cache and frequency transients and one
 *              preemption are a visible share of it;
 *   disturbed  more than VERDICT_MAX_DISTURBED_SHARE of the records were
 *              disturbed (below) while they asked no more cores than they
 *              were given: something else on the machine took their CPU;
 *   oversubscribed  more than that share were disturbed, but enough of them
 *              asked more cores than they were given (the record's
 *              `oversubscribed`: ranks x (threads + the variant's own
 *              helper threads, such as a poller or I/O workers) beyond the
 *              cores): the run took its own CPU, and the machine is not to
 *              blame;
 *   noisy      the 95 % interval of the median figure of merit is wider
 *              than +-precision (the sweep's `precision`, default 5 %), or
 *              there are fewer than VERDICT_MEDIAN_CI_MIN_N repetitions, too
 *              few for a 95 % interval at all;
 *   stable     none of these.
 *
 * The median's interval is distribution-free, from order statistics
 * (verdict_median_interval): the median of n values lies between the k-th
 * smallest and k-th largest with a probability given by the binomial
 * distribution of how many values fall below it, whatever the values'
 * distribution. It is chosen over a bootstrap because its coverage is exact
 * at the small n a sweep has (a percentile bootstrap of a median with 10
 * values resamples from 10 points and undercovers), it needs no random
 * numbers, and it says plainly when n is too small: with n < 6 even the
 * minimum and maximum cover the median with less than 95 % (1 - 2/2^5).
 *
 * Outliers are flagged and kept (verdict_outliers): a value whose modified
 * z-score 0.6745 |x - median| / MAD exceeds 3.5 (Iglewicz and Hoaglin, "How
 * to Detect and Handle Outliers", 1993). The median and its interval are
 * robust to them already; dropping them would hide what the machine did.
 *
 * A record is disturbed (verdict_record) when its ranks waited for a CPU
 * more than VERDICT_MAX_RUN_DELAY of the time (disturbance.
 * run_delay_fraction, from schedstat, in nanoseconds: judged always), or
 * when the hypervisor stole more than VERDICT_MAX_STEAL of the node's CPU
 * time (disturbance.steal_fraction, from /proc/stat), judged only when the
 * timed interval held at least VERDICT_STEAL_MIN_CPU_S of CPU time
 * (disturbance.cpu_ticks / 100, else interval_s * machine.cpus): /proc/stat
 * counts 10 ms ticks, so over a shorter interval one tick is more than a
 * 1 % step and the fraction is mostly rounding. Records without these
 * fields (older ones) are never disturbed, and their timed phase is
 * phases.compute.max. */
#ifndef HARNESS_VERDICT_H
#define HARNESS_VERDICT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define VERDICT_MIN_TIMED_S 0.010         /* too-short below this median timed phase */
#define VERDICT_MAX_RUN_DELAY 0.10        /* a record waiting for a CPU more than this is disturbed */
#define VERDICT_MAX_STEAL 0.10            /* a record losing more than this to the hypervisor is disturbed */
#define VERDICT_STEAL_MIN_CPU_S 1.0       /* steal is judged over at least this much node CPU time */
#define VERDICT_MAX_DISTURBED_SHARE 0.25  /* disturbed when more than this share of records is */
#define VERDICT_DEFAULT_PRECISION 0.05    /* noisy when the median's interval is wider than +-5 % */
#define VERDICT_MEDIAN_CI_MIN_N 6         /* fewest values with a 95 % interval of their median */
#define VERDICT_OUTLIER_Z 3.5             /* modified z-score above which a value is an outlier */

typedef enum { VERDICT_STABLE, VERDICT_NOISY, VERDICT_TOO_SHORT, VERDICT_DISTURBED, VERDICT_OVERSUBSCRIBED } verdict_kind;

/* "stable", "noisy", "too-short", "disturbed", "oversubscribed". */
const char *verdict_name(verdict_kind kind);
/* Whether figures with this verdict can carry an answer at all: a
 * too-short timed phase measures the timer, the warm-up and cold caches more
 * than the code, a disturbed configuration lost its time to others, and an
 * oversubscribed one measures its threads sharing too few cores. */
bool verdict_figures_trusted(verdict_kind kind);

/* The 95 % interval of the median of values[n] by order statistics:
 * [x(k), x(n + 1 - k)] of the sorted values with the largest k whose
 * coverage 1 - 2 P(Binomial(n, 1/2) < k) is still >= 95 %. False (and NAN
 * bounds) when n < VERDICT_MEDIAN_CI_MIN_N. values are not changed. */
int verdict_median_interval(const double *values, size_t n, double *low, double *high, bool *defined);

/* What `repetitions: auto` asks after each round: is the 95 % interval of
 * the median of foms[n] within +-precision of that median (0.02: 2 %)?
 * False while n < VERDICT_MEDIAN_CI_MIN_N. */
int verdict_precise(const double *foms, size_t n, double precision, bool *precise);

/* How many of values[n] are outliers by the modified z-score; flags[i]
 * (when flags is not NULL) says which. With MAD 0 (over half the values
 * equal) the mean absolute deviation scaled by 1.2533 stands in for it, as
 * Iglewicz and Hoaglin advise; when that is 0 too there are none. */
int verdict_outliers(const double *values, size_t n, bool *flags, size_t *count);

/* One record as the verdicts see it. */
typedef struct {
  double timed_s;   /* timing.timed_s, else phases.compute.max; NAN when neither */
  double run_delay; /* disturbance.run_delay_fraction; NAN when the record has none */
  double steal;     /* disturbance.steal_fraction where it is judged (above), else NAN */
  bool disturbed;   /* run_delay or steal beyond its bound */
  bool oversubscribed; /* the record's "oversubscribed": it asked more cores than it was given */
} verdict_record_info;

void verdict_record(const json_t *record, verdict_record_info *out);

/* A configuration's repetitions, judged. */
typedef struct {
  verdict_kind kind;
  size_t n;              /* figures of merit judged */
  double median;         /* of the figures of merit */
  double low, high;      /* the median's 95 % interval; NAN when n < VERDICT_MEDIAN_CI_MIN_N */
  double half_width;     /* max(median - low, high - median) / median; NAN without an interval */
  size_t outliers;       /* by the modified z-score, kept in every number above */
  size_t disturbed;      /* records judged disturbed */
  size_t self_disturbed; /* of which oversubscribed: they took their own CPU */
  double timed_median_s; /* median timed phase; NAN when no record says */
} verdict_summary;

/* Judges foms[n] (higher is better) with each one's timed seconds (NAN
 * where unknown; timed_s may be NULL), disturbance (disturbed may be NULL)
 * and whether it oversubscribed its cores (oversubscribed may be NULL: none
 * did) against precision (0.05: +-5 %; <= 0 takes the default). n may be 0:
 * noisy, with NAN numbers. */
int verdict_judge(const double *foms, const double *timed_s, const bool *disturbed, const bool *oversubscribed,
                  size_t n, double precision, verdict_summary *out);

/* The same over the records of one configuration (a JSON array): those that
 * exited 0 with a figure of merit count, as in every other statistic. */
int verdict_of_records(const json_t *records, double precision, verdict_summary *out);

/* One line saying why: "too-short: median timed phase 0.31 ms < 10 ms",
 * "noisy: median +-12.0 % at 95 % (asked +-5 %)", "stable: median +-1.2 %
 * at 95 %, 1 outlier kept"; truncated to len. */
void verdict_explain(const verdict_summary *v, double precision, char *text, size_t len);

#endif
