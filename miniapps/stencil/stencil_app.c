/* The driver hooks of mapp-stencil: the timed steps, the invariants, the
 * record and the answer file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stencil.h"

/* The report's headline (mapp_headline): the step generated as one
 * program over its stencils called one at a time; it acts within a rank. */
const mapp_headline stencil_headline = {
    .technique = "orchestrated program over eager stencils",
    .variant = "build-and-run", .backend = "serial",
    .ref_variant = "eager", .ref_backend = "serial",
    .min_ranks = 1,
};

int stencil_hook_compute(mapp_run *run, void *state) {
  (void)run;
  stencil_state *s = state;
  if (s->cfg.mode == STENCIL_MODE_BUILD) return MAPP_OK; /* built in setup; nothing to run */
  return stencil_run_steps(s, s->cfg.steps);
}

int stencil_hook_reset(mapp_run *run, void *state) {
  (void)run;
  return stencil_state_restart(state);
}

/* The answer the write hook writes: each state field's interior, level by
 * level, row by row (the halos are not the answer). */
int stencil_hook_digest(mapp_run *run, void *state, uint64_t *digest) {
  (void)run;
  stencil_state *s = state;
  const stencil_args *a = &s->args;
  for (int f = 0; f < s->program.nstate; ++f) {
    long levels = s->program.fields[f].dims == 3 ? a->nz : 1;
    for (long kz = 0; kz < levels; ++kz)
      for (long j = 0; j < a->ly; ++j)
        mapp_digest_add(digest, s->state_fields[f] + a->origin + kz * a->plane + j * a->stride,
                        sizeof(double) * (size_t)a->lx);
  }
  return MAPP_OK;
}

int stencil_hook_verify(mapp_run *run, void *state) {
  stencil_state *s = state;
  if (s->cfg.mode == STENCIL_MODE_BUILD) return MAPP_OK;
  /* test-only breaks (MAPP_STENCIL_BREAK), each making one check fail, so
   * the tests show every check can fail; not in --help */
  if (s->cfg.brk && s->rank == 0) s->physics->apply_break(s, s->cfg.brk);
  return s->physics->verify(run, s);
}

/* What the plan did, for the record (the seed's memory analysis). */
static json_t *plan_json(const stencil_state *s) {
  const st_plan *p = &s->plan;
  double field_bytes = (double)s->field_elems * 8.0;
  json_t *j = json_object();
  json_object_set_new(j, "stencil_calls", json_integer(s->program.ncalls));
  json_object_set_new(j, "loops", json_integer(p->ngroups));
  json_object_set_new(j, "halo_exchanges", json_integer(p->nexchanges));
  json_object_set_new(j, "regions_kept", json_integer(p->nregions_kept));
  json_object_set_new(j, "regions_removed", json_integer(p->nregions_removed));
  json_object_set_new(j, "temporaries", json_integer(p->ntemps));
  json_object_set_new(j, "temporaries_demoted", json_integer(p->ndemoted));
  json_object_set_new(j, "temporaries_column_buffers", json_integer(p->nbuffered));
  json_object_set_new(j, "pooled_arrays", json_integer(p->nslots));
  json_object_set_new(j, "temporary_bytes_eager", json_real(p->ntemps * field_bytes));
  json_object_set_new(j, "temporary_bytes", json_real(p->nslots * field_bytes));
  json_object_set_new(j, "temporary_bytes_saved", json_real((p->ntemps - p->nslots) * field_bytes));
  return j;
}

/* The code-path classes present over the ranks (at most one build each). */
static int describe_classes(mapp_run *run, const stencil_state *s) {
  int have[ST_NCLASSES] = {0}, all[ST_NCLASSES];
  have[s->cls] = 1;
  MAPP_MPI(MPI_Allreduce(have, all, ST_NCLASSES, MPI_INT, MPI_MAX, s->comm));
  json_t *classes = json_array();
  for (int c = 0; c < ST_NCLASSES && classes; ++c)
    if (all[c]) {
      char cls[16];
      st_class_name(c, cls, sizeof cls);
      if (json_array_append_new(classes, json_string(cls))) json_decref(classes), classes = NULL;
    }
  return mapp_run_set(run, "classes", classes);
}

/* What the step ran as: eager calls, or the orchestrated plan and its builds. */
static int describe_execution(mapp_run *run, const stencil_state *s) {
  if (s->cfg.mode == STENCIL_MODE_EAGER) {
    MAPP_TRY(mapp_run_set(run, "stencil_calls", json_integer(s->eager_calls)));
    return mapp_run_set(run, "halo_exchanges", json_integer(s->eager_exchanges));
  }
  MAPP_TRY(mapp_run_set(run, "plan", plan_json(s)));
  MAPP_TRY(mapp_run_set(run, "builds", json_integer(s->builds_total)));
  MAPP_TRY(mapp_run_set(run, "build_seconds_max", json_real(s->build_s_max)));
  MAPP_TRY(mapp_run_set(run, "load_seconds_max", json_real(s->load_s_max)));
  MAPP_TRY(mapp_run_set(run, "cache", json_string(s->cfg.cache_dir)));
  if (s->rank == 0 && s->key.key[0]) return mapp_run_set(run, "key_rank0", json_string(s->key.key));
  return MAPP_OK;
}

/* Memory traffic per step of this rank's block: eager, fused, and what ran
 * (summed over the ranks into the record's bytes moved). */
static int describe_traffic(mapp_run *run, const stencil_state *s) {
  const stencil_args *a = &s->args;
  double eager_bytes = st_traffic_eager(&s->program, a->lx, a->ly, a->nz);
  st_plan fused;
  MAPP_TRY(st_plan_make(&s->program, s->cls, ST_PLAN_FUSED, &fused));
  double fused_bytes = st_traffic_plan(&s->program, &fused, a->lx, a->ly, a->nz);
  double per_step = s->cfg.mode == STENCIL_MODE_EAGER ? eager_bytes
                                                      : st_traffic_plan(&s->program, &s->plan, a->lx, a->ly, a->nz);
  double total = 0;
  MAPP_MPI(MPI_Allreduce(&per_step, &total, 1, MPI_DOUBLE, MPI_SUM, s->comm));
  run->rec.bytes_moved = total * (double)run->rec.steps;
  MAPP_TRY(mapp_run_set(run, "traffic_bytes_per_step_eager", json_real(eager_bytes)));
  return mapp_run_set(run, "traffic_bytes_per_step_fused", json_real(fused_bytes));
}

int stencil_hook_describe(mapp_run *run, void *state) {
  stencil_state *s = state;
  const stencil_args *a = &s->args;
  long lx_max, ly_max;
  MAPP_MPI(MPI_Allreduce(&a->lx, &lx_max, 1, MPI_LONG, MPI_MAX, s->comm));
  MAPP_MPI(MPI_Allreduce(&a->ly, &ly_max, 1, MPI_LONG, MPI_MAX, s->comm));
  mapp_run_dim(run, "nx", a->nx, lx_max);
  mapp_run_dim(run, "ny", a->ny, ly_max);
  bool ran = s->cfg.mode != STENCIL_MODE_BUILD;
  run->rec.steps = ran ? s->cfg.steps : 0;
  double updates = (double)a->nx * (double)a->ny * (double)run->rec.steps;
  run->rec.fom = ran && run->compute_s > 0 ? updates / run->compute_s : 0.0;
  MAPP_TRY(describe_traffic(run, s));
  char dbg[256], layout[32];
  snprintf(layout, sizeof layout, "%dx%d", s->decomp.dims[1], s->decomp.dims[0]);
  stencil_debug_describe(&s->cfg.debug, &s->program, dbg, sizeof dbg);
  MAPP_TRY(mapp_run_set(run, "mode", json_string(run->variant->name)));
  MAPP_TRY(mapp_run_set(run, "program", json_string(s->program.name)));
  MAPP_TRY(mapp_run_set(run, "layout", json_string(layout)));
  MAPP_TRY(mapp_run_set(run, "debug", json_string(dbg)));
  MAPP_TRY(describe_classes(run, s));
  return describe_execution(run, s);
}

/* What the answer's write gathers through, allocated once for every level
 * of every field: this rank's block of a level, the blocks of a process row
 * as gathered rank by rank, their sizes and offsets, and the whole rows of
 * a field in the file's order (ly x nz x nx), on the row's first rank. */
typedef struct {
  double *block, *packed, *rows;
  int *counts, *displs;
} answer_buffers;

static void answer_buffers_free(answer_buffers *b) {
  free(b->block), free(b->packed), free(b->rows), free(b->counts), free(b->displs);
  *b = (answer_buffers){0};
}

/* Collective over s->comm: a rank that cannot allocate fails every rank,
 * so none enters the gathers and writes the others skip. Each rank's share
 * of a level is the same for every level and field: gathered once here. */
static int answer_buffers_alloc(const stencil_state *s, MPI_Comm row_comm, int row_rank, int row_size,
                                answer_buffers *b) {
  const stencil_args *a = &s->args;
  /* only a row's first rank gathers and writes whole rows */
  long row_elems = row_rank == 0 ? a->nx * a->ly : 0;
  *b = (answer_buffers){0};
  int status = mapp_alloc((void **)&b->block, sizeof(double) * (size_t)(a->lx * a->ly + 1), "output block");
  if (status == MAPP_OK)
    status = mapp_alloc((void **)&b->packed, sizeof(double) * (size_t)(row_elems + 1), "packed rows");
  if (status == MAPP_OK)
    status = mapp_alloc((void **)&b->rows, sizeof(double) * (size_t)(row_elems * a->nz + 1), "output rows");
  if (status == MAPP_OK) status = mapp_calloc((void **)&b->counts, (size_t)row_size, sizeof(int), "counts");
  if (status == MAPP_OK) status = mapp_calloc((void **)&b->displs, (size_t)row_size, sizeof(int), "displs");
  status = mapp_agree_alloc(s->comm, status, "the answer's write buffers");
  if (status != MAPP_OK) {
    answer_buffers_free(b);
    return status;
  }
  int mine = (int)(a->lx * a->ly);
  MAPP_MPI(MPI_Gather(&mine, 1, MPI_INT, b->counts, 1, MPI_INT, 0, row_comm));
  for (int r = 1; r < row_size; ++r) b->displs[r] = b->displs[r - 1] + b->counts[r - 1];
  return MAPP_OK;
}

/* Level kz of field f gathered into whole rows on the first rank of this
 * process row, row j of the level at rows + j * row_stride there. */
static void gather_level(stencil_state *s, int f, long kz, MPI_Comm row_comm, int row_rank, int row_size,
                         answer_buffers *b, double *rows, long row_stride) {
  const stencil_args *a = &s->args;
  const double *level = s->state_fields[f] + kz * a->plane;
  for (long j = 0; j < a->ly; ++j)
    memcpy(b->block + j * a->lx, level + a->origin + j * a->stride, sizeof(double) * (size_t)a->lx);
  /* gathered rank by rank: [rank][j][i]; rearranged into rows below */
  MPI_Gatherv(b->block, (int)(a->lx * a->ly), MPI_DOUBLE, b->packed, b->counts, b->displs, MPI_DOUBLE, 0, row_comm);
  if (row_rank != 0) return;
  long col = 0;
  for (int r = 0; r < row_size; ++r) {
    long w = b->counts[r] / a->ly;
    for (long j = 0; j < a->ly; ++j)
      memcpy(rows + j * row_stride + col, b->packed + b->displs[r] + j * w, sizeof(double) * (size_t)w);
    col += w;
  }
}

/* Each field as one global dataset, ny x nx, or ny x nz x nx for a 3-D
 * one (split by rows across ranks): the ranks of a process row gather
 * their blocks, level by level, into whole rows, whose first rank writes
 * them. */
static int write_field(stencil_state *s, hid_t file, int f, MPI_Comm row_comm, int row_rank, int row_size,
                       answer_buffers *b) {
  const stencil_args *a = &s->args;
  bool vertical = s->program.fields[f].dims == 3;
  long nz = vertical ? a->nz : 1;
  for (long kz = 0; kz < nz; ++kz)
    gather_level(s, f, kz, row_comm, row_rank, row_size, b, b->rows + kz * a->nx, nz * a->nx);
  mapp_h5_slab slab = {.ndims = vertical ? 3 : 2, .global_dims = {a->ny, vertical ? nz : a->nx, a->nx},
                       .first = a->j0, .count = row_rank == 0 ? a->ly : 0, .stride = a->nx * nz};
  return mapp_h5_write_field(file, s->program.fields[f].name, &slab, b->rows);
}

int stencil_hook_write(mapp_run *run, void *state, const char *path) {
  stencil_state *s = state;
  MPI_Comm row_comm;
  MAPP_MPI(MPI_Comm_split(s->comm, s->decomp.coords[0], s->decomp.coords[1], &row_comm));
  int row_rank, row_size;
  MPI_Comm_rank(row_comm, &row_rank);
  MPI_Comm_size(row_comm, &row_size);
  answer_buffers buffers;
  hid_t file;
  int status = answer_buffers_alloc(s, row_comm, row_rank, row_size, &buffers);
  if (status == MAPP_OK) status = mapp_h5_create(s->comm, path, &file);
  if (status == MAPP_OK) {
    for (int f = 0; f < s->program.nstate && status == MAPP_OK; ++f)
      status = write_field(s, file, f, row_comm, row_rank, row_size, &buffers);
    if (status == MAPP_OK) status = mapp_h5_write_provenance(file, s->comm, &run->rec);
    int closed = mapp_h5_close(file);
    if (status == MAPP_OK) status = closed;
  }
  answer_buffers_free(&buffers);
  MPI_Comm_free(&row_comm);
  return status;
}

void stencil_hook_destroy(void *state) { stencil_state_destroy(state); }
