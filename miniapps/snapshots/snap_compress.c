/* Snapshot compression: zstd (lossless, at a level) and zfp (lossy, fixed
 * accuracy or fixed rate), one codec per thread (they keep contexts). A
 * snapshot that does not shrink is stored raw, so the stored size never
 * exceeds the raw one and the layers' accounting has an upper bound. */
#include <stdlib.h>
#include <string.h>
#include <zfp.h>
#include <zstd.h>

#include "snapshots.h"

struct snap_codec {
  snap_compression kind;
  int zstd_level;
  double zfp_tolerance, zfp_rate;
  int dims;
  size_t n[3];          /* interior extents x, y, z */
  size_t raw, bound;
  ZSTD_CCtx *cctx;
  ZSTD_DCtx *dctx;
};

static zfp_field *zfp_field_for(int dims, const size_t n[3], double *data) {
  /* zfp's first extent is the fastest: z, then y, then x. */
  if (dims == 2) return zfp_field_2d(data, zfp_type_double, n[2], n[0]);
  return zfp_field_3d(data, zfp_type_double, n[2], n[1], n[0]);
}

static void set_zfp_mode(zfp_stream *z, int dims, double tolerance, double rate) {
  if (tolerance > 0) zfp_stream_set_accuracy(z, tolerance);
  else zfp_stream_set_rate(z, rate, zfp_type_double, (unsigned)dims, zfp_false);
}

static size_t zfp_bound_bytes(int dims, const size_t n[3], double tolerance, double rate) {
  zfp_stream *z = zfp_stream_open(NULL);
  zfp_field *f = zfp_field_for(dims, n, NULL);
  set_zfp_mode(z, dims, tolerance, rate);
  size_t bytes = zfp_stream_maximum_size(z, f);
  zfp_field_free(f);
  zfp_stream_close(z);
  return bytes;
}

int snap_codec_create(snap_codec **out, const snap_store_config *cfg, const snap_grid *g) {
  snap_codec *c;
  MAPP_TRY(mapp_calloc((void **)&c, 1, sizeof *c, "a codec"));
  *out = c;
  c->kind = cfg->compression, c->zstd_level = cfg->zstd_level;
  c->zfp_tolerance = cfg->zfp_tolerance, c->zfp_rate = cfg->zfp_rate, c->dims = g->dims;
  for (int d = 0; d < 3; d++) c->n[d] = (size_t)g->n[d];
  c->raw = (size_t)g->interior * sizeof(double);
  c->bound = c->raw;
  if (c->kind == SNAP_COMP_ZSTD) {
    size_t b = ZSTD_compressBound(c->raw);
    if (b > c->bound) c->bound = b;
    c->cctx = ZSTD_createCCtx();
    c->dctx = ZSTD_createDCtx();
    if (!c->cctx || !c->dctx) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory creating zstd contexts");
  } else if (c->kind == SNAP_COMP_ZFP) {
    size_t b = zfp_bound_bytes(c->dims, c->n, c->zfp_tolerance, c->zfp_rate);
    if (b > c->bound) c->bound = b;
  }
  return MAPP_OK;
}

void snap_codec_free(snap_codec *c) {
  if (!c) return;
  ZSTD_freeCCtx(c->cctx);
  ZSTD_freeDCtx(c->dctx);
  free(c);
}

size_t snap_codec_bound(const snap_codec *c) { return c->bound; }

static int zfp_run(int dims, const size_t n[3], double tolerance, double rate, double *raw, void *buf, size_t cap,
                   bool compress, size_t *bytes) {
  zfp_stream *z = zfp_stream_open(NULL);
  zfp_field *f = zfp_field_for(dims, n, raw);
  set_zfp_mode(z, dims, tolerance, rate);
  bitstream *bs = stream_open(buf, cap);
  zfp_stream_set_bit_stream(z, bs);
  zfp_stream_rewind(z);
  size_t done = compress ? zfp_compress(z, f) : zfp_decompress(z, f);
  stream_close(bs);
  zfp_field_free(f);
  zfp_stream_close(z);
  if (!done) return mapp_fail(MAPP_ERR_SYSTEM, "zfp failed to %s a snapshot of %zu values",
                              compress ? "compress" : "decompress", n[0] * n[1] * n[2]);
  *bytes = done;
  return MAPP_OK;
}

int snap_codec_compress(snap_codec *c, const double *raw, void *dst, size_t *stored, uint32_t *codec) {
  size_t bytes = 0;
  if (c->kind == SNAP_COMP_ZSTD) {
    bytes = ZSTD_compressCCtx(c->cctx, dst, c->bound, raw, c->raw, c->zstd_level);
    if (ZSTD_isError(bytes)) return mapp_fail(MAPP_ERR_SYSTEM, "zstd failed on a snapshot: %s", ZSTD_getErrorName(bytes));
  } else if (c->kind == SNAP_COMP_ZFP) {
    MAPP_TRY(zfp_run(c->dims, c->n, c->zfp_tolerance, c->zfp_rate, (double *)raw, dst, c->bound, true, &bytes));
  }
  if (c->kind == SNAP_COMP_NONE || bytes >= c->raw) {
    memcpy(dst, raw, c->raw);
    *stored = c->raw, *codec = SNAP_COMP_NONE;
    return MAPP_OK;
  }
  *stored = bytes, *codec = (uint32_t)c->kind;
  return MAPP_OK;
}

static int decompress(int dims, const size_t n[3], double tol, double rate, ZSTD_DCtx *dctx, uint32_t codec,
                      const void *src, size_t stored, double *raw) {
  size_t raw_bytes = n[0] * n[1] * n[2] * sizeof(double);
  if (codec == SNAP_COMP_NONE) {
    if (stored != raw_bytes)
      return mapp_fail(MAPP_ERR_VERIFY, "raw snapshot holds %zu bytes, expected %zu", stored, raw_bytes);
    memcpy(raw, src, raw_bytes);
    return MAPP_OK;
  }
  if (codec == SNAP_COMP_ZSTD) {
    size_t got = dctx ? ZSTD_decompressDCtx(dctx, raw, raw_bytes, src, stored) : ZSTD_decompress(raw, raw_bytes, src, stored);
    if (ZSTD_isError(got) || got != raw_bytes)
      return mapp_fail(MAPP_ERR_VERIFY, "zstd could not restore a snapshot of %zu bytes from %zu", raw_bytes, stored);
    return MAPP_OK;
  }
  if (codec == SNAP_COMP_ZFP) {
    size_t used;
    return zfp_run(dims, n, tol, rate, raw, (void *)src, stored, false, &used);
  }
  return mapp_fail(MAPP_ERR_VERIFY, "unknown snapshot codec %u", codec);
}

int snap_codec_decompress(snap_codec *c, uint32_t codec, const void *src, size_t stored, double *raw) {
  return decompress(c->dims, c->n, c->zfp_tolerance, c->zfp_rate, c->dctx, codec, src, stored, raw);
}

int snap_decompress_file_entry(const snap_file_header *hdr, uint32_t codec, const void *src, size_t stored,
                               double *raw) {
  size_t n[3] = {(size_t)hdr->local[0], (size_t)hdr->local[1], (size_t)hdr->local[2]};
  return decompress((int)hdr->dims, n, hdr->zfp_tolerance, hdr->zfp_rate, NULL, codec, src, stored, raw);
}
