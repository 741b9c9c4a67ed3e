/* The generator's plan for one code-path class: the halo schedule, region
 * removal, fusion of consecutive stencils (level by level for 3-D calls,
 * in their vertical order for sequential ones), transient demotion and
 * pooling, row sweeps, and the compulsory traffic of a step. */
#include <string.h>

#include "mapp_error.h"
#include "stencil_program.h"

/* ------------------------------------------------------------ the plan */

static bool same_extent(const st_extent *a, const st_extent *b) {
  return a->i.lo == b->i.lo && a->i.hi == b->i.hi && a->j.lo == b->j.lo && a->j.hi == b->j.hi;
}

static bool flat(const st_input *in) { return !in->di_lo && !in->di_hi && !in->dj_lo && !in->dj_hi; }
static bool zero_offsets(const st_input *in) { return flat(in) && !in->dk_lo && !in->dk_hi; }

/* The direction a call walks its columns: 0 any (parallel), +1 upwards,
 * -1 downwards. */
static int direction(const st_call *c) { return c->order == ST_K_FORWARD ? 1 : c->order == ST_K_BACKWARD ? -1 : 0; }

/* In a loop that visits levels in direction dir (0: level by level, no
 * order), may a member read levels [k + in->dk_lo, k + in->dk_hi] of what
 * an earlier member writes at k (flow), or write at k what an earlier
 * member reads there (anti)? Only at its own column, and only levels the
 * loop has already visited (flow) or not yet overwritten (anti). */
static bool flow_ok(const st_input *in, int dir) {
  if (!flat(in)) return false;
  return dir > 0 ? in->dk_hi <= 0 : dir < 0 ? in->dk_lo >= 0 : !in->dk_lo && !in->dk_hi;
}
static bool anti_ok(const st_input *in, int dir) {
  if (!flat(in)) return false;
  return dir > 0 ? in->dk_lo >= 0 : dir < 0 ? in->dk_hi <= 0 : !in->dk_lo && !in->dk_hi;
}

/* Do the levels reader reads of input n meet the levels writer writes?
 * Where they do not, the two calls cannot depend on each other through
 * that field, whatever the offsets. */
static bool levels_meet(const st_call *reader, int n, const st_call *writer) {
  st_grange r = st_call_levels(reader), w = st_call_levels(writer);
  r.lo += reader->in[n].dk_lo, r.hi += reader->in[n].dk_hi;
  return !st_levels_disjoint(&r, &w);
}

/* The direction of calls [first, k] together, or 2 when they disagree
 * (a forward and a backward call never share a loop). */
static int group_direction(const st_program *p, int first, int k) {
  int dir = 0;
  for (int m = first; m <= k; ++m) {
    int d = direction(&p->calls[m]);
    if (d && dir && d != dir) return 2;
    if (d) dir = d;
  }
  return dir;
}


/* May call k join the group [first, k)? Same extent, a body (no region-only
 * stencil), no exchange in between, what it reads from the group read at its
 * own point only, and nothing the group reads at an offset written by it.
 * The kept regions of a stencil with a body are applied inside the fused
 * loop, as a select on the point's global index (the value eager's region
 * pass leaves), so they do not end a group. */
static bool can_join(const st_program *p, int first, int k, const bool *exchange_before) {
  const st_call *c = &p->calls[k];
  if (!c->body || exchange_before[k]) return false;
  int dir = group_direction(p, first, k);
  if (dir == 2) return false;
  for (int m = first; m < k; ++m) {
    const st_call *prev = &p->calls[m];
    if (!same_extent(&prev->extent, &c->extent)) return false;
    if (p->fields[prev->out].dims != p->fields[c->out].dims) return false;
    if (!st_regions_inline(prev)) return false; /* its regions run after the loop */
    for (int n = 0; n < c->nin; ++n)
      if (c->in[n].field == prev->out && !flow_ok(&c->in[n], dir) && levels_meet(c, n, prev)) return false;
    for (int n = 0; n < prev->nin; ++n)
      if (prev->in[n].field == c->out && !anti_ok(&prev->in[n], dir) && levels_meet(prev, n, c)) return false;
  }
  /* its own output: at its own point, or (checked with the table) below
   * or above in its own order */
  for (int n = 0; n < c->nin; ++n)
    if (c->in[n].field == c->out && !flat(&c->in[n])) return false;
  return true;
}

bool st_regions_inline(const st_call *c) {
  if (!c->body) return false;
  if (!c->nregions) return true; /* nothing to apply */
  for (int n = 0; n < c->nin; ++n)
    if (c->in[n].field == c->out && !zero_offsets(&c->in[n])) return false;
  return true;
}

/* Order of level ends (nz >= ST_NZ_MIN: ends from the bottom come first). */
static int end_cmp(st_level_end a, st_level_end b) {
  if (a.at != b.at) return a.at == ST_AT_LO ? -1 : 1;
  return a.off < b.off ? -1 : a.off > b.off;
}

int st_group_level_ends(const st_program *p, const st_group *g, st_level_end ends[2 * ST_MAX_CALLS]) {
  int n = 0;
  for (int k = g->first; k < g->first + g->count; ++k) {
    st_grange r = st_call_levels(&p->calls[k]);
    st_level_end e[2] = {{r.lo_at, r.lo}, {r.hi_at, r.hi}};
    for (int m = 0; m < 2; ++m) {
      int at = 0;
      while (at < n && end_cmp(ends[at], e[m]) < 0) ++at;
      if (at < n && !end_cmp(ends[at], e[m])) continue;
      memmove(&ends[at + 1], &ends[at], (size_t)(n - at) * sizeof ends[0]);
      ends[at] = e[m], ++n;
    }
  }
  return n;
}

bool st_call_covers(const st_call *c, st_level_end lo, st_level_end hi) {
  st_grange r = st_call_levels(c);
  return end_cmp((st_level_end){r.lo_at, r.lo}, lo) <= 0 && end_cmp(hi, (st_level_end){r.hi_at, r.hi}) <= 0;
}

int st_group_segments(const st_program *p, const st_group *g, st_level_end lo[2 * ST_MAX_CALLS],
                      st_level_end hi[2 * ST_MAX_CALLS], bool *down) {
  st_level_end ends[2 * ST_MAX_CALLS];
  int n = st_group_level_ends(p, g, ends);
  *down = st_group_direction(p, g) < 0;
  for (int m = 0; m + 1 < n; ++m) {
    int seg = *down ? n - 2 - m : m;
    lo[m] = ends[seg], hi[m] = ends[seg + 1];
  }
  return n > 1 ? n - 1 : 0;
}

int st_group_direction(const st_program *p, const st_group *g) {
  return group_direction(p, g->first, g->first + g->count - 1);
}

int st_plan_group_of(const st_plan *plan, int c) {
  for (int g = 0; g < plan->ngroups; ++g)
    if (c >= plan->groups[g].first && c < plan->groups[g].first + plan->groups[g].count) return g;
  return -1;
}

/* Is every write of field f in the group of call writer, by a body, and
 * each level written by one call only (the bottom, inner and top intervals
 * of one field)? Then at each point of the fused loop one value exists,
 * which a local can hold. */
static bool one_writer_per_level(const st_program *p, const st_plan *plan, int f, int writer) {
  int g = st_plan_group_of(plan, writer);
  for (int k = 0; k < p->ncalls; ++k) {
    const st_call *c = &p->calls[k];
    if (c->out != f) continue;
    if (!c->body || st_plan_group_of(plan, k) != g) return false;
    for (int m = 0; m < k; ++m) {
      st_grange mine = st_call_levels(c), other = st_call_levels(&p->calls[m]);
      if (p->calls[m].out == f && !st_levels_disjoint(&mine, &other)) return false;
    }
  }
  return true;
}

static int halo_schedule(const st_program *p, st_plan *plan) {
  st_validity v;
  st_validity_start(&v, p);
  for (int k = 0; k < p->ncalls; ++k) {
    int need[ST_MAX_FIELDS];
    int n = st_halo_needs(&p->calls[k], &v, need);
    if (n < 0) return mapp_fail(MAPP_ERR_INPUT, "stencil %s reads a field where it was never computed", p->calls[k].name);
    for (int m = 0; m < n; ++m) {
      /* Join the latest exchange if nothing since has written the field:
       * the same data, fewer messages. */
      st_exchange *e = plan->nexchanges ? &plan->exchanges[plan->nexchanges - 1] : NULL;
      bool written = false;
      if (e)
        for (int q = e->before; q < k; ++q) written |= p->calls[q].out == need[m] && p->calls[q].body;
      if (!e || written) {
        e = &plan->exchanges[plan->nexchanges++];
        *e = (st_exchange){.before = k};
      }
      e->fields[e->nfields++] = need[m];
      st_validity_after_exchange(&v, need[m]);
    }
    st_validity_after_call(&v, &p->calls[k]);
  }
  return MAPP_OK;
}

static int pipe_of_group(const st_plan *plan, int g) {
  for (int q = 0; q < plan->npipes; ++q)
    if (g >= plan->pipes[q].first && g < plan->pipes[q].first + plan->pipes[q].count) return q;
  return -1;
}

/* Pooled arrays by liveness in pipes (the loops of one pipe run together,
 * so their arrays must all be distinct). */
static void assign_slots(const st_program *p, st_plan *plan) {
  int first[ST_MAX_FIELDS], last[ST_MAX_FIELDS];
  for (int f = 0; f < p->nfields; ++f) first[f] = -1, last[f] = -1;
  for (int k = 0; k < p->ncalls; ++k) {
    int g = pipe_of_group(plan, st_plan_group_of(plan, k));
    const st_call *c = &p->calls[k];
    if (first[c->out] < 0) first[c->out] = g;
    if (last[c->out] < g) last[c->out] = g;
    for (int n = 0; n < c->nin; ++n)
      if (last[c->in[n].field] < g) last[c->in[n].field] = g;
  }
  /* Greedy interval colouring in order of first use: a slot is free again
   * after the last pipe that reads its current temporary. */
  int slot_free_after[ST_MAX_FIELDS];
  plan->nslots = 0;
  for (int f = 0; f < ST_MAX_FIELDS; ++f) plan->slot[f] = -1;
  for (int g = 0; g < plan->npipes; ++g)
    for (int f = p->nstate; f < p->nfields; ++f) {
      if (first[f] != g || plan->demoted[f]) continue;
      int s = 0;
      while (s < plan->nslots && slot_free_after[s] >= g) ++s;
      if (s == plan->nslots) ++plan->nslots;
      plan->slot[f] = s;
      slot_free_after[s] = last[f];
    }
}

/* How group g touches each field: written (as an array), and the rows it
 * reads around its own (dj_lo..dj_hi); demoted temporaries never leave it. */
typedef struct {
  bool writes[ST_MAX_FIELDS], reads[ST_MAX_FIELDS];
  int dj_lo[ST_MAX_FIELDS], dj_hi[ST_MAX_FIELDS];
} group_access;

static void access_of(const st_program *p, const st_plan *plan, int g, group_access *x) {
  memset(x, 0, sizeof *x);
  const st_group *gr = &plan->groups[g];
  for (int k = gr->first; k < gr->first + gr->count; ++k) {
    const st_call *c = &p->calls[k];
    for (int n = 0; n < c->nin; ++n) {
      int f = c->in[n].field;
      if (plan->demoted[f]) continue;
      if (!x->reads[f] || c->in[n].dj_lo < x->dj_lo[f]) x->dj_lo[f] = c->in[n].dj_lo;
      if (!x->reads[f] || c->in[n].dj_hi > x->dj_hi[f]) x->dj_hi[f] = c->in[n].dj_hi;
      x->reads[f] = true;
    }
    if (!plan->demoted[c->out]) x->writes[c->out] = true;
  }
}

/* Can group g be swept row by row: a loop over its extent whose regions
 * all apply inside it (none runs after the loop)? */
static bool row_sweepable(const st_program *p, const st_plan *plan, int g) {
  const st_group *gr = &plan->groups[g];
  for (int k = gr->first; k < gr->first + gr->count; ++k) {
    if (!p->calls[k].body || p->fields[p->calls[k].out].dims != 2) return false; /* a 3-D loop sweeps columns */
    bool kept = false;
    for (int r = 0; r < p->calls[k].nregions; ++r) kept |= plan->region_kept[k][r];
    if (kept && !st_regions_inline(&p->calls[k])) return false;
  }
  return true;
}

/* The smallest lag of group g behind the pipe's first row that respects
 * every dependence on the groups before it in the pipe (lag[] theirs);
 * -1 beyond ST_MAX_LAG. Flow: g reads row r + dj_hi of what an earlier
 * group writes, so it trails by dj_hi. Anti: an earlier group reads row
 * r - dj_lo last of what g overwrites at r, so g trails by -dj_lo. Output:
 * not ahead. */
static int lag_for(const st_program *p, const st_plan *plan, const st_pipe *pipe, int g) {
  group_access mine, prev;
  access_of(p, plan, g, &mine);
  int lag = 0;
  for (int m = 0; m < pipe->count; ++m) {
    access_of(p, plan, pipe->first + m, &prev);
    int need = pipe->lag[m];
    for (int f = 0; f < p->nfields; ++f) {
      if (prev.writes[f] && mine.reads[f] && pipe->lag[m] + mine.dj_hi[f] > need) need = pipe->lag[m] + mine.dj_hi[f];
      if (prev.reads[f] && mine.writes[f] && pipe->lag[m] - prev.dj_lo[f] > need) need = pipe->lag[m] - prev.dj_lo[f];
    }
    if (need > lag) lag = need;
  }
  return lag <= ST_MAX_LAG ? lag : -1;
}

/* Read in the reader's own row (any column, any level). */
static bool row_local(const st_input *in) { return !in->dj_lo && !in->dj_hi; }

/* May a flow (reader after writer) or anti dependence (reader before
 * writer) across rows, read rows dj_lo..dj_hi around the reader's, hold in
 * a column pipe swept in parallel by blocks of rows? A block's first sweep
 * steps run before a barrier, the rest after it (emit_column_pipe): what a
 * block reads above it is then written by its upper neighbour before the
 * barrier (flow) and what it reads below it is read before its lower
 * neighbour overwrites it after the barrier (anti). The other two
 * directions would need the neighbour's later rows first. */
static bool blocks_keep(const st_input *in, bool flow) { return flow ? in->dj_lo >= 0 : in->dj_hi <= 0; }

/* The lag at which 3-D group g may join the column pipe q, or -1. Each row
 * of columns runs the pipe's loops in turn, each over all its levels, group
 * m on row sweep - lag[m] (rows in parallel by blocks, on the serial backend
 * too): what flows between g and the pipe in its own row of columns (any
 * column, any level) needs no lag, a row above or below one as lag_for
 * gives it, where the blocks keep that order (blocks_keep). Only a group
 * that reads what the pipe writes or reads is worth sweeping with it: the
 * rows it shares are still in cache. */
static int column_lag(const st_program *p, const st_plan *plan, const st_pipe *q, int g) {
  const st_group *gr = &plan->groups[g];
  bool shares = false;
  for (int m = q->first; m < q->first + q->count; ++m) {
    const st_group *prev = &plan->groups[m];
    if (p->fields[p->calls[prev->first].out].dims != 3) return -1;
    for (int ke = prev->first; ke < prev->first + prev->count; ++ke)
      for (int kl = gr->first; kl < gr->first + gr->count; ++kl) {
        const st_call *ce = &p->calls[ke], *cl = &p->calls[kl];
        for (int n = 0; n < cl->nin; ++n) {
          const st_input *in = &cl->in[n];
          if (plan->demoted[in->field]) continue;
          if (in->field == ce->out && !blocks_keep(in, true)) return -1;
          shares |= in->field == ce->out;
          for (int r = 0; r < ce->nin; ++r) shares |= in->field == ce->in[r].field;
        }
        for (int n = 0; n < ce->nin; ++n)
          if (ce->in[n].field == cl->out && !blocks_keep(&ce->in[n], false)) return -1;
      }
  }
  return shares ? lag_for(p, plan, q, g) : -1;
}

int st_pipe_max_lag(const st_pipe *q) {
  int most = 0;
  for (int m = 0; m < q->count; ++m)
    if (q->lag[m] > most) most = q->lag[m];
  return most;
}

bool st_pipe_is_column(const st_program *p, const st_plan *plan, const st_pipe *q) {
  return q->count > 1 && p->fields[p->calls[plan->groups[q->first].first].out].dims == 3;
}

/* Each loop of a column pipe as late as the loops after it allow (never
 * beyond the pipe's largest lag, never ahead of the next loop): a loop whose
 * output is read later in its own row then runs with its readers, and what
 * flows between them can be a column buffer. Raising a lag only relaxes
 * what the loops before it need (lag_for), so the later loops' bounds are
 * the only ones: a reader of its output at rows dj_lo..dj_hi no earlier
 * than dj_hi rows after it, a writer of what it reads no earlier than
 * -dj_lo rows after it, a writer of its output not ahead of it. */
static void delay_column_loops(const st_program *p, const st_plan *plan, st_pipe *pipe) {
  int most = st_pipe_max_lag(pipe);
  for (int m = pipe->count - 2; m >= 0; --m) {
    group_access mine, next;
    access_of(p, plan, pipe->first + m, &mine);
    int bound = (int)st_min(pipe->lag[m + 1], most);
    for (int l = m + 1; l < pipe->count; ++l) {
      access_of(p, plan, pipe->first + l, &next);
      for (int f = 0; f < p->nfields; ++f) {
        if (mine.writes[f] && next.reads[f]) bound = (int)st_min(bound, pipe->lag[l] - next.dj_hi[f]);
        if (mine.reads[f] && next.writes[f]) bound = (int)st_min(bound, pipe->lag[l] + mine.dj_lo[f]);
        if (mine.writes[f] && next.writes[f]) bound = (int)st_min(bound, pipe->lag[l]);
      }
    }
    if (bound > pipe->lag[m]) pipe->lag[m] = bound;
  }
}

/* Column buffers: a temporary that is an array (not demoted) but written
 * and read only inside one column pipe, in its own row, needs only the
 * columns of the row being swept (each thread its own), not the whole
 * field: it stays in cache and never moves to memory. */
static void buffer_columns(const st_program *p, st_plan *plan) {
  int pipe_of[ST_MAX_FIELDS], lag_of[ST_MAX_FIELDS];
  bool column[ST_MAX_FIELDS];
  for (int f = 0; f < ST_MAX_FIELDS; ++f) pipe_of[f] = -1, column[f] = true;
  for (int q = 0; q < plan->npipes; ++q) {
    const st_pipe *pipe = &plan->pipes[q];
    for (int g = pipe->first; g < pipe->first + pipe->count; ++g)
      for (int k = plan->groups[g].first; k < plan->groups[g].first + plan->groups[g].count; ++k) {
        const st_call *c = &p->calls[k];
        int fields[ST_MAX_IN + 1] = {c->out}, nf = 1;
        for (int n = 0; n < c->nin; ++n) {
          fields[nf++] = c->in[n].field;
          if (!row_local(&c->in[n])) column[c->in[n].field] = false;
        }
        for (int m = 0; m < nf; ++m) {
          int f = fields[m];
          if (pipe_of[f] >= 0 && pipe_of[f] != q) column[f] = false;
          if (pipe_of[f] == q && lag_of[f] != pipe->lag[g - pipe->first]) column[f] = false; /* one row at a time */
          pipe_of[f] = q, lag_of[f] = pipe->lag[g - pipe->first];
          if (!st_pipe_is_column(p, plan, pipe)) column[f] = false;
        }
      }
  }
  plan->nbuffered = 0;
  for (int f = p->nstate; f < p->nfields; ++f) {
    plan->buffered[f] = column[f] && pipe_of[f] >= 0 && !plan->demoted[f];
    plan->nbuffered += plan->buffered[f];
  }
}

/* Pipes: each group alone; consecutive row-sweepable 2-D groups with no
 * halo exchange between them swept together by rows (ST_PLAN_ROWS); and,
 * when fusing, consecutive 3-D groups whose flows stay in their columns
 * swept together row of columns by row of columns (any backend). */
static void make_pipes(const st_program *p, st_plan *plan, st_plan_level level, const bool *exchange_before) {
  plan->npipes = 0;
  for (int g = 0; g < plan->ngroups; ++g) {
    st_pipe *q = plan->npipes ? &plan->pipes[plan->npipes - 1] : NULL;
    int lag = -1;
    bool vertical = p->fields[p->calls[plan->groups[g].first].out].dims == 3;
    if (vertical && level != ST_PLAN_SEPARATE && q && !exchange_before[plan->groups[g].first])
      lag = column_lag(p, plan, q, g);
    else if (level == ST_PLAN_ROWS && q && !exchange_before[plan->groups[g].first] && row_sweepable(p, plan, g) &&
             row_sweepable(p, plan, q->first + q->count - 1))
      lag = lag_for(p, plan, q, g);
    if (lag >= 0) {
      q->lag[q->count++] = lag;
    } else {
      q = &plan->pipes[plan->npipes++];
      *q = (st_pipe){.first = g, .count = 1};
    }
  }
}

int st_plan_make(const st_program *p, int cls, st_plan_level level, st_plan *plan) {
  memset(plan, 0, sizeof *plan);
  bool fuse = level != ST_PLAN_SEPARATE;
  plan->cls = cls;
  plan->fuse = fuse;
  MAPP_TRY(halo_schedule(p, plan));
  bool exchange_before[ST_MAX_CALLS] = {false};
  for (int e = 0; e < plan->nexchanges; ++e) exchange_before[plan->exchanges[e].before] = true;
  /* Region expansion: keep only the regions that can touch this class. */
  for (int k = 0; k < p->ncalls; ++k)
    for (int r = 0; r < p->calls[k].nregions; ++r) {
      plan->region_kept[k][r] = st_region_touches_class(&p->calls[k].regions[r], cls);
      plan->region_kept[k][r] ? ++plan->nregions_kept : ++plan->nregions_removed;
    }
  /* Fusion of consecutive stencils. */
  for (int k = 0; k < p->ncalls; ++k) {
    st_group *g = plan->ngroups ? &plan->groups[plan->ngroups - 1] : NULL;
    if (fuse && g && p->calls[g->first].body && can_join(p, g->first, k, exchange_before))
      ++g->count;
    else
      plan->groups[plan->ngroups++] = (st_group){k, 1};
  }
  /* Transients: demoted to a local where written and read only inside one
   * fused loop at the point itself; the rest share pooled arrays. */
  bool used[ST_MAX_FIELDS] = {false};
  for (int k = 0; k < p->ncalls; ++k) used[p->calls[k].out] = true;
  for (int f = p->nstate; f < p->nfields; ++f) {
    if (!used[f]) continue;
    ++plan->ntemps;
    int writer = -1;
    for (int k = 0; k < p->ncalls; ++k)
      if (p->calls[k].out == f) writer = k;
    bool local = fuse && one_writer_per_level(p, plan, f, writer);
    for (int k = 0; k < p->ncalls && local; ++k)
      for (int n = 0; n < p->calls[k].nin; ++n)
        if (p->calls[k].in[n].field == f &&
            (st_plan_group_of(plan, k) != st_plan_group_of(plan, writer) || !zero_offsets(&p->calls[k].in[n])))
          local = false;
    plan->demoted[f] = local;
    plan->ndemoted += plan->demoted[f];
  }
  make_pipes(p, plan, level, exchange_before);
  for (int q = 0; q < plan->npipes; ++q)
    if (st_pipe_is_column(p, plan, &plan->pipes[q])) delay_column_loops(p, plan, &plan->pipes[q]);
  buffer_columns(p, plan);
  assign_slots(p, plan);
  return MAPP_OK;
}

/* ------------------------------------------------------------ traffic */

/* Levels of call c in a column of nz (1 for a 2-D call). */
static double levels_of(const st_program *p, const st_call *c, long nz) {
  if (p->fields[c->out].dims == 2) return 1.0;
  st_grange k = st_call_levels(c);
  long lo = k.lo_at == ST_AT_LO ? k.lo : nz + k.lo, hi = k.hi_at == ST_AT_LO ? k.hi : nz + k.hi;
  return hi > lo ? (double)(hi - lo) : 0.0;
}

static double cells(const st_extent *e, long lx, long ly) {
  return (double)(lx + e->i.hi - e->i.lo) * (double)(ly + e->j.hi - e->j.lo);
}

double st_traffic_eager(const st_program *p, long lx, long ly, long nz) {
  double bytes = 0;
  for (int k = 0; k < p->ncalls; ++k) {
    const st_call *c = &p->calls[k];
    if (!c->body) continue; /* ghost fills touch only the halo: not counted */
    bytes += 8.0 * (c->nin + 1) * cells(&c->extent, lx, ly) * levels_of(p, c, nz);
  }
  return bytes;
}

/* Fields group g moves that its pipe has not touched yet (read[] and
 * written[] carry what the pipe's earlier loops touched: in cache). */
static int group_moves(const st_program *p, const st_plan *plan, const st_group *gr, bool read[ST_MAX_FIELDS],
                       bool written[ST_MAX_FIELDS]) {
  int moved = 0;
  for (int k = gr->first; k < gr->first + gr->count; ++k) {
    const st_call *c = &p->calls[k];
    for (int n = 0; n < c->nin; ++n) {
      int f = c->in[n].field;
      if (plan->demoted[f] || plan->buffered[f] || read[f] || written[f]) continue; /* in registers or cache */
      read[f] = true, ++moved;
    }
    if (!plan->demoted[c->out] && !plan->buffered[c->out] && !written[c->out]) written[c->out] = true, ++moved;
  }
  return moved;
}

double st_traffic_plan(const st_program *p, const st_plan *plan, long lx, long ly, long nz) {
  double bytes = 0;
  for (int q = 0; q < plan->npipes; ++q) {
    const st_pipe *pipe = &plan->pipes[q];
    bool read[ST_MAX_FIELDS] = {false}, written[ST_MAX_FIELDS] = {false};
    for (int g = pipe->first; g < pipe->first + pipe->count; ++g) {
      const st_group *gr = &plan->groups[g];
      const st_call *c0 = &p->calls[gr->first];
      if (c0->body)
        bytes += 8.0 * group_moves(p, plan, gr, read, written) * cells(&c0->extent, lx, ly) *
                 (p->fields[c0->out].dims == 2 ? 1.0 : (double)nz);
    }
  }
  return bytes;
}
