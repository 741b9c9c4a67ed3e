/* What historydb.c (the file, its schema, adding) and historydb_series.c
 * (reading the series) share; no other file includes it. */
#ifndef HARNESS_HISTORYDB_INTERNAL_H
#define HARNESS_HISTORYDB_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>

#include "historydb.h"

struct history_db {
  sqlite3 *sql;
  char *path;
  bool empty; /* opened for reading before any add made its tables: a history of nothing */
};

/* A failed SQLite call (rc) while doing `what`, as a mapp error: a file
 * that is not SQLite or is corrupt is input, anything else the system's. */
int historydb_sql_fail(const history_db *db, int rc, const char *what);
int historydb_sql_exec(const history_db *db, const char *sql, const char *what);
int historydb_sql_prepare(const history_db *db, const char *sql, sqlite3_stmt **stmt, const char *what);
/* A query's one integer ("PRAGMA user_version"). */
int historydb_sql_integer(const history_db *db, const char *sql, long long *value);

#endif
