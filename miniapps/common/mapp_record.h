/* The result record: one JSON object per run (schema "mapp-result/1",
 * documented in README.md), written to --result and summarised on stdout.
 * The harness appends these records to results.jsonl. */
#ifndef MAPP_RECORD_H
#define MAPP_RECORD_H

#include <jansson.h>
#include <stdio.h>

#include "mapp_backend.h"
#include "mapp_disturb.h"
#include "mapp_timer.h"

#define MAPP_RECORD_SCHEMA "mapp-result/1"
#define MAPP_RECORD_MAX_DIMS 6
#define MAPP_RECORD_MAX_CHECKS 8

typedef struct {
  const char *name; /* "rows", "cols", "instances", ... */
  long global;      /* whole problem */
  long per_rank;    /* largest share of one rank */
} mapp_dim;

/* One self-verification: an invariant or a cross-variant comparison. */
typedef struct {
  const char *name;   /* "max-principle", "finite", ... */
  int passed;         /* 1 pass, 0 fail */
  double value;       /* the measured error or quantity */
  double bound;       /* what it was held to */
} mapp_check;

typedef struct {
  const char *app, *variant, *backend;
  const char *size;      /* the preset, or "custom" */
  const char *scaling;   /* "weak" | "strong" */
  const char *case_name; /* baseline case this run answers, or NULL (no baseline applies) */
  int ranks, threads, gpus;
  /* Threads of the variant's own that compete for cores beside `threads`,
   * per rank (heat tasks' request poller, snapshots' I/O workers): the
   * harness counts them in the cores a run asks for, so a run that
   * oversubscribes itself is marked so rather than blamed on the machine. */
  int helper_threads;
  /* The answer holds the weak problem of this many ranks only (mapp_run's
   * answer_ranks), 0: of all; written only when set. */
  int answer_ranks;
  long steps;
  int ndims;
  mapp_dim dims[MAPP_RECORD_MAX_DIMS];
  mapp_phase_stats phases[MAPP_PHASE_COUNT];
  double wall_s;           /* whole run, max over ranks */
  const char *fom_name;    /* "cell-updates/s" */
  double fom;              /* figure of merit, higher is better */
  double bytes_moved;      /* main-memory bytes the compute phase moved, < 0 unknown */
  int nchecks;
  mapp_check checks[MAPP_RECORD_MAX_CHECKS];
  const char *output;      /* HDF5 answer file or NULL */
  int argc;
  char **argv;             /* the command line, for provenance */
  json_t *extra;           /* app-specific fields merged under "app_data"; borrowed */
  const mapp_gpu_info *gpu; /* the GPU of a CUDA run (with nvcc and architectures), or NULL */
  const mapp_iterations *iterations;   /* the timed phase's iterations ("timing"), or NULL */
  const mapp_disturbance *disturbance; /* what disturbed them, or NULL */
  json_t *machine;                     /* the machine's state (mapp_machine.h), or NULL; borrowed */
} mapp_record;

/* Verification verdict over the record's checks: "pass", "fail" or "none". */
const char *mapp_record_verdict(const mapp_record *rec);
/* Build the JSON object (new reference). Adds host, compiler, flags, git
 * revision, UTC time. NULL on allocation failure. */
json_t *mapp_record_to_json(const mapp_record *rec);
/* Write the record as one JSON line to path. */
int mapp_record_write(const mapp_record *rec, const char *path);
/* One human line: "heat mpi/serial n=4 t=1 tiny: 1.23e+08 cell-updates/s, compute 0.12 s, verify pass" */
void mapp_record_summary(const mapp_record *rec, FILE *out);
/* The command line joined with spaces (malloc'd), for provenance. */
char *mapp_command_line(int argc, char **argv);
/* ISO 8601 UTC time of now into buf. */
void mapp_utc_now(char *buf, size_t len);

#endif
