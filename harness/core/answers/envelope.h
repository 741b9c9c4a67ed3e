/* The `envelope` tolerance model: the batched-CRM report's three-way test.
 *
 * A chaotic model's answer moves with any change of rounding, so an exact
 * or fixed-bound comparison cannot tell a refactoring from a bug. Two
 * builds of the reference, -O0 and -O3, differ only by rounding; their
 * per-field difference is the envelope of "rounding-only" change. A
 * candidate passes a field when its difference from the -O0 answer is at
 * most `multiple` times that envelope. Where the two builds agree exactly
 * (envelope 0) a stated floor stands in for it, so a candidate is not
 * held to bit-for-bit by accident.
 *
 * Differences are relative 2-norms over the whole field:
 *   envelope   = ||O3 - O0|| / ||O0||
 *   difference = ||cand - O0|| / ||O0||
 *   pass      <=> difference <= multiple * max(envelope, floor)
 * (absolute norms when ||O0|| = 0). Pure functions: no I/O, no globals. */
#ifndef MAPP_ENVELOPE_H
#define MAPP_ENVELOPE_H

#include <stddef.h>

#define MAPP_ENVELOPE_MULTIPLE 2.0 /* the "at most twice the envelope" */
#define MAPP_ENVELOPE_FLOOR 1e-13  /* relative: a few hundred ulps of a 2-norm */

typedef struct {
  double envelope;   /* ||O3 - O0|| / ||O0|| */
  double difference; /* ||cand - O0|| / ||O0||; +inf for a non-finite candidate */
  double bound;      /* multiple * max(envelope, floor) */
  int passed;        /* 1 when difference <= bound */
  size_t worst;      /* index of the largest |cand - O0| (where it failed) */
} mapp_envelope_result;

/* ||x - ref|| / ||ref|| (||x - ref|| when ref is all zeros), overflow-safe
 * (scaled sums of squares); +inf when x holds a non-finite value. */
double mapp_relative_l2(const double *x, const double *ref, size_t n);

/* The check of one field of n values. Input error (MAPP_ERR_INPUT, with a
 * message) for n = 0, multiple <= 0, floor < 0 or a non-finite value in
 * either reference; a failing candidate is not an error: see out->passed. */
int mapp_envelope_check(const double *ref_o0, const double *ref_o3, const double *cand, size_t n,
                        double multiple, double floor, mapp_envelope_result *out);

#endif
