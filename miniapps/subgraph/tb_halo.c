/* What a rank keeps of the points it exchanges, so that every table it
 * holds is sized by its own points and those, never by the global width.
 * Under SimGrid every simulated rank is a thread of one process: tables of
 * the global width (the tag ring, the message tables, the eager variant's
 * events, the copy buffers) grew as ranks squared, ~51 GB at 1,024 ranks of
 * the weak tiny case.
 *
 *   halo     the points of other ranks that this rank's tasks read at some
 *            timestep, ascending: the ring has a column for each, after the
 *            own points, and the message tables a slot for each;
 *   readers  per own point, the points of other ranks that read it at some
 *            timestep, ascending: where a finished task's output may go
 *            (the exact timestep's dependences decide), without a scan of
 *            the width per task;
 *   copies   per own point, the window of own points it may copy from
 *            (--copy-bytes input slots).
 *
 * "At some timestep": the dependences of every t >= 1 are those of a few
 * representative timesteps (hull_steps), with random_nearest taken as its
 * whole window (each timestep keeps a subset of it). */
#include <stdlib.h>
#include <string.h>

#include "subgraph.h"

/* The configuration whose dependences at t = 1 .. hull_steps cover every
 * timestep's: random_nearest's are a subset of nearest's window. */
static tb_config hull_config(const tb_config *cfg) {
  tb_config hc = *cfg;
  if (hc.pattern == TB_RANDOM_NEAREST) hc.pattern = TB_NEAREST;
  return hc;
}

/* fft reads p XOR 2^((t - 1) mod levels): its levels are all its
 * timesteps; every other pattern reads the same points at every t >= 1. */
static long hull_steps(const tb_config *hc) {
  int levels = tb_log2_ceil(hc->width);
  return hc->pattern == TB_FFT && levels > 0 ? levels : 1;
}

static bool is_own(const tb_state *st, long q) { return q >= st->first && q < st->first + st->count; }

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Sorts and drops repeats; the new length. */
static long sort_unique(long *v, long n) {
  if (n == 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_long);
  long m = 1;
  for (long i = 1; i < n; ++i)
    if (v[i] != v[m - 1]) v[m++] = v[i];
  return m;
}

/* Appends x, compacting (sort and unique) when full, so the buffer stays
 * near the halo's size even where every task reads many remote points. */
static int push_point(long **v, long *n, long *cap, long x) {
  if (*n == *cap) {
    *n = sort_unique(*v, *n);
    if (*n * 2 > *cap) {
      long grown = *cap * 2;
      long *bigger = realloc(*v, sizeof *bigger * (size_t)grown);
      if (!bigger) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory for a halo of %ld points", grown);
      *v = bigger, *cap = grown;
    }
  }
  (*v)[(*n)++] = x;
  return MAPP_OK;
}

static int build_halo(tb_state *st, const tb_config *hc, long *deps) {
  long n = 0, cap = 64, *v;
  MAPP_TRY(mapp_alloc((void **)&v, sizeof *v * (size_t)cap, "the halo"));
  int status = MAPP_OK;
  for (long pl = 0; status == MAPP_OK && pl < st->count; ++pl)
    for (long k = 0; status == MAPP_OK && k < hull_steps(hc); ++k) {
      int nd = tb_deps_of(hc, 1 + k, st->first + pl, deps);
      for (int i = 0; status == MAPP_OK && i < nd; ++i)
        if (!is_own(st, deps[i])) status = push_point(&v, &n, &cap, deps[i]);
    }
  if (status != MAPP_OK) {
    free(v);
    return status;
  }
  st->halo = v, st->nhalo = sort_unique(v, n);
  return MAPP_OK;
}

long tb_halo_index(const tb_state *st, long q) {
  long lo = 0, hi = st->nhalo; /* the halo is ascending */
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if (st->halo[mid] < q) lo = mid + 1;
    else hi = mid;
  }
  return lo < st->nhalo && st->halo[lo] == q ? lo : -1;
}

/* One pass over every point of other ranks (once, at setup: the inverse of
 * the dependences has no closed form shared by the patterns): count (fill
 * == NULL) or record, per own point, the remote points that read it. last
 * keeps a reader from being counted twice for one own point. */
static void readers_pass(tb_state *st, const tb_config *hc, long *deps, long *last, long *fill) {
  for (long pl = 0; pl < st->count; ++pl) last[pl] = -1;
  for (long q = 0; q < st->cfg.width; ++q) {
    if (is_own(st, q)) continue;
    for (long k = 0; k < hull_steps(hc); ++k) {
      int nd = tb_deps_of(hc, 1 + k, q, deps);
      for (int i = 0; i < nd; ++i) {
        long pl = deps[i] - st->first;
        if (!is_own(st, deps[i]) || last[pl] == q) continue;
        last[pl] = q;
        if (fill) st->readers[fill[pl]++] = q;
        else st->readers_first[pl + 1]++;
      }
    }
  }
}

static int build_readers(tb_state *st, const tb_config *hc, long *deps) {
  long C = st->count, *last = NULL, *fill = NULL;
  MAPP_TRY(mapp_calloc((void **)&st->readers_first, (size_t)C + 1, sizeof(long), "the readers"));
  MAPP_TRY(mapp_calloc((void **)&last, (size_t)C, sizeof(long), "the readers"));
  if (st->nranks > 1) readers_pass(st, hc, deps, last, NULL);
  for (long pl = 0; pl < C; ++pl) st->readers_first[pl + 1] += st->readers_first[pl];
  int status = mapp_calloc((void **)&st->readers, (size_t)st->readers_first[C] + 1, sizeof(long), "the readers");
  if (status == MAPP_OK) status = mapp_alloc((void **)&fill, sizeof(long) * (size_t)C, "the readers");
  if (status == MAPP_OK && st->nranks > 1) {
    memcpy(fill, st->readers_first, sizeof(long) * (size_t)C);
    readers_pass(st, hc, deps, last, fill);
  }
  free(last), free(fill);
  return status;
}

/* --copy-bytes: per own point, the window of other own points it may copy
 * from, and where its input slots start (two windows: one per parity). */
static int build_copy_windows(tb_state *st, const tb_config *hc, long *deps) {
  long C = st->count;
  MAPP_TRY(mapp_calloc((void **)&st->copy_lo, (size_t)C, sizeof(long), "copy windows"));
  MAPP_TRY(mapp_calloc((void **)&st->copy_at, (size_t)C + 1, sizeof(long), "copy windows"));
  for (long pl = 0; pl < C; ++pl) {
    long p = st->first + pl, lo = -1, hi = -2;
    for (long k = 0; k < hull_steps(hc); ++k) {
      int nd = tb_deps_of(hc, 1 + k, p, deps);
      for (int i = 0; i < nd; ++i)
        if (deps[i] != p && is_own(st, deps[i])) {
          if (lo < 0 || deps[i] < lo) lo = deps[i];
          if (deps[i] > hi) hi = deps[i];
        }
    }
    st->copy_lo[pl] = lo;
    st->copy_at[pl + 1] = st->copy_at[pl] + 2 * (hi - lo + 1);
  }
  return MAPP_OK;
}

/* A dense ring row where the own points and the halo span at most twice
 * their number (a contiguous neighbourhood: stencils, nearest, one rank):
 * a task then finds an input's column by subtraction alone. Elsewhere
 * (spread, tree, fft, all_to_all, periodic ends across many ranks) a dense
 * row would span the width: the own points, then the halo. */
static void lay_out_ring(tb_state *st) {
  long lo = st->first, hi = st->first + st->count - 1, n = st->count + st->nhalo;
  if (st->nhalo && st->halo[0] < lo) lo = st->halo[0];
  if (st->nhalo && st->halo[st->nhalo - 1] > hi) hi = st->halo[st->nhalo - 1];
  st->ring_dense = hi - lo + 1 <= 2 * n;
  st->ring_lo = st->ring_dense ? lo : st->first;
  st->ring_width = st->ring_dense ? hi - lo + 1 : n;
}

int tb_halo_create(tb_state *st) {
  tb_config hc = hull_config(&st->cfg);
  long *deps = st->dep_buf + (long)st->cfg.workers * st->max_deps; /* the host's buffer */
  MAPP_TRY(build_halo(st, &hc, deps));
  MAPP_TRY(build_readers(st, &hc, deps));
  lay_out_ring(st);
  if (st->cfg.copy_bytes) MAPP_TRY(build_copy_windows(st, &hc, deps));
  return MAPP_OK;
}

bool tb_reads(const tb_state *st, long t, long q, long p, long *deps) {
  int n = tb_deps(&st->cfg, t, q, deps);
  for (int i = 0; i < n; ++i)
    if (deps[i] == p) return true;
  return false;
}

bool tb_feeds_remote(const tb_state *st, long t, long p) {
  if (st->nranks == 1 || t + 1 >= st->cfg.steps) return false;
  long *deps = st->dep_buf + (long)st->cfg.workers * st->max_deps, pl = p - st->first; /* the host's buffer */
  for (long i = st->readers_first[pl]; i < st->readers_first[pl + 1]; ++i)
    if (tb_reads(st, t + 1, st->readers[i], p, deps)) return true;
  return false;
}
