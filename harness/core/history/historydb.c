/* The history's SQLite storage (historydb.h says why SQLite). */
#include "historydb.h"

#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "jsonutil.h"
#include "mapp_error.h"
#include "mapp_record.h"
#include "stats.h"

enum {
  HISTORY_APPLICATION_ID = 0x6d617070, /* "mapp" in the file header */
  HISTORY_SCHEMA = 1,                  /* PRAGMA user_version */
  /* A writer waits this long for another's transaction (a large add takes
   * seconds) before giving up as a system failure. */
  HISTORY_BUSY_TIMEOUT_MS = 120000,
};

struct history_db {
  sqlite3 *sql;
  char *path;
  bool empty; /* opened for reading before any add made its tables: a history of nothing */
};

/* digest: of the record's canonical JSON, the same record is stored once.
 * config: historydb_config_key; the columns after it are the key's parts
 * and what a user filters or plots by, the whole record is kept in
 * `record` for everything else (phases, problem, app_data). */
static const char schema_sql[] =
    "CREATE TABLE revisions (\n"
    "  revision TEXT PRIMARY KEY,\n"
    "  commit_date TEXT\n"
    ");\n"
    "CREATE TABLE records (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  digest TEXT NOT NULL UNIQUE,\n"
    "  config TEXT NOT NULL,\n"
    "  app TEXT, variant TEXT, backend TEXT, size TEXT, scaling TEXT, ranks INTEGER, threads INTEGER,\n"
    "  setting TEXT, params TEXT,\n"
    "  fom_name TEXT, fom_value REAL, exit_code INTEGER, phases TEXT,\n"
    "  revision TEXT NOT NULL, time TEXT, repetition INTEGER, sweep TEXT,\n"
    "  compiler TEXT, flags TEXT, build_type TEXT, host TEXT, env TEXT,\n"
    "  record TEXT NOT NULL,\n"
    "  added TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX records_by_config ON records (config, revision);\n"
    "PRAGMA application_id = 1835102320;\n" /* HISTORY_APPLICATION_ID */
    "PRAGMA user_version = 1;\n";           /* HISTORY_SCHEMA */

/* ---------------------------------------------------------------- errors */

/* Not SQLite or corrupt: the file given is wrong (input). Anything else
 * (cannot create, read-only, disk full, locked past the timeout): the
 * system failed on a valid request. */
static int sql_fail(const history_db *db, int rc, const char *what) {
  const char *message = db->sql ? sqlite3_errmsg(db->sql) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
  case SQLITE_NOTADB:
    return mapp_fail(MAPP_ERR_INPUT, "%s is not a mapp history: not an SQLite database (%s)", db->path, message);
  case SQLITE_CORRUPT:
    return mapp_fail(MAPP_ERR_INPUT, "%s is a corrupt database (%s while %s)", db->path, message, what);
  default:
    return mapp_fail(MAPP_ERR_SYSTEM, "history %s: cannot %s: %s", db->path, what, message);
  }
}

static int sql_exec(const history_db *db, const char *sql, const char *what) {
  int rc = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? MAPP_OK : sql_fail(db, rc, what);
}

static int sql_prepare(const history_db *db, const char *sql, sqlite3_stmt **stmt, const char *what) {
  int rc = sqlite3_prepare_v2(db->sql, sql, -1, stmt, NULL);
  return rc == SQLITE_OK ? MAPP_OK : sql_fail(db, rc, what);
}

/* A query's one integer ("PRAGMA user_version"). */
static int sql_integer(const history_db *db, const char *sql, long long *value) {
  sqlite3_stmt *stmt;
  MAPP_TRY(sql_prepare(db, sql, &stmt, "read the file's header"));
  int rc = sqlite3_step(stmt);
  *value = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
  sqlite3_finalize(stmt);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? MAPP_OK : sql_fail(db, rc, "read the file's header");
}

/* ---------------------------------------------------------------- open */

char *historydb_path(const char *given, const char *fallback) {
  const char *env = getenv("MAPP_HISTORY");
  return strdup(given ? given : env && env[0] ? env : fallback);
}

/* The folder a new history goes in; failing to make it is the system's
 * failure (exit 3), as an unwritable file is. */
static int make_parent(const char *path) {
  char *dir = path_dirname(path);
  if (!dir) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = make_dirs(dir);
  free(dir);
  if (status == MAPP_OK) return MAPP_OK;
  char *why = strdup(mapp_error_message());
  mapp_error_clear();
  status = mapp_fail(MAPP_ERR_SYSTEM, "cannot create the history %s: %s", path, why ? why : "?");
  free(why);
  return status;
}

/* Inside the open transaction: a mapp history of a schema we know, or an
 * empty database, which a writer makes one and a reader reads as a history
 * of nothing (a first add killed before its tables were committed leaves
 * one). */
static int check_identity(history_db *db, bool write) {
  long long application_id, schema, objects;
  MAPP_TRY(sql_integer(db, "PRAGMA application_id", &application_id));
  MAPP_TRY(sql_integer(db, "PRAGMA user_version", &schema));
  MAPP_TRY(sql_integer(db, "SELECT count(*) FROM sqlite_schema", &objects));
  if (application_id == 0 && objects == 0) {
    if (write) return sql_exec(db, schema_sql, "create the history's tables");
    db->empty = true;
    return MAPP_OK;
  }
  if (application_id != HISTORY_APPLICATION_ID)
    return mapp_fail(MAPP_ERR_INPUT, "%s is not a mapp history: an SQLite database of another application (application_id %lld)",
                     db->path, application_id);
  if (schema > HISTORY_SCHEMA || schema < 1)
    return mapp_fail(MAPP_ERR_INPUT, "%s is a mapp history of schema %lld; this mapp reads schema %d", db->path, schema,
                     HISTORY_SCHEMA);
  return MAPP_OK;
}

/* A writer checks under the write lock (BEGIN IMMEDIATE), so two adds that
 * find the same new file do not both create its tables. */
static int check_file(history_db *db, bool write) {
  MAPP_TRY(sql_exec(db, write ? "BEGIN IMMEDIATE" : "BEGIN", "lock the history"));
  int status = check_identity(db, write);
  if (status == MAPP_OK) return sql_exec(db, "COMMIT", "create the history's tables");
  sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
  return status;
}

int historydb_open(const char *path, bool write, history_db **out) {
  *out = NULL;
  bool memory = strcmp(path, ":memory:") == 0;
  if (!memory && path_is_dir(path)) return mapp_fail(MAPP_ERR_INPUT, "history %s is a folder, not a file", path);
  if (!memory && !write && !path_exists(path))
    return mapp_fail(MAPP_ERR_INPUT, "no history at %s (mapp history add RESULTS makes one)", path);
  if (!memory && write) MAPP_TRY(make_parent(path));
  history_db *db = calloc(1, sizeof *db);
  if (!db || !(db->path = strdup(path))) {
    free(db);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  }
  /* Readers open read-write too (without creating): after a killed add,
   * the first to open the file rolls its journal back, and that writes. */
  int flags = SQLITE_OPEN_READWRITE | (write ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path, &db->sql, flags, NULL);
  int status = rc == SQLITE_OK ? MAPP_OK : sql_fail(db, rc, "open it");
  if (status == MAPP_OK) sqlite3_busy_timeout(db->sql, HISTORY_BUSY_TIMEOUT_MS);
  if (status == MAPP_OK) status = check_file(db, write);
  if (status != MAPP_OK) {
    historydb_close(db);
    return status;
  }
  *out = db;
  return MAPP_OK;
}

void historydb_close(history_db *db) {
  if (!db) return;
  sqlite3_close(db->sql);
  free(db->path);
  free(db);
}

const char *historydb_file(const history_db *db) { return db->path; }

int historydb_records_of(history_db *db, const char *app, json_t **records) {
  *records = json_array();
  if (!*records) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (db->empty) return MAPP_OK;
  sqlite3_stmt *stmt;
  int status = sql_prepare(db, "SELECT record FROM records WHERE app = ?1 ORDER BY id", &stmt, "read records");
  if (status == MAPP_OK && sqlite3_bind_text(stmt, 1, app, -1, SQLITE_TRANSIENT) != SQLITE_OK)
    status = sql_fail(db, SQLITE_ERROR, "read records");
  int rc = SQLITE_DONE;
  while (status == MAPP_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    json_t *r = json_loads((const char *)sqlite3_column_text(stmt, 0), 0, NULL);
    if (r) json_array_append_new(*records, r); /* a record is stored as the JSON it was added as */
  }
  if (status == MAPP_OK && rc != SQLITE_DONE) status = sql_fail(db, rc, "read records");
  sqlite3_finalize(stmt);
  return status;
}

int historydb_dated_revisions(history_db *db, json_t **dated) {
  *dated = json_object();
  if (!*dated) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (db->empty) return MAPP_OK;
  sqlite3_stmt *stmt;
  int status = sql_prepare(db, "SELECT revision FROM revisions WHERE commit_date IS NOT NULL", &stmt, "read revisions");
  int rc = SQLITE_DONE;
  while (status == MAPP_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW)
    json_object_set_new(*dated, (const char *)sqlite3_column_text(stmt, 0), json_true());
  if (status == MAPP_OK && rc != SQLITE_DONE) status = sql_fail(db, rc, "read revisions");
  sqlite3_finalize(stmt);
  return status;
}

/* ---------------------------------------------------------------- records */

char *historydb_config_key(const json_t *r) {
  const char *setting = json_text_or(r, "setting", "");
  const json_t *params = json_object_get(r, "params");
  char *matrix = !setting[0] && json_object_size(params) ? json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  const char *extra = setting[0] ? setting : matrix ? matrix : "";
  char *key = str_printf("%s %s/%s %s %s n%lld t%lld%s%s", json_text_or(r, "app", "?"),
                         json_text_or(r, "variant", "?"), json_text_or(r, "backend", "?"), json_text_or(r, "size", "?"),
                         json_text_or(r, "scaling", "?"),
                         (long long)json_integer_value(json_object_get(r, "ranks")),
                         (long long)json_integer_value(json_object_get(r, "threads")), extra[0] ? " " : "", extra);
  free(matrix);
  return key;
}

/* Two 64-bit hashes of different construction side by side (FNV-1a and a
 * multiply-rotate one): 128 bits make an accidental collision of two
 * records negligible. Not cryptographic: a history trusts its files. */
static void digest_of(const char *text, char hex[33]) {
  uint64_t fnv = 0xcbf29ce484222325ull, mix = 0x9E3779B97F4A7C15ull;
  for (const unsigned char *c = (const unsigned char *)text; *c; ++c) {
    fnv = (fnv ^ *c) * 0x100000001b3ull;
    mix = (mix ^ *c) * 0xff51afd7ed558ccdull;
    mix = (mix << 29) | (mix >> 35);
  }
  mix ^= mix >> 33;
  mix *= 0xc4ceb9fe1a85ec53ull;
  mix ^= mix >> 33;
  snprintf(hex, 33, "%016llx%016llx", (unsigned long long)fnv, (unsigned long long)mix);
}

static void bind_text(sqlite3_stmt *stmt, int column, const char *text) {
  if (text) sqlite3_bind_text(stmt, column, text, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(stmt, column);
}

static void bind_json(sqlite3_stmt *stmt, int column, const json_t *value) {
  char *text = value && !json_is_null(value) ? json_dumps(value, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
  bind_text(stmt, column, text);
  free(text);
}

static const char insert_record_sql[] =
    "INSERT INTO records (digest, config, app, variant, backend, size, scaling, ranks, threads, setting, params,"
    " fom_name, fom_value, exit_code, phases, revision, time, repetition, sweep, compiler, flags, build_type, host,"
    " env, record, added) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,"
    " ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26) ON CONFLICT (digest) DO NOTHING";

/* A missing exit code counts as 0, as mapp compare and the report count it. */
static void bind_record(sqlite3_stmt *stmt, const json_t *r, const char *canonical, const char *key, const char *added) {
  char digest[33];
  digest_of(canonical, digest);
  const json_t *fom = json_object_get(r, "fom"), *value = json_object_get(fom, "value");
  bind_text(stmt, 1, digest);
  bind_text(stmt, 2, key);
  static const char *const texts[] = {"app", "variant", "backend", "size", "scaling"};
  for (int i = 0; i < 5; ++i) bind_text(stmt, 3 + i, json_string_value(json_object_get(r, texts[i])));
  sqlite3_bind_int64(stmt, 8, json_integer_value(json_object_get(r, "ranks")));
  sqlite3_bind_int64(stmt, 9, json_integer_value(json_object_get(r, "threads")));
  bind_text(stmt, 10, json_string_value(json_object_get(r, "setting")));
  bind_json(stmt, 11, json_object_get(r, "params"));
  bind_text(stmt, 12, json_string_value(json_object_get(fom, "name")));
  if (json_is_number(value)) sqlite3_bind_double(stmt, 13, json_number_value(value));
  else sqlite3_bind_null(stmt, 13);
  sqlite3_bind_int64(stmt, 14, json_integer_value(json_object_get(r, "exit_code")));
  bind_json(stmt, 15, json_object_get(r, "phases"));
  bind_text(stmt, 16, json_text_or(r, "git_revision", "unknown"));
  bind_text(stmt, 17, json_string_value(json_object_get(r, "time")));
  if (json_is_integer(json_object_get(r, "repetition")))
    sqlite3_bind_int64(stmt, 18, json_integer_value(json_object_get(r, "repetition")));
  else sqlite3_bind_null(stmt, 18);
  static const char *const provenance[] = {"sweep", "compiler", "flags", "build_type", "host", "env"};
  for (int i = 0; i < 6; ++i) bind_text(stmt, 19 + i, json_string_value(json_object_get(r, provenance[i])));
  bind_text(stmt, 25, canonical);
  bind_text(stmt, 26, added);
}

static int insert_record(history_db *db, sqlite3_stmt *stmt, const json_t *r, const char *added, size_t *new_rows) {
  char *canonical = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
  char *key = historydb_config_key(r);
  if (!canonical || !key) {
    free(canonical);
    free(key);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory storing a record");
  }
  bind_record(stmt, r, canonical, key, added);
  int rc = sqlite3_step(stmt);
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  free(canonical);
  free(key);
  if (rc != SQLITE_DONE) return sql_fail(db, rc, "store a record");
  *new_rows += (size_t)sqlite3_changes(db->sql);
  return MAPP_OK;
}

/* A date the repository gave replaces none, never the other way round. */
static int insert_dates(history_db *db, const json_t *commit_dates) {
  sqlite3_stmt *stmt;
  MAPP_TRY(sql_prepare(db,
                       "INSERT INTO revisions (revision, commit_date) VALUES (?1, ?2) ON CONFLICT (revision) DO "
                       "UPDATE SET commit_date = coalesce(excluded.commit_date, revisions.commit_date)",
                       &stmt, "store revisions"));
  const char *revision;
  const json_t *date;
  int rc = SQLITE_DONE;
  json_object_foreach((json_t *)commit_dates, revision, date) {
    bind_text(stmt, 1, revision);
    bind_text(stmt, 2, json_string_value(date));
    rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    if (rc != SQLITE_DONE) break;
  }
  sqlite3_finalize(stmt);
  return rc == SQLITE_DONE ? MAPP_OK : sql_fail(db, rc, "store revisions");
}

static int insert_all(history_db *db, const json_t *records, const json_t *commit_dates, history_add_tally *tally) {
  MAPP_TRY(insert_dates(db, commit_dates));
  sqlite3_stmt *stmt;
  MAPP_TRY(sql_prepare(db, insert_record_sql, &stmt, "store records"));
  char added[32];
  mapp_utc_now(added, sizeof added);
  int status = MAPP_OK;
  size_t i;
  const json_t *r;
  json_array_foreach(records, i, r) {
    status = insert_record(db, stmt, r, added, &tally->added);
    if (status != MAPP_OK) break;
    ++tally->records;
  }
  sqlite3_finalize(stmt);
  return status;
}

int historydb_add(history_db *db, const json_t *records, const json_t *commit_dates, history_add_tally *tally) {
  *tally = (history_add_tally){0};
  /* IMMEDIATE: take the write lock now, waiting (busy timeout) for another
   * add to finish, rather than failing at the first insert. */
  MAPP_TRY(sql_exec(db, "BEGIN IMMEDIATE", "lock the history"));
  int status = insert_all(db, records, commit_dates, tally);
  if (status == MAPP_OK) status = sql_exec(db, "COMMIT", "commit the records");
  if (status != MAPP_OK) {
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    tally->added = 0;
  }
  return status;
}

/* ---------------------------------------------------------------- time */

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil): timegm is not POSIX. */
static long days_from_civil(long y, long m, long d) {
  y -= m <= 2;
  long era = (y >= 0 ? y : y - 399) / 400;
  long yoe = y - era * 400;
  long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool history_parse_time(const char *text, double *seconds) {
  int y, mo, d, h, mi, used = 0;
  double s;
  if (!text || sscanf(text, "%4d-%2d-%2dT%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &s, &used) != 6) return false;
  const char *zone = text + used;
  double offset = 0.0;
  if (zone[0] == '+' || zone[0] == '-') {
    int oh, om;
    if (sscanf(zone + 1, "%2d:%2d", &oh, &om) != 2) return false;
    offset = (zone[0] == '+' ? 1.0 : -1.0) * (3600.0 * oh + 60.0 * om);
  } else if (zone[0] != 'Z' && zone[0] != '\0') {
    return false;
  }
  *seconds = 86400.0 * (double)days_from_civil(y, mo, d) + 3600.0 * h + 60.0 * mi + s - offset;
  return true;
}

/* ---------------------------------------------------------------- series */

static const char series_sql[] =
    "SELECT r.config, r.app, r.fom_name, r.revision, v.commit_date, r.time, r.fom_value,"
    " r.variant, r.backend, r.size, r.scaling, coalesce(r.setting, ''), r.ranks, r.threads"
    " FROM records r LEFT JOIN revisions v ON v.revision = r.revision"
    " WHERE coalesce(r.exit_code, 0) = 0 AND r.fom_value IS NOT NULL"
    " ORDER BY r.config, r.revision";

/* The repetitions of the revision being read. */
typedef struct {
  double *values;
  size_t count, capacity;
} sample;

static int sample_push(sample *s, double v) {
  if (s->count == s->capacity) {
    size_t grown = s->capacity ? 2 * s->capacity : 16;
    double *values = realloc(s->values, grown * sizeof *values);
    if (!values) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading the history");
    s->values = values;
    s->capacity = grown;
  }
  s->values[s->count++] = v;
  return MAPP_OK;
}

static char *column_text(sqlite3_stmt *stmt, int column) {
  const unsigned char *text = sqlite3_column_text(stmt, column);
  return text ? strdup((const char *)text) : NULL;
}

static void point_free(history_point *p) {
  free(p->revision);
  free(p->commit_date);
  free(p->time);
}

static void series_free(history_series *s) {
  for (size_t i = 0; i < s->count; ++i) point_free(&s->points[i]);
  free(s->points);
  char *texts[] = {s->config, s->app, s->variant, s->backend, s->size, s->scaling, s->setting, s->fom_name};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i) free(texts[i]);
}

void history_series_set_free(history_series_set *set) {
  for (size_t i = 0; i < set->count; ++i) series_free(&set->items[i]);
  free(set->items);
  *set = (history_series_set){0};
}

static int grow(void **items, size_t count, size_t size) {
  /* capacity doubles at powers of two */
  if (count & (count - 1) && count) return MAPP_OK;
  void *grown = realloc(*items, (count ? 2 * count : 1) * size);
  if (!grown) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading the history");
  *items = grown;
  return MAPP_OK;
}

static int new_series(history_series_set *set, sqlite3_stmt *stmt) {
  MAPP_TRY(grow((void **)&set->items, set->count, sizeof *set->items));
  history_series *s = &set->items[set->count++];
  *s = (history_series){.config = column_text(stmt, 0), .app = column_text(stmt, 1), .fom_name = column_text(stmt, 2),
                        .variant = column_text(stmt, 7), .backend = column_text(stmt, 8), .size = column_text(stmt, 9),
                        .scaling = column_text(stmt, 10), .setting = column_text(stmt, 11),
                        .ranks = (long)sqlite3_column_int64(stmt, 12), .threads = (long)sqlite3_column_int64(stmt, 13)};
  /* A record without app, variant, ... has NULL there; the key said "?". */
  char **texts[] = {&s->app, &s->variant, &s->backend, &s->size, &s->scaling, &s->setting};
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i)
    if (!*texts[i]) *texts[i] = strdup("?");
  return s->config && s->setting ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading the history");
}

static int new_point(history_series *s, sqlite3_stmt *stmt) {
  MAPP_TRY(grow((void **)&s->points, s->count, sizeof *s->points));
  history_point *p = &s->points[s->count++];
  *p = (history_point){.revision = column_text(stmt, 3), .commit_date = column_text(stmt, 4)};
  if (!s->fom_name) s->fom_name = column_text(stmt, 2);
  return p->revision ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading the history");
}

/* The earliest run's time of the point (ISO strings of one format sort by time). */
static void note_time(history_point *p, sqlite3_stmt *stmt) {
  const char *t = (const char *)sqlite3_column_text(stmt, 5);
  if (!t || (p->time && strcmp(p->time, t) <= 0)) return;
  free(p->time);
  p->time = strdup(t);
}

static void finish_point(history_point *p, sample *s) {
  p->runs = s->count;
  p->min = p->max = s->values[0];
  for (size_t i = 1; i < s->count; ++i) p->min = fmin(p->min, s->values[i]), p->max = fmax(p->max, s->values[i]);
  p->median = stats_median(s->values, s->count);
  double when = 0.0;
  if (!history_parse_time(p->commit_date, &when)) history_parse_time(p->time, &when);
  p->order = when;
  s->count = 0;
}

static int by_order(const void *pa, const void *pb) {
  const history_point *a = pa, *b = pb;
  if (a->order != b->order) return a->order < b->order ? -1 : 1;
  int c = strcmp(a->time ? a->time : "", b->time ? b->time : "");
  return c ? c : strcmp(a->revision, b->revision);
}

static int read_series(history_db *db, sqlite3_stmt *stmt, history_series_set *set) {
  sample s = {0};
  int status = MAPP_OK, rc;
  history_series *cur = NULL;
  while (status == MAPP_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const char *config = (const char *)sqlite3_column_text(stmt, 0), *revision = (const char *)sqlite3_column_text(stmt, 3);
    bool same_config = cur && strcmp(cur->config, config) == 0;
    bool same_revision = same_config && strcmp(cur->points[cur->count - 1].revision, revision) == 0;
    if (cur && !same_revision) finish_point(&cur->points[cur->count - 1], &s);
    if (!same_config) status = new_series(set, stmt);
    if (status != MAPP_OK) break;
    cur = &set->items[set->count - 1];
    if (!same_revision) status = new_point(cur, stmt);
    if (status == MAPP_OK) status = sample_push(&s, sqlite3_column_double(stmt, 6));
    if (status == MAPP_OK) note_time(&cur->points[cur->count - 1], stmt);
  }
  if (status == MAPP_OK && rc != SQLITE_DONE) status = sql_fail(db, rc, "read the series");
  if (status == MAPP_OK && cur) finish_point(&cur->points[cur->count - 1], &s);
  free(s.values);
  for (size_t i = 0; status == MAPP_OK && i < set->count; ++i)
    qsort(set->items[i].points, set->items[i].count, sizeof(history_point), by_order);
  return status;
}

static int read_totals(history_db *db, history_series_set *set) {
  long long records, revisions;
  MAPP_TRY(sql_integer(db, "SELECT count(*) FROM records", &records));
  MAPP_TRY(sql_integer(db, "SELECT count(DISTINCT revision) FROM records", &revisions));
  set->records = (size_t)records;
  set->revisions = (size_t)revisions;
  return MAPP_OK;
}

int historydb_series(history_db *db, history_series_set *set) {
  *set = (history_series_set){0};
  if (db->empty) return MAPP_OK;
  /* One read transaction: the series and totals of one state of the file,
   * whatever an add is doing meanwhile. */
  MAPP_TRY(sql_exec(db, "BEGIN", "read the history"));
  sqlite3_stmt *stmt;
  int status = sql_prepare(db, series_sql, &stmt, "read the series");
  if (status == MAPP_OK) {
    status = read_series(db, stmt, set);
    sqlite3_finalize(stmt);
  }
  if (status == MAPP_OK) status = read_totals(db, set);
  sqlite3_exec(db->sql, status == MAPP_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
  if (status != MAPP_OK) history_series_set_free(set);
  return status;
}
