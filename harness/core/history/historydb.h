/* The history of results across commits: one SQLite file (results/
 * history.sqlite by default) holding every record added, with its
 * configuration key, figure of merit, phases, revision and that revision's
 * commit date, build and machine provenance, and the system it ran on.
 *
 * SQLite because a history is written by sweeps that may be killed or run
 * side by side: every add is one transaction (a kill leaves all of it or
 * none), writers queue on the database lock (BEGIN IMMEDIATE with a busy
 * timeout) instead of failing, and a record's digest is unique, so adding
 * the same record twice stores it once. The file says it is a mapp history
 * in its header (application_id 'mapp', user_version = schema), so a foreign
 * or corrupt file is refused rather than written to. A history of an older
 * schema is migrated, once, by the first mapp that opens it (schema 2: the
 * system in every key, each older record's host as its system). */
#ifndef HARNESS_HISTORYDB_H
#define HARNESS_HISTORYDB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct history_db history_db;

/* The history's path (malloc'd): `given` (--db) when not NULL, else
 * $MAPP_HISTORY, else `fallback` (results/history.sqlite for the verb). */
char *historydb_path(const char *given, const char *fallback);

/* Opens the history at path. For writing it is created (and its folder)
 * when missing; for reading a missing file is an input error. A file that
 * is not SQLite, is corrupt, or is another application's database is an
 * input error naming it; one that cannot be created or opened is a system
 * error. ":memory:" is a history of its own (tests). */
int historydb_open(const char *path, bool write, history_db **db);
void historydb_close(history_db *db);
const char *historydb_file(const history_db *db);

/* Every record of one app the history holds, as added (new reference). */
int historydb_records_of(history_db *db, const char *app, json_t **records);

/* Revisions whose commit date the history already holds, as the keys of a
 * JSON object (new reference). */
int historydb_dated_revisions(history_db *db, json_t **dated);

typedef struct {
  size_t records; /* offered */
  size_t added;   /* new to the history (the rest were there already) */
} history_add_tally;

/* Stores every record (JSON objects as results.jsonl holds them) in one
 * transaction, each once; commit_dates maps revisions to their commit date
 * (ISO 8601) or null where the repository does not know them. */
int historydb_add(history_db *db, const json_t *records, const json_t *commit_dates, history_add_tally *tally);

/* A record's configuration as mapp compare and the report group
 * repetitions: "heat mpi/serial tiny weak n2 t1", then the setting, or the
 * matrix parameters when there is no setting; malloc'd. */
char *historydb_config_name(const json_t *record);

/* The configuration key of a record, what a series is made of: its
 * configuration and the system it ran on (results_system_of), "heat
 * mpi/serial tiny weak n2 t1 @node1". Two machines are two series, never one
 * series with a step; malloc'd. */
char *historydb_config_key(const json_t *record);

/* One revision of a configuration: the median of its repetitions. */
typedef struct {
  char *revision;    /* as the records carry it: 12 hex digits, maybe "-dirty" */
  char *commit_date; /* ISO 8601 from git; NULL when the repository did not know it */
  char *time;        /* when its earliest repetition ran */
  double order;      /* seconds since 1970 of the commit date, else of time: the series' order */
  double median, min, max;
  size_t runs;       /* repetitions that exited 0 with a figure of merit */
} history_point;

typedef struct {
  char *config;      /* historydb_config_key */
  char *app, *variant, *backend, *size, *scaling, *setting; /* the key's parts ("" for no setting) */
  char *system;      /* the machine (the key's "@SYSTEM") */
  long ranks, threads;
  char *fom_name;
  history_point *points; /* oldest first */
  size_t count;
} history_series;

typedef struct {
  history_series *items; /* by configuration key */
  size_t count;
  size_t records, revisions, systems; /* in the whole history, timed or not */
} history_series_set;

/* Every configuration's series (one per system): its timed runs (exit 0
 * with a figure of merit) grouped by revision, ordered by commit date where known and by the
 * time the revision ran where not. */
int historydb_series(history_db *db, history_series_set *set);
void history_series_set_free(history_series_set *set);

/* Seconds since 1970 of an ISO 8601 time ("2026-11-25T11:26:06Z",
 * "...+01:00"); false when text is not one. */
bool history_parse_time(const char *text, double *seconds);

#endif
