#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "job.h"
#include "mapp_error.h"

int results_repair_tail(const char *path, bool *dropped) {
  *dropped = false;
  if (!path_exists(path)) return MAPP_OK;
  char *text;
  MAPP_TRY(read_text_file(path, &text));
  size_t len = strlen(text);
  int status = MAPP_OK;
  if (len && text[len - 1] != '\n') {
    char *last_newline = strrchr(text, '\n');
    off_t keep = last_newline ? (off_t)(last_newline - text + 1) : 0;
    if (truncate(path, keep) != 0)
      status = mapp_fail(MAPP_ERR_INPUT, "cannot repair %s: %s", path, strerror(errno));
    *dropped = status == MAPP_OK;
  }
  free(text);
  return status;
}

int results_append(const char *path, const json_t *record) {
  char *line = json_dumps(record, JSON_COMPACT);
  if (!line) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory serialising a record");
  size_t len = strlen(line);
  line[len] = '\n'; /* json_dumps' terminator becomes the line end */
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0666);
  bool ok = fd >= 0 && write(fd, line, len + 1) == (ssize_t)(len + 1);
  if (fd >= 0 && close(fd) != 0) ok = false;
  free(line);
  return ok ? MAPP_OK : mapp_fail(MAPP_ERR_INPUT, "cannot append to %s: %s", path, strerror(errno));
}

/* Parses one complete line; NULL when it is not a JSON object. */
static json_t *parse_line(const char *line) {
  json_error_t err;
  json_t *record = json_loads(line, 0, &err);
  if (record && !json_is_object(record)) {
    json_decref(record);
    record = NULL;
  }
  return record;
}

static int parse_lines(const char *path, char *text, json_t *records) {
  long number = 0;
  for (char *line = text; *line;) {
    char *end = strchr(line, '\n');
    ++number;
    if (!end) {
      fprintf(stderr, "mapp: warning: %s:%ld: skipping an incomplete last record\n", path, number);
      break;
    }
    *end = '\0';
    if (line[strspn(line, " \t\r")] != '\0') {
      json_t *record = parse_line(line);
      if (!record) return mapp_fail(MAPP_ERR_INPUT, "%s:%ld: not a JSON record", path, number);
      json_array_append_new(records, record);
    }
    line = end + 1;
  }
  return MAPP_OK;
}

int results_load(const char *path, json_t **records) {
  char *text;
  *records = NULL;
  MAPP_TRY(read_text_file(path, &text));
  json_t *all = json_array();
  int status = all ? parse_lines(path, text, all) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(text);
  if (status != MAPP_OK) {
    json_decref(all);
    return status;
  }
  *records = all;
  return MAPP_OK;
}

json_t *results_key_set(const json_t *records) {
  json_t *set = json_object();
  size_t i;
  const json_t *record;
  json_array_foreach(records, i, record) {
    char *key = job_key_of_record(record);
    if (key) json_object_set_new(set, key, json_true());
    free(key);
  }
  return set;
}

char *results_file_of(const char *dir_or_file) {
  size_t len = strlen(dir_or_file);
  if (len > 6 && strcmp(dir_or_file + len - 6, ".jsonl") == 0 && !path_is_dir(dir_or_file))
    return strdup(dir_or_file);
  return path_join(dir_or_file, "results.jsonl");
}

const char *results_system_of(const json_t *record) {
  const char *system = json_string_value(json_object_get(record, "system"));
  if (system && system[0]) return system;
  const char *host = json_string_value(json_object_get(record, "host"));
  return host && host[0] ? host : "unknown";
}
