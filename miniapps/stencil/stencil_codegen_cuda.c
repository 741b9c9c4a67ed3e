/* The CUDA generator: the same plan as the C generator (stencil_codegen.c),
 * emitted as CUDA C. Each fused loop becomes one kernel (a thread per
 * point, the same statements in the same order as the C loop body), each
 * kept region one small kernel, launched in order on one stream. Fields are
 * expected in managed memory: before a halo exchange or a debug pass the
 * stream is synchronised and the host callback reads them directly. Bodies
 * come from the same stencil_kernels.h, compiled __host__ __device__, with
 * -fmad=false so no multiply-add is contracted. Regions of stencils with a
 * body are selects inside the kernel, as in the C program; ghost fills
 * (regions only) are kernels of their own. A 3-D group is a kernel with a
 * thread per column, walking its levels in the group's order (sequential
 * in k, parallel in i and j). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stencil.h"

static const char *field(const st_program *p, int f) { return p->fields[f].name; }

/* Arrays touched by calls [first, first + count) (demoted ones are locals). */
static void arrays_of(const st_program *p, const st_plan *plan, int first, int count, bool used[ST_MAX_FIELDS]) {
  memset(used, 0, sizeof(bool) * ST_MAX_FIELDS);
  for (int k = first; k < first + count; ++k) {
    const st_call *c = &p->calls[k];
    if (!plan->demoted[c->out]) used[c->out] = true;
    for (int n = 0; n < c->nin; ++n)
      if (!plan->demoted[c->in[n].field]) used[c->in[n].field] = true;
  }
}

static void params(FILE *o, const st_program *p, const bool used[ST_MAX_FIELDS]) {
  for (int f = 0; f < p->nfields; ++f)
    if (used[f]) fprintf(o, ", double *__restrict__ fld_%s", field(p, f));
}
static void args(FILE *o, const st_program *p, const bool used[ST_MAX_FIELDS]) {
  for (int f = 0; f < p->nfields; ++f)
    if (used[f]) fprintf(o, ", f[%d]", f);
}

/* A thread per point of a 2-D kernel, per column of a 3-D one (whose
 * element index k is then set level by level). */
static void kernel_prologue(FILE *o, const char *lo_i, const char *lo_j, const char *hi_i, const char *hi_j,
                            bool column) {
  fprintf(o, "  const stencil_args *a = &a_;\n  const long s = a->stride;\n  (void)s;\n"
             "  const long i = %s + (long)(blockIdx.x * blockDim.x + threadIdx.x);\n"
             "  const long j = %s + (long)(blockIdx.y * blockDim.y + threadIdx.y);\n"
             "  if (i >= %s || j >= %s) return;\n"
             "  const long gj = a->j0 + j, gi = a->i0 + i%s;\n"
             "  (void)gi; (void)gj;\n", lo_i, lo_j, hi_i, hi_j, column ? "" : ", k = a->origin + j * s + i");
}

/* The levels of 3-D group gr in one thread's column: segment by segment
 * (st_group_segments), in the group's direction, the calls active on
 * each segment in order, as the C program's level loops. */
static void emit_column(FILE *o, const st_program *p, const st_plan *plan, const st_group *gr) {
  st_level_end lo[2 * ST_MAX_CALLS], hi[2 * ST_MAX_CALLS];
  bool down;
  int n = st_group_segments(p, gr, lo, hi, &down);
  for (int m = 0; m < n; ++m) {
    stencil_emit_level_loop(o, "  ", lo[m], hi[m], down);
    fprintf(o, "        const long k = a->origin + kz * a->plane + j * s + i;\n");
    stencil_emit_segment_calls(o, p, plan, gr, lo[m], hi[m], true);
    fprintf(o, "  }\n");
  }
}

static void emit_kernels(FILE *o, const st_program *p, const st_plan *plan) {
  bool used[ST_MAX_FIELDS];
  for (int g = 0; g < plan->ngroups; ++g) {
    const st_group *gr = &plan->groups[g];
    const st_call *c0 = &p->calls[gr->first];
    if (c0->body) {
      arrays_of(p, plan, gr->first, gr->count, used);
      fprintf(o, "__global__ void group%d(stencil_args a_, long i_lo, long i_hi, long j_lo, long j_hi", g);
      params(o, p, used);
      fprintf(o, ") {\n");
      bool column = p->fields[c0->out].dims == 3;
      kernel_prologue(o, "i_lo", "j_lo", "i_hi", "j_hi", column);
      if (column) emit_column(o, p, plan, gr);
      for (int k = gr->first; k < gr->first + gr->count && !column; ++k) stencil_emit_point_call(o, p, plan, k, true);
      fprintf(o, "}\n");
    }
    for (int k = gr->first; k < gr->first + gr->count; ++k)
      for (int r = 0; r < p->calls[k].nregions && !st_regions_inline(&p->calls[k]); ++r) {
        if (!plan->region_kept[k][r]) continue;
        arrays_of(p, plan, k, 1, used);
        fprintf(o, "__global__ void region_c%d_r%d(stencil_args a_, long ri_lo, long ri_hi, long rj_lo, long rj_hi", k, r);
        params(o, p, used);
        fprintf(o, ") {\n");
        kernel_prologue(o, "ri_lo", "rj_lo", "ri_hi", "rj_hi", false);
        fprintf(o, "  fld_%s[k] = ST_CALL_%s(P_c%d, V_c%d);\n}\n", field(p, p->calls[k].out), p->calls[k].regions[r].body, k, k);
      }
  }
}

static void launch_box(FILE *o, const st_program *p, const char *kernel, const char *box,
                       const bool used[ST_MAX_FIELDS]) {
  fprintf(o, "    if (%s_i1 > %s_i0 && %s_j1 > %s_j0) {\n", box, box, box, box);
  fprintf(o, "      dim3 block(32, 8), grid((unsigned)((%s_i1 - %s_i0 + 31) / 32), (unsigned)((%s_j1 - %s_j0 + 7) / 8));\n",
          box, box, box, box);
  fprintf(o, "      %s<<<grid, block, 0, stream>>>(*a, %s_i0, %s_i1, %s_j0, %s_j1", kernel, box, box, box, box);
  args(o, p, used);
  fprintf(o, ");\n    }\n");
}

static void emit_debug(FILE *o, const st_program *p, const st_call *c, const stencil_debug *d) {
  if (!stencil_debug_any(d)) return;
  fprintf(o, "    if (cudaStreamSynchronize(stream) != cudaSuccess) return 3;\n    { double *fld = f[%d]; (void)fld;\n", c->out);
  /* ghost fills (region-only) are not scanned in the CUDA program */
  if (c->body) {
    bool levels = p->fields[c->out].dims == 3;
    if (levels) { /* each level of the call's interval */
      st_grange r = st_call_levels(c);
      fprintf(o, "    for (long kz = ");
      stencil_emit_gend(o, r.lo_at, r.lo, "nz", "0");
      fprintf(o, "; kz < ");
      stencil_emit_gend(o, r.hi_at, r.hi, "nz", "a->nz");
      fprintf(o, "; ++kz) {\n");
    }
    const char *x = levels ? "fld + kz * a->plane" : "fld";
    if (d->nan)
      fprintf(o, "    st_debug_scan(a, hk, ST_CHECK_NAN, \"%s\", \"%s\", %s, e_i0, e_i1, e_j0, e_j1);\n", c->name,
              field(p, c->out), x);
    if (d->negative[c->out])
      fprintf(o, "    st_debug_scan(a, hk, ST_CHECK_NEGATIVE, \"%s\", \"%s\", %s, e_i0, e_i1, e_j0, e_j1);\n", c->name,
              field(p, c->out), x);
    if (levels) fprintf(o, "    }\n");
  }
  if (d->trace) fprintf(o, "    st_debug_trace(a, hk, \"%s\", \"%s\", fld);\n", c->name, field(p, c->out));
  if (d->progress) fprintf(o, "    st_debug_progress(hk, \"%s\");\n", c->name);
  fprintf(o, "    }\n");
}

static void emit_host(FILE *o, const st_program *p, const st_plan *plan, const stencil_debug *d) {
  fprintf(o, "extern \"C\" int stencil_generated_step(const stencil_args *a, double *const *f, stencil_hooks *hk) {\n"
             "  static cudaStream_t stream = 0;\n"
             "  if (!stream && cudaStreamCreate(&stream) != cudaSuccess) return 3;\n");
  bool used[ST_MAX_FIELDS];
  int e = 0;
  for (int g = 0; g < plan->ngroups; ++g) {
    const st_group *gr = &plan->groups[g];
    while (e < plan->nexchanges && plan->exchanges[e].before == gr->first) {
      const st_exchange *x = &plan->exchanges[e++];
      fprintf(o, "  { /* halo exchange on the host, after the stream drains */\n    static const int xf[] = {");
      for (int m = 0; m < x->nfields; ++m) fprintf(o, "%s%d", m ? ", " : "", x->fields[m]);
      fprintf(o, "};\n    if (cudaStreamSynchronize(stream) != cudaSuccess || hk->halo(hk->halo_ctx, xf, %d)) return 3;\n  }\n",
              x->nfields);
    }
    const st_call *c0 = &p->calls[gr->first];
    const st_extent pad = {{-ST_HALO, ST_HALO}, {-ST_HALO, ST_HALO}};
    const st_extent *ext = c0->body ? &c0->extent : &pad;
    fprintf(o, "  { /* group %d */\n    const long e_i0 = %d, e_i1 = a->lx + %d, e_j0 = %d, e_j1 = a->ly + %d;\n"
               "    (void)e_i0; (void)e_i1; (void)e_j0; (void)e_j1;\n",
            g, ext->i.lo, ext->i.hi, ext->j.lo, ext->j.hi);
    if (c0->body) {
      arrays_of(p, plan, gr->first, gr->count, used);
      char kernel[32];
      snprintf(kernel, sizeof kernel, "group%d", g);
      launch_box(o, p, kernel, "e", used);
    }
    for (int k = gr->first; k < gr->first + gr->count; ++k) {
      const st_call *c = &p->calls[k];
      for (int r = 0; r < c->nregions && !st_regions_inline(c); ++r) {
        if (!plan->region_kept[k][r]) continue;
        const st_region *rg = &c->regions[r];
        static const char *const in[4] = {"e_i0", "e_i1", "e_j0", "e_j1"}, *const out[4] = {"r_i0", "r_i1", "r_j0", "r_j1"};
        fprintf(o, "    {\n");
        stencil_emit_region_box(o, rg, in, out);
        arrays_of(p, plan, k, 1, used);
        char kernel[48];
        snprintf(kernel, sizeof kernel, "region_c%d_r%d", k, r);
        launch_box(o, p, kernel, "r", used);
        fprintf(o, "    }\n");
      }
    }
    for (int k = gr->first; k < gr->first + gr->count; ++k) emit_debug(o, p, &p->calls[k], d);
    fprintf(o, "  }\n");
  }
  fprintf(o, "  if (cudaStreamSynchronize(stream) != cudaSuccess) return 3;\n"
             "  return cudaGetLastError() == cudaSuccess ? 0 : 3;\n}\n");
}

int stencil_generate_cuda(const st_program *p, const st_plan *plan, const stencil_debug *debug, char **source) {
  char *buf = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&buf, &len);
  if (!o) return mapp_fail(MAPP_ERR_SYSTEM, "cannot open a memory stream for the generated source");
  char cls[16], dbg[256];
  st_class_name(plan->cls, cls, sizeof cls);
  stencil_debug_describe(debug, p, dbg, sizeof dbg);
  fprintf(o, "/* Generated by mapp-stencil: the %s step for class '%s' as CUDA C, debug passes %s:\n"
             " * %d kernels for %d stencil calls, %d of %d temporaries demoted to registers. */\n",
          p->name, cls, dbg, plan->ngroups, p->ncalls, plan->ndemoted, plan->ntemps);
  fprintf(o, "#include <cuda_runtime.h>\n#define ST_DEVICE __host__ __device__\n#include \"%s\"\n\n", p->bodies);
  fprintf(o, "extern \"C\" const int stencil_generated_nfields = %d;\n", p->nfields);
  fprintf(o, "extern \"C\" const int stencil_generated_nslots = %d;\n", plan->nslots);
  fprintf(o, "extern \"C\" const int stencil_generated_slot[%d] = {", p->nfields);
  for (int f = 0; f < p->nfields; ++f) fprintf(o, "%s%d", f ? ", " : "", plan->slot[f]);
  fprintf(o, "};\n\n");
  stencil_emit_call_macros(o, p, plan);
  emit_kernels(o, p, plan);
  emit_host(o, p, plan, debug);
  if (fclose(o) != 0) {
    free(buf);
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot write the generated source");
  }
  *source = buf;
  return MAPP_OK;
}
