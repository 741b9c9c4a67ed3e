/* Records in the formats of the HPC analysis stack (`mapp export`):
 *
 * caliper-json  one Caliper "json-split" profile per record, the form
 *               Hatchet's Caliper reader (and so Thicket.from_caliper)
 *               takes. The call tree is the record's timed phases: a root
 *               "main" (its max is the record's wall_s), the standard
 *               phases setup, compute, communication and io under it, any
 *               other phase of the record under compute, and the app's own
 *               timed parts (app_data's numbers named *_s, not *_per_s:
 *               snapshots' forward and adjoint, subgraph's record) under
 *               compute as nodes named without the _s. Metrics per node:
 *               "Min time/rank (inc)", "Max time/rank (inc)" and "Avg
 *               time/rank (inc)" (the record's min, max and mean over
 *               ranks, printed to 17 digits so they read back equal; null
 *               where the record has only one number, which is the max).
 *               Every field that identifies the run is a global of the
 *               profile, Adiak-style, so it becomes a column of Thicket's
 *               metadata: EXPORT_FIELDS as they are, and the scalars of
 *               EXPORT_OBJECTS as "object.field".
 *
 * extrap        Extra-P's text input, one file per series (app, variant,
 *               backend, size, scaling, threads, setting) with at least
 *               min_points rank counts: PARAMETER p, the rank counts as
 *               POINTS, and per callpath (REGION) the metric "time" with a
 *               DATA line per rank count holding every repetition. The
 *               callpaths: "timed" (the seconds the figure of merit is
 *               over: timing.fastest_s, else phases.compute.max) and each
 *               phase's max over ranks. */
#ifndef HARNESS_EXPORT_H
#define HARNESS_EXPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

#define EXPORT_MIN_EXTRAP_POINTS 5 /* fewer rank counts than this fit no Extra-P model */

/* One profile per record that has phases into dir (made if missing),
 * named after its key; the paths written are appended to written. Input
 * error when no record has phases. */
int export_caliper_json(const json_t *records, const char *dir, strv *written);

/* The seconds a record's figure of merit is over (timing.fastest_s, else
 * phases.compute.max); NAN when it has neither. */
double export_timed_seconds(const json_t *record);

/* A record's series: "app variant/backend size scaling tTHREADS[ setting]"
 * (malloc'd), the configuration but its rank count. */
char *export_series_name(const json_t *record);
/* Whether a record can be a point of a series: it exited 0 and says its
 * rank count and its timed seconds. */
bool export_usable(const json_t *record);

/* One Extra-P text file per series with at least min_points rank counts
 * (and, when max_ranks > 0, only the points up to max_ranks) into dir;
 * the paths written go to written and their series names to series (in
 * the same order), and the series left out for too few points to skipped
 * ("heat mpi/serial tiny weak t1: 3 rank counts"). */
/* The first three of the series export_extrap left out, and how many
 * more ("a: 1 rank count; b: 3 rank counts; c: ... and 12 more"; malloc'd). */
char *export_skipped_text(const strv *skipped);

int export_extrap(const json_t *records, const char *dir, size_t min_points, long max_ranks, strv *written,
                  strv *series, strv *skipped);

#endif
