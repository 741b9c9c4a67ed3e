/* The plan of every code-path class, checked through the API: the halo
 * schedule exists, only edge ranks keep edge regions (the interior keeps
 * none), fusion only joins stencils of one extent with no exchange between
 * them, pooled temporaries never share an array while both are live, and
 * the generated source takes sizes as arguments. Prints
 * the plan per class (the README's figures). */
#include <stdio.h>
#include <string.h>

#include "stencil.h"

static int failures = 0;
#define EXPECT(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      printf("FAIL: " __VA_ARGS__);                                                                \
      printf("\n");                                                                                \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

static void check_class(const st_program *p, int cls) {
  st_plan plan;
  char name[16];
  st_class_name(cls, name, sizeof name);
  EXPECT(st_plan_make(p, cls, ST_PLAN_ROWS, &plan) == MAPP_OK, "%s: no plan", name);
  for (int k = 0; k < p->ncalls; ++k)
    for (int r = 0; r < p->calls[k].nregions; ++r)
      if (cls == 0) EXPECT(!plan.region_kept[k][r], "interior keeps region %d of %s", r, p->calls[k].name);
  if (cls == (ST_EDGE_W | ST_EDGE_E | ST_EDGE_S | ST_EDGE_N)) EXPECT(plan.nregions_removed == 0, "wesn removed regions");
  for (int g = 0; g < plan.ngroups; ++g) {
    const st_group *gr = &plan.groups[g];
    for (int k = gr->first + 1; k < gr->first + gr->count; ++k) {
      EXPECT(!memcmp(&p->calls[k].extent, &p->calls[gr->first].extent, sizeof(st_extent)), "%s: mixed extents", name);
      for (int e = 0; e < plan.nexchanges; ++e) EXPECT(plan.exchanges[e].before != k, "%s: exchange inside a loop", name);
    }
  }
  /* pooled arrays: no two temporaries of one slot live in the same loop */
  for (int g = 0; g < plan.ngroups; ++g) {
    int owner[ST_NFIELDS];
    for (int s = 0; s < ST_NFIELDS; ++s) owner[s] = -1;
    for (int k = plan.groups[g].first; k < plan.groups[g].first + plan.groups[g].count; ++k) {
      const st_call *c = &p->calls[k];
      int fields[ST_MAX_IN + 1], n = 0;
      fields[n++] = c->out;
      for (int m = 0; m < c->nin; ++m) fields[n++] = c->in[m].field;
      for (int m = 0; m < n; ++m) {
        int f = fields[m], s = plan.slot[f];
        if (s < 0) continue;
        EXPECT(owner[s] < 0 || owner[s] == f, "%s: %s and %s share array %d in loop %d", name,
               st_field_names[owner[s]], st_field_names[f], s, g);
        owner[s] = f;
      }
    }
  }
  char *src = NULL;
  stencil_debug d = {0};
  EXPECT(stencil_generate(p, &plan, MAPP_BACKEND_OMP, &d, &src) == MAPP_OK, "%s: no source", name);
  /* sizes and offsets reach the program only as arguments */
  if (src) EXPECT(strstr(src, "a->lx") && strstr(src, "a->i0"), "%s: the source does not take sizes as arguments", name);
  free(src);
  printf("class %-8s: %d calls, %d loops, %d exchanges, regions %d kept %d removed, %d/%d temporaries demoted, %d arrays\n",
         name, p->ncalls, plan.ngroups, plan.nexchanges, plan.nregions_kept, plan.nregions_removed, plan.ndemoted,
         plan.ntemps, plan.nslots);
}

/* When group m of a pipe handles row r: sweep step r + lag, after the
 * groups before it in that step. */
static long pipe_time(const st_pipe *q, int m, long r) { return (r + q->lag[m]) * q->count + m; }

/* Every row order a pipe's sweep implies, checked by enumeration (not by the
 * lag formula the plan used): a row read is written before, a row
 * overwritten is read before, and writes keep their order. ly rows. */
static int pipe_violations(const st_program *p, const st_plan *plan, const st_pipe *q, long ly) {
  int bad = 0;
  for (int later = 1; later < q->count; ++later)
    for (int earlier = 0; earlier < later; ++earlier) {
      const st_group *gl = &plan->groups[q->first + later], *ge = &plan->groups[q->first + earlier];
      const st_extent *el = &p->calls[gl->first].extent, *ee = &p->calls[ge->first].extent;
      for (int kl = gl->first; kl < gl->first + gl->count; ++kl)
        for (int ke = ge->first; ke < ge->first + ge->count; ++ke) {
          const st_call *cl = &p->calls[kl], *ce = &p->calls[ke];
          for (long r = el->j.lo; r < ly + el->j.hi; ++r) {
            /* flow: later reads row r + dj of what earlier writes */
            for (int n = 0; n < cl->nin; ++n)
              for (int dj = cl->in[n].dj_lo; dj <= cl->in[n].dj_hi && cl->in[n].field == ce->out && !plan->demoted[ce->out]; ++dj) {
                long w = r + dj;
                if (w >= ee->j.lo && w < ly + ee->j.hi && pipe_time(q, earlier, w) > pipe_time(q, later, r)) ++bad;
              }
            /* anti: earlier reads row r of what later overwrites at r */
            for (int n = 0; n < ce->nin; ++n)
              for (int dj = ce->in[n].dj_lo; dj <= ce->in[n].dj_hi && ce->in[n].field == cl->out && !plan->demoted[cl->out]; ++dj) {
                long reader = r - dj;
                if (reader >= ee->j.lo && reader < ly + ee->j.hi && pipe_time(q, earlier, reader) > pipe_time(q, later, r)) ++bad;
              }
            /* output */
            if (ce->out == cl->out && !plan->demoted[cl->out] && r >= ee->j.lo && r < ly + ee->j.hi &&
                pipe_time(q, earlier, r) > pipe_time(q, later, r))
              ++bad;
          }
        }
    }
  return bad;
}

/* The row sweeps of the serial plan: the order they imply is the program's
 * for every class, they cut traffic, and a lag made smaller is caught. */
static void check_pipes(const st_program *p) {
  int swept = 0;
  for (int cls = 0; cls < ST_NCLASSES; ++cls) {
    st_plan plan;
    EXPECT(st_plan_make(p, cls, ST_PLAN_ROWS, &plan) == MAPP_OK, "class %d: no row plan", cls);
    for (int q = 0; q < plan.npipes; ++q) {
      swept += plan.pipes[q].count > 1;
      EXPECT(pipe_violations(p, &plan, &plan.pipes[q], 40) == 0, "class %d: pipe %d breaks the program's order", cls, q);
    }
  }
  EXPECT(swept > 0, "no loops are swept together by rows");
  st_plan rows, fused;
  st_plan_make(p, 0, ST_PLAN_ROWS, &rows);
  st_plan_make(p, 0, ST_PLAN_FUSED, &fused);
  double t_rows = st_traffic_plan(p, &rows, 1024, 1024), t_fused = st_traffic_plan(p, &fused, 1024, 1024);
  printf("traffic per step at 1024x1024 (interior): fused %.0f MB, swept by rows %.0f MB; %d passes over the rows\n",
         t_fused / 1e6, t_rows / 1e6, rows.npipes);
  EXPECT(t_rows < t_fused, "row sweeps do not reduce traffic");
  /* the check can fail: a trailing loop moved up to the first row */
  int broken = 0;
  for (int q = 0; q < rows.npipes; ++q)
    for (int m = 1; m < rows.pipes[q].count; ++m)
      if (rows.pipes[q].lag[m] > 0) {
        st_pipe early = rows.pipes[q];
        early.lag[m] = 0;
        broken += pipe_violations(p, &rows, &early, 40) > 0;
      }
  EXPECT(broken > 0, "a lag set to 0 went unnoticed");
}

int main(void) {
  st_program p;
  if (st_program_build(&p, NULL) != MAPP_OK) return 1;
  EXPECT(p.ncalls >= 20, "only %d stencil calls", p.ncalls);
  for (int cls = 0; cls < ST_NCLASSES; ++cls) check_class(&p, cls);
  check_pipes(&p);
  /* eager's traffic is larger than the fused plan's */
  st_plan plan;
  st_plan_make(&p, 0, ST_PLAN_FUSED, &plan);
  double eager = st_traffic_eager(&p, 48, 48), fused = st_traffic_plan(&p, &plan, 48, 48);
  printf("traffic per step at 48x48: eager %.0f B, fused (interior) %.0f B (%.2fx)\n", eager, fused, eager / fused);
  EXPECT(fused < eager, "fusion does not reduce traffic");
  /* a broken plan is caught: drop a stencil whose output is read later */
  st_program broken;
  st_program_build(&broken, "kinetic_energy");
  EXPECT(st_plan_make(&broken, 0, ST_PLAN_FUSED, &plan) != MAPP_OK, "a read of a never-computed field was not caught");
  mapp_error_clear();
  printf(failures ? "%d failures\n" : "ok\n", failures);
  return failures ? 1 : 0;
}
