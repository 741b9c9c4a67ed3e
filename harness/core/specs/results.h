/* results.jsonl: one record per line, appended as each run ends, so an
 * interrupted sweep keeps every record it finished. */
#ifndef HARNESS_RESULTS_H
#define HARNESS_RESULTS_H

#include <jansson.h>
#include <stdbool.h>

/* Drops an incomplete last line (a sweep killed while writing) so the next
 * append starts on a line of its own; *dropped says whether it did. */
int results_repair_tail(const char *path, bool *dropped);
/* Appends the record as one line with a single write. */
int results_append(const char *path, const json_t *record);
/* Every record of the file as a JSON array (new reference). A line that is
 * not a JSON object is an input error naming the line; an incomplete last
 * line is skipped with a warning. A missing file is an input error. */
int results_load(const char *path, json_t **records);
/* The job keys (see job_key) of the records, as the keys of a JSON object
 * used as a set. */
json_t *results_key_set(const json_t *records);
/* results.jsonl of a results folder, or the argument itself when it names a
 * .jsonl file (malloc'd). */
char *results_file_of(const char *dir_or_file);
/* The machine a record was measured on: its "system" (the environment's
 * `system:`, else the host, as the harness records it), else, in a record
 * older than that field, its "host"; "unknown" when it names neither. */
const char *results_system_of(const json_t *record);

#endif
