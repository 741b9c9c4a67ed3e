/* Speedup references: the variant/backend pairs speedup is measured
 * against, in order of preference. Apps of one sweep need not share a
 * variant (heat has `mpi`, crm has `percrm`), so each app takes the first
 * pair of the list that its own results contain (stats_app_reference). */
#ifndef HARNESS_REFERENCE_H
#define HARNESS_REFERENCE_H

#include <stddef.h>

typedef struct {
  char *variant, *backend;
} speedup_ref;

typedef struct {
  speedup_ref *items; /* in order of preference */
  size_t count;       /* 0: no reference (no speedup figure or column) */
} speedup_refs;

int speedup_refs_add(speedup_refs *refs, const char *variant, const char *backend);
/* Appends the pairs of "VARIANT/BACKEND[,VARIANT/BACKEND...]" (the
 * --reference flag); a malformed pair is an input error. */
int speedup_refs_parse(const char *text, speedup_refs *refs);
/* "mpi/serial, percrm/serial" (malloc'd; "" when empty; NULL when out of memory). */
char *speedup_refs_format(const speedup_refs *refs);
/* "percrm/serial" into buf; "" for NULL (no reference). */
void speedup_ref_text(const speedup_ref *ref, char *buf, size_t len);
void speedup_refs_free(speedup_refs *refs);
/* Appends each distinct "reference" ("VARIANT/BACKEND", the app's first
 * variant, written by the sweep) of a JSON array of records: the default
 * when neither --reference nor the spec names one. */
int speedup_refs_from_records(const void *records, speedup_refs *refs);

#endif
