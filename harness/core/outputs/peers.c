/* The report's comparison of each mini-app with its peer (peers.h). */
#include "peers.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "perfstats.h"

/* The peer's group of g's configuration: the same variant (the peer's
 * peer_variant, where it names its modes otherwise), backend, rank and
 * thread counts, size, scaling and setting, from a program whose records
 * say it is a peer of g's app. */
static const result_group *peer_of_group(const group_table *t, const result_group *g) {
  for (size_t i = 0; i < t->count; ++i) {
    const result_group *p = &t->items[i];
    const char *beside = p->peer_variant ? p->peer_variant : p->variant;
    if (strcmp(p->peer_of, g->app) || strcmp(beside, g->variant) || strcmp(p->backend, g->backend) ||
        strcmp(p->size, g->size) || strcmp(p->scaling, g->scaling) || strcmp(p->setting, g->setting) ||
        p->ranks != g->ranks || p->threads != g->threads)
      continue;
    return p->timed >= 2 ? p : NULL;
  }
  return NULL;
}

/* A timed phase's seconds of every timed run, as rates (1/s: higher is
 * better, as perf_compare takes them); false when a run lacks it. */
static bool phase_rates(const result_group *g, const char *phase, double *rates) {
  for (size_t i = 0; i < g->timed; ++i) {
    const json_t *v = json_object_get(json_object_get(g->records[i], "app_data"), phase);
    double s = json_number_value(v);
    if (!json_is_number(v) || !(s > 0)) return false;
    rates[i] = 1.0 / s;
  }
  return true;
}

/* The phases a pair is compared on where both programs time them; a pair
 * that has none of them is compared on its figures of merit (the same
 * work over each one's timed phase: per step for stencil). */
static const char *const compared_phases[] = {"forward_s", "adjoint_s"};

static void write_ratio_cells(doc *d, const perf_change *c) {
  doc_cell(d, "**%.2f**", c->ratio);
  if (c->bounded) doc_cell(d, "[%.2f, %.2f]", c->low, c->high);
  else doc_cell(d, "-");
}

/* What the ratio (mini-app time over the peer's) says: no slower when the
 * whole interval is at most 1. */
static const char *reading(const perf_change *c, bool trusted) {
  if (!c->bounded) return "too few runs for an interval";
  if (!trusted) return "cannot tell (a side too short or disturbed)";
  if (c->high <= 1.0) return "no slower";
  if (c->low > 1.0) return "SLOWER";
  return "cannot tell: the interval holds 1";
}

/* One row: the app's time over the peer's from rates (higher is better). */
static int write_rates(doc *d, const result_group *g, const result_group *p, const double *mine,
                       const double *theirs, const char *name) {
  perf_change c;
  /* old = the mini-app's rates, new = the peer's: median(peer rate) /
   * median(app rate) = the app's time over the peer's. */
  MAPP_TRY(perf_compare(mine, g->timed, theirs, p->timed, 0.05, &c));
  bool trusted = verdict_figures_trusted(g->verdict.kind) && verdict_figures_trusted(p->verdict.kind);
  doc_cell(d, "%s", g->app);
  doc_cell(d, "%s", p->app);
  doc_cell(d, "%s/%s%s%s, %s %s%s%s, %ld rank%s, %ld thread%s", g->variant, g->backend,
           strcmp(p->variant, g->variant) ? " beside " : "", strcmp(p->variant, g->variant) ? p->variant : "",
           g->size, g->scaling, g->setting[0] ? ", " : "", g->setting, g->ranks, g->ranks == 1 ? "" : "s",
           g->threads, g->threads == 1 ? "" : "s");
  doc_cell(d, "%s", name);
  write_ratio_cells(d, &c);
  doc_cell(d, "%zu + %zu", g->timed, p->timed);
  doc_cell(d, "%s / %s", verdict_name(g->verdict.kind), verdict_name(p->verdict.kind));
  doc_cell(d, "%s", reading(&c, trusted));
  doc_row_end(d);
  return MAPP_OK;
}

/* The pair on each phase both time (compared_phases), else on the figure
 * of merit. */
static int write_pair(doc *d, const result_group *g, const result_group *p) {
  double *mine = malloc(g->timed * sizeof *mine), *theirs = malloc(p->timed * sizeof *theirs);
  int status = mine && theirs ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "out of memory comparing with a peer");
  bool any = false;
  for (size_t k = 0; status == MAPP_OK && k < sizeof compared_phases / sizeof compared_phases[0]; ++k) {
    if (!phase_rates(g, compared_phases[k], mine) || !phase_rates(p, compared_phases[k], theirs)) continue;
    any = true;
    status = write_rates(d, g, p, mine, theirs, compared_phases[k]);
  }
  if (status == MAPP_OK && !any) status = write_rates(d, g, p, g->foms, p->foms, "timed phase (figure of merit)");
  free(mine), free(theirs);
  return status;
}

static void write_header(doc *d) {
  static const char *const columns[] = {"app",  "peer", "configuration",        "phase", "time ratio (app / peer)",
                                        "95 % interval", "runs", "verdicts (app / peer)", "reading"};
  doc_heading(d, 2, "Against the production system each mini-app stands for");
  doc_table(d, "llllrlrll");
  for (size_t i = 0; i < sizeof columns / sizeof columns[0]; ++i) doc_cell(d, "%s", columns[i]);
  doc_row_end(d);
}

int peers_write(doc *d, const group_table *t) {
  bool any = false;
  for (size_t i = 0; i < t->count; ++i) {
    const result_group *g = &t->items[i], *p;
    if (g->peer_of[0] || g->timed < 2 || !(p = peer_of_group(t, g))) continue;
    if (!any) write_header(d);
    any = true;
    MAPP_TRY(write_pair(d, g, p));
  }
  if (!any) return MAPP_OK;
  doc_table_end(d);
  doc_para(d, "Each row: the mini-app's time for a timed phase over its peer's on the same problem (the peer's "
              "program keeps the mini-app contract; docs/contract.md), the ratio of medians with its 95 %% Moses "
              "interval; at most 1 means the mini-app is no slower. A ratio is read only where both sides' figures "
              "can be trusted (neither too short nor disturbed).");
  return MAPP_OK;
}
