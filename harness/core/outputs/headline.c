/* The report's headline ratios (headline.h). */
#include "headline.h"

#include <math.h>
#include <string.h>

#include "mapp_error.h"
#include "peers.h"
#include "perfstats.h"

/* Each mini-app's technique against what it replaces, as the seeds pose
 * it, and the fewest ranks at which the technique is what it claims to be:
 * heat's tasks overlap one rank's blocks with its neighbours' halo
 * messages (the wavefront across ranks), which one rank does not have; the
 * others' techniques act within a rank (see each app's README). */
typedef struct {
  const char *app, *technique;
  const char *variant, *backend;         /* the technique */
  const char *ref_variant, *ref_backend; /* what it replaces */
  long min_ranks;
} headline_def;

static const headline_def headlines[] = {
    {"stencil", "orchestrated program over eager stencils", "build-and-run", "serial", "eager", "serial", 1},
    {"subgraph", "subgraph replay over eager launches", "subgraph", "serial", "eager", "serial", 1},
    {"crm", "batched CRMs over one CRM at a time", "batched", "serial", "percrm", "serial", 1},
    {"snapshots", "snapshots streamed over kept in memory", "stream", "serial", "memory", "serial", 1},
    {"heat", "tasks over MPI-only", "tasks", "omp", "mpi", "serial", 2},
};

/* A 1-thread group of variant/backend on at least the technique's ranks. */
static bool is_candidate(const result_group *g, const headline_def *h, const char *variant, const char *backend) {
  return !strcmp(g->app, h->app) && !strcmp(g->variant, variant) && !strcmp(g->backend, backend) &&
         g->ranks >= h->min_ranks && g->threads == 1 && g->timed >= 2;
}

static bool same_configuration(const result_group *a, const result_group *b) {
  return !strcmp(a->size, b->size) && !strcmp(a->scaling, b->scaling) && !strcmp(a->setting, b->setting) &&
         a->ranks == b->ranks;
}

/* The technique's and its reference's groups of one size, scaling, setting
 * and rank count: of the pairs the results hold, the one with the most runs
 * on its poorer side (a sweep asks for its headline pairs' precision with
 * `repetitions: auto`), then the one on fewer ranks. */
static void find_pair(const group_table *t, const headline_def *h, const result_group **tech,
                      const result_group **ref) {
  *tech = *ref = NULL;
  size_t best = 0;
  for (size_t i = 0; i < t->count; ++i) {
    const result_group *a = &t->items[i];
    if (!is_candidate(a, h, h->variant, h->backend)) continue;
    for (size_t j = 0; j < t->count; ++j) {
      const result_group *b = &t->items[j];
      if (!is_candidate(b, h, h->ref_variant, h->ref_backend) || !same_configuration(a, b)) continue;
      size_t runs = a->timed < b->timed ? a->timed : b->timed;
      if (runs > best || (runs == best && *tech && a->ranks < (*tech)->ranks)) best = runs, *tech = a, *ref = b;
    }
  }
}

/* The less trustworthy of two verdicts: too-short, disturbed, oversubscribed, noisy, stable. */
static const result_group *worse(const result_group *a, const result_group *b) {
  static const verdict_kind order[] = {VERDICT_TOO_SHORT, VERDICT_DISTURBED, VERDICT_OVERSUBSCRIBED, VERDICT_NOISY,
                                       VERDICT_STABLE};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; ++i) {
    if (a->verdict.kind == order[i]) return a;
    if (b->verdict.kind == order[i]) return b;
  }
  return a;
}

/* What the ratio says, in words, into text: a noisy side widens the
 * interval, which already says so; a too-short or disturbed one makes the
 * figures themselves untrustworthy, whatever the interval. */
static void reading(const perf_change *c, const result_group *weakest, char *text, size_t len) {
  if (!c->bounded) snprintf(text, len, "this machine cannot tell: too few repetitions for a 95 %% interval");
  else if (!verdict_figures_trusted(weakest->verdict.kind)) {
    char because[320];
    verdict_explain(&weakest->verdict, VERDICT_DEFAULT_PRECISION, because, sizeof because);
    const char *who = weakest->verdict.kind == VERDICT_OVERSUBSCRIBED ? "too few cores here for it"
                                                                       : "this machine cannot tell";
    snprintf(text, len, "%s (%s/%s %s)", who, weakest->variant, weakest->backend, because);
  } else if (c->low > 1.0) snprintf(text, len, "a gain of %.0f-%.0f %%", 100 * (c->low - 1), 100 * (c->high - 1));
  else if (c->high < 1.0) snprintf(text, len, "a loss of %.0f-%.0f %%", 100 * (1 - c->high), 100 * (1 - c->low));
  else snprintf(text, len, "this machine cannot tell: the interval holds 1");
}

static int write_row(doc *d, const headline_def *h, const result_group *tech, const result_group *ref) {
  perf_change c;
  MAPP_TRY(perf_compare(ref->foms, ref->timed, tech->foms, tech->timed, 0.05, &c));
  const result_group *weakest = worse(tech, ref);
  char interval[64] = "-", text[512];
  if (c.bounded) snprintf(interval, sizeof interval, "[%.2f, %.2f]", c.low, c.high);
  reading(&c, weakest, text, sizeof text);
  doc_cell(d, "%s", h->app);
  doc_cell(d, "%s", h->technique);
  doc_cell(d, "%s/%s over %s/%s, %s %s%s%s, %ld rank%s", h->variant, h->backend, h->ref_variant, h->ref_backend,
           tech->size, tech->scaling, tech->setting[0] ? " " : "", tech->setting, tech->ranks,
           tech->ranks == 1 ? "" : "s");
  doc_cell(d, "**%.2fx**", c.ratio);
  doc_cell(d, "%s", interval);
  doc_cell(d, "%zu + %zu", tech->timed, ref->timed);
  doc_cell(d, "%s", verdict_name(weakest->verdict.kind));
  doc_cell(d, "%s", text);
  doc_row_end(d);
  return MAPP_OK;
}

static void write_header(doc *d) {
  static const char *const columns[] = {"app", "technique", "configurations", "ratio of medians", "95 % interval",
                                        "runs", "verdict (weaker side)", "reading"};
  doc_heading(d, 2, "What each technique buys here");
  doc_table(d, "lllrlrll");
  for (size_t i = 0; i < sizeof columns / sizeof columns[0]; ++i) doc_cell(d, "%s", columns[i]);
  doc_row_end(d);
}

static int techniques_write(doc *d, const group_table *t) {
  bool any = false;
  for (size_t i = 0; i < sizeof headlines / sizeof headlines[0]; ++i) {
    const headline_def *h = &headlines[i];
    const result_group *tech, *ref;
    find_pair(t, h, &tech, &ref);
    if (!ref) continue;
    if (!any) write_header(d);
    any = true;
    MAPP_TRY(write_row(d, h, tech, ref));
  }
  if (!any) return MAPP_OK;
  doc_table_end(d);
  doc_para(d, "Figures of merit are higher-is-better: a ratio above 1 is what the technique buys on this machine. "
              "The interval is the Moses interval of the ratio (the one the Mann-Whitney U test inverts); the "
              "verdict is the weaker of the two configurations' (stable, noisy, too-short, disturbed, oversubscribed: see "
              "harness/README.md, Statistics).");
  return MAPP_OK;
}

int headline_write(doc *d, const group_table *t) {
  MAPP_TRY(techniques_write(d, t));
  return peers_write(d, t);
}
