/* The report's headline ratios (headline.h). */
#include "headline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"
#include "peers.h"
#include "perfstats.h"

/* A 1-thread group of the app's variant/backend on at least the headline's
 * ranks, at one of its sizes. */
static bool is_candidate(const result_group *g, const app_info *app, const char *variant, const char *backend) {
  const app_headline *h = &app->headline;
  return !strcmp(g->app, app->name) && !strcmp(g->variant, variant) && !strcmp(g->backend, backend) &&
         g->ranks >= h->min_ranks && g->threads == 1 && g->timed >= 2 &&
         (h->sizes.count == 0 || strv_contains(&h->sizes, g->size));
}

static bool same_configuration(const result_group *a, const result_group *b) {
  return !strcmp(a->size, b->size) && !strcmp(a->scaling, b->scaling) && !strcmp(a->setting, b->setting) &&
         a->ranks == b->ranks;
}

/* The technique's and its reference's groups of one size, scaling, setting
 * and rank count: of the pairs the results hold, the one with the most runs
 * on its poorer side (a sweep asks for its headline pairs' precision with
 * `repetitions: auto`), then the one on fewer ranks. */
static void find_pair(const group_table *t, const app_info *app, const result_group **tech,
                      const result_group **ref) {
  const app_headline *h = &app->headline;
  *tech = *ref = NULL;
  size_t best = 0;
  for (size_t i = 0; i < t->count; ++i) {
    const result_group *a = &t->items[i];
    if (!is_candidate(a, app, h->variant, h->backend)) continue;
    for (size_t j = 0; j < t->count; ++j) {
      const result_group *b = &t->items[j];
      if (!is_candidate(b, app, h->ref_variant, h->ref_backend) || !same_configuration(a, b)) continue;
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

static int write_row(doc *d, const app_info *app, const result_group *tech, const result_group *ref) {
  const app_headline *h = &app->headline;
  perf_change c;
  MAPP_TRY(perf_compare(ref->foms, ref->timed, tech->foms, tech->timed, 0.05, &c));
  const result_group *weakest = worse(tech, ref);
  char interval[64] = "-", text[512];
  if (c.bounded) snprintf(interval, sizeof interval, "[%.2f, %.2f]", c.low, c.high);
  reading(&c, weakest, text, sizeof text);
  doc_cell(d, "%s", app->name);
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

/* The apps the table could not have a row of, and why. */
static void write_absent(doc *d, const headline_sources *s) {
  char *undeclared = strv_join(&s->undeclared, ", "), *unasked = strv_join(&s->unasked, "; ");
  if (undeclared && undeclared[0])
    doc_para(d, "No headline declared in --list (`\"headline\"`, docs/contract.md) by: %s.", undeclared);
  if (unasked && unasked[0]) doc_para(d, "Not asked for a headline (--list could not be read): %s.", unasked);
  free(undeclared);
  free(unasked);
}

static int techniques_write(doc *d, const group_table *t, const headline_sources *s) {
  bool any = false;
  for (size_t i = 0; i < s->count; ++i) {
    const app_info *app = &s->apps[i];
    const result_group *tech, *ref;
    if (!app->headline.declared) continue;
    find_pair(t, app, &tech, &ref);
    if (!ref) continue;
    if (!any) write_header(d);
    any = true;
    MAPP_TRY(write_row(d, app, tech, ref));
  }
  if (!any) return MAPP_OK;
  doc_table_end(d);
  doc_para(d, "Figures of merit are higher-is-better: a ratio above 1 is what the technique buys on this machine. "
              "The interval is the Moses interval of the ratio (the one the Mann-Whitney U test inverts); the "
              "verdict is the weaker of the two configurations' (stable, noisy, too-short, disturbed, oversubscribed: see "
              "docs/statistics.md).");
  write_absent(d, s);
  return MAPP_OK;
}

/* ---------------------------------------------------------------- the apps' declarations */

static bool is_peer_app(const group_table *t, const char *app) {
  for (size_t i = 0; i < t->count; ++i)
    if (!strcmp(t->items[i].app, app) && t->items[i].peer_of[0]) return true;
  return false;
}

/* Asks one app; a --list that fails is a note, its error cleared. */
static int query_app(const char *name, const harness_env *env, headline_sources *s) {
  app_info info;
  int status = app_query(name, env, &info);
  if (status == MAPP_ERR_SYSTEM) return status;
  if (status != MAPP_OK) {
    status = strv_pushf(&s->unasked, "%s (%s)", name, mapp_error_message());
    mapp_error_clear();
    return status;
  }
  s->apps[s->count++] = info; /* freed with s, whatever follows */
  return info.headline.declared ? MAPP_OK : strv_push(&s->undeclared, name);
}

int headline_sources_query(const group_table *t, const harness_env *env, headline_sources *out) {
  *out = (headline_sources){.apps = calloc(t->count ? t->count : 1, sizeof *out->apps)};
  if (!out->apps) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = MAPP_OK;
  for (size_t i = 0; status == MAPP_OK && i < t->count; ++i) {
    const char *app = t->items[i].app;
    if (i > 0 && !strcmp(app, t->items[i - 1].app)) continue; /* sorted by app: one query each */
    if (!is_peer_app(t, app)) status = query_app(app, env, out);
  }
  if (status != MAPP_OK) headline_sources_free(out);
  return status;
}

void headline_sources_free(headline_sources *s) {
  for (size_t i = 0; i < s->count; ++i) app_info_free(&s->apps[i]);
  free(s->apps);
  strv_free(&s->unasked);
  strv_free(&s->undeclared);
  *s = (headline_sources){0};
}

int headline_write(doc *d, const group_table *t, const headline_sources *sources) {
  MAPP_TRY(techniques_write(d, t, sources));
  return peers_write(d, t);
}
