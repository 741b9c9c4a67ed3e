/* The history's SQLite storage (historydb.h says why SQLite). */
#include "historydb.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "historydb_internal.h"
#include "jsonutil.h"
#include "mapp_error.h"
#include "mapp_record.h"
#include "results.h"

enum {
  HISTORY_APPLICATION_ID = 0x6d617070, /* "mapp" in the file header */
  HISTORY_SCHEMA = 2,                  /* PRAGMA user_version */
  /* A writer waits this long for another's transaction (a large add takes
   * seconds) before giving up as a system failure. */
  HISTORY_BUSY_TIMEOUT_MS = 120000,
};

/* The tables of schema 1, as every mapp before schema 2 made them. A new
 * history is made at schema 1 and migrated (below), so a new file and an
 * old one migrated have the same tables.
 * digest: of the record's canonical JSON, the same record is stored once.
 * config: historydb_config_key; the columns after it are the key's parts
 * and what a user filters or plots by, the whole record is kept in
 * `record` for everything else (phases, problem, app_data). */
static const char schema_v1_sql[] =
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
    "PRAGMA user_version = 1;\n";

/* migrations[k] turns schema k + 1 into k + 2, inside the transaction that
 * opens the file: a kill leaves the file at the schema it had. */
static const char *const migrations[] = {
    /* 2: a system in every key. A record of schema 1 has no "system" of its
     * own; its host is its system (results_system_of), appended to its key
     * as historydb_config_key appends it. */
    "ALTER TABLE records ADD COLUMN system TEXT NOT NULL DEFAULT 'unknown';\n"
    "UPDATE records SET system = coalesce(nullif(host, ''), 'unknown');\n"
    "UPDATE records SET config = config || ' @' || system;\n",
};
_Static_assert(sizeof migrations / sizeof migrations[0] == HISTORY_SCHEMA - 1, "a migration to every schema");

/* ---------------------------------------------------------------- errors */

/* Not SQLite or corrupt: the file given is wrong (input). Anything else
 * (cannot create, read-only, disk full, locked past the timeout): the
 * system failed on a valid request. */
int historydb_sql_fail(const history_db *db, int rc, const char *what) {
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

int historydb_sql_exec(const history_db *db, const char *sql, const char *what) {
  int rc = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? MAPP_OK : historydb_sql_fail(db, rc, what);
}

int historydb_sql_prepare(const history_db *db, const char *sql, sqlite3_stmt **stmt, const char *what) {
  int rc = sqlite3_prepare_v2(db->sql, sql, -1, stmt, NULL);
  return rc == SQLITE_OK ? MAPP_OK : historydb_sql_fail(db, rc, what);
}

int historydb_sql_integer(const history_db *db, const char *sql, long long *value) {
  sqlite3_stmt *stmt;
  MAPP_TRY(historydb_sql_prepare(db, sql, &stmt, "read the file's header"));
  int rc = sqlite3_step(stmt);
  *value = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
  sqlite3_finalize(stmt);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? MAPP_OK : historydb_sql_fail(db, rc, "read the file's header");
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

/* From schema `from` to HISTORY_SCHEMA, inside the open transaction. */
static int migrate(history_db *db, long long from) {
  char what[64], version[48];
  for (long long v = from; v < HISTORY_SCHEMA; ++v) {
    snprintf(what, sizeof what, "migrate the history from schema %lld to %lld", v, v + 1);
    MAPP_TRY(historydb_sql_exec(db, migrations[v - 1], what));
  }
  snprintf(version, sizeof version, "PRAGMA user_version = %d", HISTORY_SCHEMA);
  return historydb_sql_exec(db, version, "write the history's schema version");
}

/* What the open transaction may do to the file it checks. */
typedef struct {
  bool create;  /* make an empty database a history (a writer) */
  bool migrate; /* raise an older schema to HISTORY_SCHEMA (under the write lock) */
  long long older; /* out: the older schema the file has (0: none), migrated when `migrate` */
} identity_check;

/* Inside the open transaction: a mapp history of a schema we know, or an
 * empty database, which a writer makes one and a reader reads as a history
 * of nothing (a first add killed before its tables were committed leaves
 * one). */
static int check_identity(history_db *db, identity_check *c) {
  long long application_id, schema, objects;
  MAPP_TRY(historydb_sql_integer(db, "PRAGMA application_id", &application_id));
  MAPP_TRY(historydb_sql_integer(db, "PRAGMA user_version", &schema));
  MAPP_TRY(historydb_sql_integer(db, "SELECT count(*) FROM sqlite_schema", &objects));
  if (application_id == 0 && objects == 0) {
    db->empty = !c->create;
    if (!c->create) return MAPP_OK;
    MAPP_TRY(historydb_sql_exec(db, schema_v1_sql, "create the history's tables"));
    return migrate(db, 1);
  }
  if (application_id != HISTORY_APPLICATION_ID)
    return mapp_fail(MAPP_ERR_INPUT, "%s is not a mapp history: an SQLite database of another application (application_id %lld)",
                     db->path, application_id);
  if (schema > HISTORY_SCHEMA || schema < 1)
    return mapp_fail(MAPP_ERR_INPUT, "%s is a mapp history of schema %lld; this mapp reads schema %d or older", db->path,
                     schema, HISTORY_SCHEMA);
  c->older = schema < HISTORY_SCHEMA ? schema : 0;
  return c->older && c->migrate ? migrate(db, schema) : MAPP_OK;
}

/* One check in its own transaction: under the write lock (BEGIN IMMEDIATE)
 * when it may write, so two adds that find the same new file do not both
 * create its tables, nor two openers of an old one both migrate it. */
static int check_locked(history_db *db, identity_check *c) {
  bool writes = c->create || c->migrate;
  MAPP_TRY(historydb_sql_exec(db, writes ? "BEGIN IMMEDIATE" : "BEGIN", "lock the history"));
  int status = check_identity(db, c);
  if (status == MAPP_OK) return historydb_sql_exec(db, "COMMIT", "create or migrate the history's tables");
  sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
  return status;
}

/* A history of an older schema is migrated once, by whoever opens it first
 * (a reader too: readers open the file read-write), in one transaction. */
static int check_file(history_db *db, bool write) {
  identity_check c = {.create = write, .migrate = write};
  MAPP_TRY(check_locked(db, &c));
  if (c.older && !write) {
    c = (identity_check){.migrate = true};
    MAPP_TRY(check_locked(db, &c)); /* another may have migrated it meanwhile: then c.older is 0 */
  }
  long long records = 0;
  if (c.older) MAPP_TRY(historydb_sql_integer(db, "SELECT count(*) FROM records", &records));
  if (c.older)
    fprintf(stderr, "mapp: history %s migrated from schema %lld to %d: its %lld records kept, each with its host as its "
                    "system\n", db->path, c.older, HISTORY_SCHEMA, records);
  return MAPP_OK;
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
  int status = rc == SQLITE_OK ? MAPP_OK : historydb_sql_fail(db, rc, "open it");
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
  int status = historydb_sql_prepare(db, "SELECT record FROM records WHERE app = ?1 ORDER BY id", &stmt, "read records");
  if (status == MAPP_OK && sqlite3_bind_text(stmt, 1, app, -1, SQLITE_TRANSIENT) != SQLITE_OK)
    status = historydb_sql_fail(db, SQLITE_ERROR, "read records");
  int rc = SQLITE_DONE;
  while (status == MAPP_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    json_t *r = json_loads((const char *)sqlite3_column_text(stmt, 0), 0, NULL);
    if (r) json_array_append_new(*records, r); /* a record is stored as the JSON it was added as */
  }
  if (status == MAPP_OK && rc != SQLITE_DONE) status = historydb_sql_fail(db, rc, "read records");
  sqlite3_finalize(stmt);
  return status;
}

int historydb_dated_revisions(history_db *db, json_t **dated) {
  *dated = json_object();
  if (!*dated) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (db->empty) return MAPP_OK;
  sqlite3_stmt *stmt;
  int status = historydb_sql_prepare(db, "SELECT revision FROM revisions WHERE commit_date IS NOT NULL", &stmt, "read revisions");
  int rc = SQLITE_DONE;
  while (status == MAPP_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW)
    json_object_set_new(*dated, (const char *)sqlite3_column_text(stmt, 0), json_true());
  if (status == MAPP_OK && rc != SQLITE_DONE) status = historydb_sql_fail(db, rc, "read revisions");
  sqlite3_finalize(stmt);
  return status;
}

/* ---------------------------------------------------------------- records */

char *historydb_config_name(const json_t *r) {
  const char *setting = json_text_or(r, "setting", "");
  const json_t *params = json_object_get(r, "params");
  char *matrix = !setting[0] && json_object_size(params) ? json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  const char *extra = setting[0] ? setting : matrix ? matrix : "";
  char *name = str_printf("%s %s/%s %s %s n%lld t%lld%s%s", json_text_or(r, "app", "?"),
                          json_text_or(r, "variant", "?"), json_text_or(r, "backend", "?"), json_text_or(r, "size", "?"),
                          json_text_or(r, "scaling", "?"),
                          (long long)json_integer_value(json_object_get(r, "ranks")),
                          (long long)json_integer_value(json_object_get(r, "threads")), extra[0] ? " " : "", extra);
  free(matrix);
  return name;
}

char *historydb_config_key(const json_t *r) {
  char *name = historydb_config_name(r);
  char *key = name ? str_printf("%s @%s", name, results_system_of(r)) : NULL;
  free(name);
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
    " env, record, added, system) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
    " ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27) ON CONFLICT (digest) DO NOTHING";

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
  bind_text(stmt, 27, results_system_of(r));
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
  if (rc != SQLITE_DONE) return historydb_sql_fail(db, rc, "store a record");
  *new_rows += (size_t)sqlite3_changes(db->sql);
  return MAPP_OK;
}

/* A date the repository gave replaces none, never the other way round. */
static int insert_dates(history_db *db, const json_t *commit_dates) {
  sqlite3_stmt *stmt;
  MAPP_TRY(historydb_sql_prepare(db,
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
  return rc == SQLITE_DONE ? MAPP_OK : historydb_sql_fail(db, rc, "store revisions");
}

static int insert_all(history_db *db, const json_t *records, const json_t *commit_dates, history_add_tally *tally) {
  MAPP_TRY(insert_dates(db, commit_dates));
  sqlite3_stmt *stmt;
  MAPP_TRY(historydb_sql_prepare(db, insert_record_sql, &stmt, "store records"));
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
  MAPP_TRY(historydb_sql_exec(db, "BEGIN IMMEDIATE", "lock the history"));
  int status = insert_all(db, records, commit_dates, tally);
  if (status == MAPP_OK) status = historydb_sql_exec(db, "COMMIT", "commit the records");
  if (status != MAPP_OK) {
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    tally->added = 0;
  }
  return status;
}

