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

#include "apps.h"
#include "doc.h"
#include "env.h"
#include "stats.h"
#include "strv.h"

/* Each app's headline pair comes from the app itself: its --list declares
 * it (apps.h, app_headline), and no table here names an app. */
typedef struct {
  app_info *apps;   /* the results' apps whose --list was read, sorted by name */
  size_t count;
  strv unasked;     /* "APP (why)": apps whose --list could not be read */
  strv undeclared;  /* apps whose --list declares no headline */
} headline_sources;

/* Asks each app of the groups (not a peer: peers.h compares those) for
 * its --list on env's app path. An app whose --list fails is noted in
 * unasked, not an error: results from another machine still report. */
int headline_sources_query(const group_table *t, const harness_env *env, headline_sources *out);
void headline_sources_free(headline_sources *s);

/* The section "What each technique buys here" for the groups of a report,
 * one row per app whose headline pair the results hold, in the apps'
 * order (nothing when none has both of its configurations; under the
 * table, the apps that declare no headline or could not be asked), then
 * each mini-app against its peer where the results hold both (peers.h). */
int headline_write(doc *d, const group_table *t, const headline_sources *sources);

#endif
