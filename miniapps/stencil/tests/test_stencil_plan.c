/* The plan of every program (st_programs) in every code-path class,
 * checked through the API: the halo schedule exists, only edge ranks keep
 * edge regions (the interior keeps none), fusion only joins stencils of one
 * extent with no exchange between them, pooled temporaries never share an
 * array while both are live, the generated source takes sizes as
 * arguments; row sweeps (2-D loops) and level loops (3-D loops) keep every
 * dependence of the program, re-derived by enumeration; a table with a
 * planted error is refused. Prints the plan per class (the README's
 * figures). */
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
    int owner[ST_MAX_FIELDS];
    for (int s = 0; s < ST_MAX_FIELDS; ++s) owner[s] = -1;
    for (int k = plan.groups[g].first; k < plan.groups[g].first + plan.groups[g].count; ++k) {
      const st_call *c = &p->calls[k];
      int fields[ST_MAX_IN + 1], n = 0;
      fields[n++] = c->out;
      for (int m = 0; m < c->nin; ++m) fields[n++] = c->in[m].field;
      for (int m = 0; m < n; ++m) {
        int f = fields[m], s = plan.slot[f];
        if (s < 0) continue;
        EXPECT(owner[s] < 0 || owner[s] == f, "%s: %s and %s share array %d in loop %d", name,
               p->fields[owner[s]].name, p->fields[f].name, s, g);
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

/* How a pipe's sweep orders two (group, row) visits: one thread sweeping
 * every row (threads 0), or the column pipes' OpenMP blocks as
 * emit_column_pipe cuts them (threads > 0): within a block the sweep's
 * order; across blocks only the barrier after each block's first `most`
 * steps. rows_lo..rows_hi: the rows the pipe's groups span. */
typedef struct {
  const st_pipe *q;
  int threads, most;
  long rows_lo, rows_hi;
} schedule;

/* When group m of a pipe handles row r: sweep step r + lag, after the
 * groups before it in that step. */
static long pipe_time(const st_pipe *q, int m, long r) { return (r + q->lag[m]) * q->count + m; }

static void block_of(const schedule *sc, long r, long *b_lo, long *b_hi) {
  long rows = sc->rows_hi - sc->rows_lo, blocks = rows / (2 * sc->most + 1);
  if (blocks < 1) blocks = 1;
  if (blocks > sc->threads) blocks = sc->threads;
  *b_lo = *b_hi = 0;
  for (long t = 0; t < blocks; ++t) {
    *b_lo = sc->rows_lo + rows * t / blocks, *b_hi = sc->rows_lo + rows * (t + 1) / blocks;
    if (r >= *b_lo && r < *b_hi) return;
  }
}

/* Does group a's visit of row ra surely come before group b's of row rb? */
static bool before(const schedule *sc, int a, long ra, int b, long rb) {
  if (!sc->threads) return pipe_time(sc->q, a, ra) < pipe_time(sc->q, b, rb);
  long a_lo, a_hi, b_lo, b_hi;
  block_of(sc, ra, &a_lo, &a_hi);
  block_of(sc, rb, &b_lo, &b_hi);
  if (a_lo == b_lo) return pipe_time(sc->q, a, ra) < pipe_time(sc->q, b, rb);
  return ra + sc->q->lag[a] < a_lo + sc->most && rb + sc->q->lag[b] >= b_lo + sc->most;
}

/* Every row order a pipe's sweep implies, checked by enumeration (not by the
 * lag formula the plan used): a row read is written before, a row
 * overwritten is read before, and writes keep their order. ly rows. */
static int pipe_violations(const st_program *p, const st_plan *plan, const schedule *sc, long ly) {
  const st_pipe *q = sc->q;
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
                if (w >= ee->j.lo && w < ly + ee->j.hi && !before(sc, earlier, w, later, r)) ++bad;
              }
            /* anti: earlier reads row r of what later overwrites at r */
            for (int n = 0; n < ce->nin; ++n)
              for (int dj = ce->in[n].dj_lo; dj <= ce->in[n].dj_hi && ce->in[n].field == cl->out && !plan->demoted[cl->out]; ++dj) {
                long reader = r - dj;
                if (reader >= ee->j.lo && reader < ly + ee->j.hi && !before(sc, earlier, reader, later, r)) ++bad;
              }
            /* output */
            if (ce->out == cl->out && !plan->demoted[cl->out] && r >= ee->j.lo && r < ly + ee->j.hi &&
                !before(sc, earlier, r, later, r))
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
      EXPECT(pipe_violations(p, &plan, &(schedule){.q = &plan.pipes[q]}, 40) == 0, "class %d: pipe %d breaks the program's order", cls, q);
    }
  }
  EXPECT(swept > 0, "no loops are swept together by rows");
  st_plan rows, fused;
  st_plan_make(p, 0, ST_PLAN_ROWS, &rows);
  st_plan_make(p, 0, ST_PLAN_FUSED, &fused);
  double t_rows = st_traffic_plan(p, &rows, 1024, 1024, 1), t_fused = st_traffic_plan(p, &fused, 1024, 1024, 1);
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
        broken += pipe_violations(p, &rows, &(schedule){.q = &early}, 40) > 0;
      }
  EXPECT(broken > 0, "a lag set to 0 went unnoticed");
}

/* When member m of a 3-D group runs level kz: the group walks its levels
 * in direction dir (downwards when dir < 0), all members at each level in
 * order. */
static long level_time(int dir, int count, int m, long kz, long nz) { return (dir < 0 ? nz - 1 - kz : kz) * count + m; }

static bool in_levels(const st_call *c, long kz, long nz) {
  long lo, hi;
  st_call_level_bounds(c, nz, &lo, &hi);
  return kz >= lo && kz < hi;
}

/* Every level order a 3-D group's loop implies against the program's (each
 * call over all its levels before the next), by enumeration on nz levels:
 * a level read is written before (flow), a level overwritten is read before
 * (anti), reads between members at the point itself. */
static int level_violations(const st_program *p, const st_group *g, int dir, long nz) {
  int bad = 0;
  for (int l = 1; l < g->count; ++l)
    for (int e = 0; e < l; ++e) {
      const st_call *cl = &p->calls[g->first + l], *ce = &p->calls[g->first + e];
      for (long kz = 0; kz < nz; ++kz) {
        for (int n = 0; n < cl->nin && in_levels(cl, kz, nz); ++n) { /* flow */
          const st_input *in = &cl->in[n];
          if (in->field != ce->out) continue;
          bad += in->di_lo || in->di_hi || in->dj_lo || in->dj_hi;
          for (long w = kz + in->dk_lo; w <= kz + in->dk_hi; ++w)
            if (w >= 0 && w < nz && in_levels(ce, w, nz) &&
                level_time(dir, g->count, e, w, nz) > level_time(dir, g->count, l, kz, nz))
              ++bad;
        }
        for (int n = 0; n < ce->nin && in_levels(ce, kz, nz); ++n) { /* anti */
          const st_input *in = &ce->in[n];
          if (in->field != cl->out) continue;
          for (long w = kz + in->dk_lo; w <= kz + in->dk_hi; ++w)
            if (w >= 0 && w < nz && in_levels(cl, w, nz) &&
                level_time(dir, g->count, e, kz, nz) > level_time(dir, g->count, l, w, nz))
              ++bad;
        }
      }
    }
  return bad;
}

/* The level loops of every 3-D group keep the program's order on several
 * column heights, and walking a sequential group the other way is caught. */
static void check_levels(const st_program *p) {
  st_plan plan;
  EXPECT(st_plan_make(p, 0, ST_PLAN_FUSED, &plan) == MAPP_OK, "%s: no plan", p->name);
  int sequential = 0, reversed_caught = 0;
  for (int g = 0; g < plan.ngroups; ++g) {
    const st_group *gr = &plan.groups[g];
    if (p->fields[p->calls[gr->first].out].dims != 3) continue;
    int dir = st_group_direction(p, gr);
    for (long nz = ST_NZ_MIN; nz <= 9; ++nz)
      EXPECT(level_violations(p, gr, dir, nz) == 0, "%s: group %d breaks the program's order on %ld levels", p->name, g, nz);
    if (dir && gr->count > 1) {
      ++sequential;
      reversed_caught += level_violations(p, gr, -dir, 8) > 0;
    }
  }
  if (sequential) {
    printf("%s: %d sequential level loops fused, each re-checked on 4 to 9 levels\n", p->name, sequential);
    EXPECT(reversed_caught == sequential, "%s: a sequential loop walked the other way went unnoticed", p->name);
  }
}

/* Every access to a column buffer is in its column pipe, in the accessing
 * point's own row of columns (any column, any level), by groups of one lag:
 * a buffer then needs only the row being swept. Counts the accesses that
 * are not. */
static int buffer_violations(const st_program *p, const st_plan *plan) {
  int bad = 0, lag_of[ST_MAX_FIELDS];
  for (int f = 0; f < ST_MAX_FIELDS; ++f) lag_of[f] = -1;
  for (int k = 0; k < p->ncalls; ++k) {
    int g = st_plan_group_of(plan, k), q = 0;
    while (q < plan->npipes && !(g >= plan->pipes[q].first && g < plan->pipes[q].first + plan->pipes[q].count)) ++q;
    const st_pipe *pipe = &plan->pipes[q];
    int first = plan->groups[pipe->first].first, lag = pipe->lag[g - pipe->first];
    const st_group *end = &plan->groups[pipe->first + pipe->count - 1];
    bool column = st_pipe_is_column(p, plan, pipe);
    for (int n = 0; n <= p->calls[k].nin; ++n) {
      const st_input *in = n < p->calls[k].nin ? &p->calls[k].in[n] : &(st_input){.field = p->calls[k].out};
      if (!plan->buffered[in->field]) continue;
      bool written = false;
      for (int m = first; m < end->first + end->count; ++m) written |= p->calls[m].out == in->field;
      bad += !column || !written || in->dj_lo || in->dj_hi || (lag_of[in->field] >= 0 && lag_of[in->field] != lag);
      lag_of[in->field] = lag;
    }
  }
  return bad;
}

/* A column pipe's schedule: the rows its groups span on ly rows, its
 * largest lag, on threads threads (0: one sweep). */
static schedule column_schedule(const st_program *p, const st_plan *plan, const st_pipe *q, int threads, long ly) {
  schedule sc = {.q = q, .threads = threads, .most = st_pipe_max_lag(q)};
  for (int m = 0; m < q->count; ++m) {
    const st_extent *e = &p->calls[plan->groups[q->first + m].first].extent;
    if (m == 0 || e->j.lo < sc.rows_lo) sc.rows_lo = e->j.lo;
    if (m == 0 || ly + e->j.hi > sc.rows_hi) sc.rows_hi = ly + e->j.hi;
  }
  return sc;
}

/* Order violations of a column pipe swept by one thread and by 2 to 5
 * blocks, on 1 to 40 rows. */
static int column_order_violations(const st_program *p, const st_plan *plan, const st_pipe *q) {
  int bad = 0;
  for (int threads = 0; threads <= 5; ++threads)
    for (long ly = 1; ly <= 40; ++ly) {
      schedule sc = column_schedule(p, plan, q, threads, ly);
      bad += pipe_violations(p, plan, &sc, ly);
    }
  return bad;
}

/* The column pipes of both plans: their sweeps keep the program's order on
 * one thread and in blocks, the buffers stay in their rows; a planted
 * buffer read across rows, a trailing loop moved up, and blocks without
 * their barrier are caught. */
static void check_columns(const st_program *p) {
  for (st_plan_level level = ST_PLAN_FUSED; level <= ST_PLAN_ROWS; ++level) {
    st_plan plan;
    EXPECT(st_plan_make(p, 0, level, &plan) == MAPP_OK, "%s: no plan", p->name);
    EXPECT(buffer_violations(p, &plan) == 0, "%s: a column buffer reaches another row or lag", p->name);
    int pipes = 0, lagged = 0, moved_caught = 0, barred = 0, unbarred_caught = 0;
    for (int q = 0; q < plan.npipes; ++q) {
      const st_pipe *pipe = &plan.pipes[q];
      if (!st_pipe_is_column(p, &plan, pipe)) continue;
      ++pipes;
      EXPECT(column_order_violations(p, &plan, pipe) == 0, "%s: column pipe %d breaks the program's order", p->name, q);
      for (int m = 1; m < pipe->count; ++m)
        if (pipe->lag[m] > 0) { /* moved up to the first row: an order or a buffer broken */
          ++lagged;
          st_plan early = plan;
          early.pipes[q].lag[m] = 0;
          moved_caught += column_order_violations(p, &early, &early.pipes[q]) + buffer_violations(p, &early) > 0;
        }
      schedule sc = column_schedule(p, &plan, pipe, 2, 40);
      if (sc.most) {
        ++barred;
        sc.most = 0; /* blocks without their barrier */
        unbarred_caught += pipe_violations(p, &plan, &sc, 40) > 0;
      }
    }
    EXPECT(moved_caught == lagged, "%s: a loop moved ahead of its lag went unnoticed", p->name);
    EXPECT(unbarred_caught == barred, "%s: blocks without their barrier went unnoticed", p->name);
    if (!pipes || level == ST_PLAN_ROWS) continue;
    printf("%s: %d column pipes, %d loops in them behind the first, %d temporaries in column buffers\n", p->name, pipes,
           lagged, plan.nbuffered);
    EXPECT(plan.nbuffered > 0, "%s: no column buffers", p->name);
    /* the check can fail: a temporary read in another row made a buffer */
    int planted = -1;
    for (int k = 0; k < p->ncalls && planted < 0; ++k)
      for (int n = 0; n < p->calls[k].nin; ++n)
        if (p->calls[k].in[n].field >= p->nstate && (p->calls[k].in[n].dj_lo || p->calls[k].in[n].dj_hi))
          planted = p->calls[k].in[n].field;
    if (planted >= 0) {
      plan.buffered[planted] = true;
      EXPECT(buffer_violations(p, &plan) > 0, "%s: a buffer read across rows went unnoticed", p->name);
    }
  }
}

/* A table with a planted error, refused by st_program_check. */
static void check_tables(const st_program *p) {
  st_program bad = *p;
  bad.calls[bad.ncalls - 1].out = bad.nfields; /* a field the table has not */
  EXPECT(st_program_check(&bad) != MAPP_OK, "%s: a call writing an unknown field was accepted", p->name);
  mapp_error_clear();
  bad = *p;
  bad.calls[bad.ncalls - 1].in[0].dk_lo = -1; /* a 2-D call reading levels, or a parallel one its own column */
  bad.calls[bad.ncalls - 1].in[0].field = bad.calls[bad.ncalls - 1].out;
  EXPECT(st_program_check(&bad) != MAPP_OK, "%s: a read of levels out of order was accepted", p->name);
  mapp_error_clear();
}

/* The last call writing a temporary that a later call reads: without it
 * the plan must refuse the step (a read of a field, or of levels of it,
 * nothing computed). */
static const char *droppable_call(const st_program *p) {
  for (int k = p->ncalls - 1; k >= 0; --k) {
    int out = p->calls[k].out;
    if (out < p->nstate) continue;
    for (int later = k + 1; later < p->ncalls; ++later)
      for (int n = 0; n < p->calls[later].nin; ++n)
        if (p->calls[later].in[n].field == out) return p->calls[k].name;
  }
  return NULL;
}

static void check_program(const char *name) {
  static st_program p;
  if (st_program_make(&p, name, NULL) != MAPP_OK) {
    EXPECT(0, "program %s: %s", name, mapp_error_message());
    return;
  }
  bool flat = true;
  for (int f = 0; f < p.nfields; ++f) flat &= p.fields[f].dims == 2;
  printf("---- program %s: %d fields, %d calls\n", name, p.nfields, p.ncalls);
  for (int cls = 0; cls < ST_NCLASSES; ++cls) check_class(&p, cls);
  if (flat) check_pipes(&p);
  else check_levels(&p);
  check_columns(&p);
  check_tables(&p);
  /* eager's traffic is larger than the fused plan's */
  st_plan plan;
  st_plan_make(&p, 0, ST_PLAN_FUSED, &plan);
  double eager = st_traffic_eager(&p, 48, 48, 40), fused = st_traffic_plan(&p, &plan, 48, 48, 40);
  printf("traffic per step at 48x48%s: eager %.0f B, fused (interior) %.0f B (%.2fx)\n", flat ? "" : "x40", eager,
         fused, eager / fused);
  EXPECT(fused < eager, "%s: fusion does not reduce traffic", name);
  /* a broken plan is caught: drop a stencil whose output is read later */
  const char *droppable = droppable_call(&p);
  EXPECT(droppable, "%s: no call writes a temporary a later call reads", name);
  if (!droppable) return;
  static st_program broken;
  EXPECT(st_program_make(&broken, name, droppable) == MAPP_OK, "%s: cannot drop %s", name, droppable);
  EXPECT(st_plan_make(&broken, 0, ST_PLAN_FUSED, &plan) != MAPP_OK, "%s: a read of a never-computed field was not caught",
         name);
  printf("without %s the plan refuses the step: %s\n", droppable, mapp_error_message());
  mapp_error_clear();
}

int main(void) {
  for (const st_program_entry *e = st_programs; e->name; ++e) check_program(e->name);
  printf(failures ? "%d failures\n" : "ok\n", failures);
  return failures ? 1 : 0;
}
