/* A mini-app beside the production system it stands for: the report's
 * table of each timed phase of a mini-app's configuration over the same
 * phase of its peer (a program whose records say peer_of: APP, run on the
 * same problem by the same sweep), as a ratio of medians with its 95 %
 * interval and both sides' verdicts. */
#ifndef HARNESS_PEERS_H
#define HARNESS_PEERS_H

#include "doc.h"
#include "stats.h"

/* The section for the groups of a report (nothing when no configuration
 * has both sides). */
int peers_write(doc *d, const group_table *t);

#endif
