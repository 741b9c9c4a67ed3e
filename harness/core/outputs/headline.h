/* What each technique buys on this machine: the report opens with one
 * ratio per mini-app, its technique's variant over the variant it
 * replaces, on one rank (the figure of merit is higher-is-better, so a
 * ratio above 1 is a gain), with the ratio's 95 % interval (the Moses
 * interval of perfstats.h) and the verdicts of both configurations
 * (verdict.h). A ratio whose interval holds 1, or one of whose
 * configurations is too short or disturbed, is said to be beyond what this
 * machine can tell. */
#ifndef HARNESS_HEADLINE_H
#define HARNESS_HEADLINE_H

#include "doc.h"
#include "stats.h"

/* The section "What each technique buys here" for the groups of a report
 * (nothing when no technique has both of its configurations), then each
 * mini-app against its peer where the results hold both (peers.h). */
int headline_write(doc *d, const group_table *t);

#endif
