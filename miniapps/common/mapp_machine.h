/* The state of the machine a run timed on, as Google Benchmark's context
 * reports it and further: CPU model and count, clock, frequency governor,
 * boost, SMT, hypervisor, kernel and transparent huge pages. Read from
 * /proc and /sys on the calling rank's node; what Linux does not show is
 * null. Warnings name the states known to distort timings. */
#ifndef MAPP_MACHINE_H
#define MAPP_MACHINE_H

#include <jansson.h>
#include <stdio.h>

/* The record's "machine" object (new reference; NULL when out of memory),
 * with "warnings": the states that distort timings, one sentence each. */
json_t *mapp_machine_json(void);
/* Prints each warning of machine as "PROG: warning: ..." on out. */
void mapp_machine_warn(const json_t *machine, const char *prog, FILE *out);

#endif
