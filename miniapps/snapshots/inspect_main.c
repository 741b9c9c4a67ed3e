/* mapp-snapshots-inspect FILE [--step T [--output snap.h5]]: the disk
 * layer's data accessor (the seed's get_disk_data). Alone it prints the
 * header and verifies the whole file: exit 0 only for a complete file whose
 * every snapshot matches its checksum, 1 otherwise (a killed run's file, a
 * truncated or corrupted one). With --step it reads one snapshot back,
 * checks it, and writes it to HDF5 with --output. A file that is not a
 * snapshot file at all (no header, wrong magic or version, a header whose
 * own checksum fails) is bad input: exit 2. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>

#include "snapshots.h"

static const char *prog = "mapp-snapshots-inspect";

typedef struct {
  int fd;
  const char *path;
  size_t size;
  snap_file_header h;
  snap_file_entry *index;
} snap_file;

static int read_at(const snap_file *f, void *buf, size_t bytes, size_t offset, const char *what) {
  if (offset + bytes > f->size)
    return mapp_fail(MAPP_ERR_VERIFY, "%s: %s at bytes %zu..%zu lies beyond the end of the file (%zu bytes): truncated",
                     f->path, what, offset, offset + bytes, f->size);
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = pread(f->fd, (char *)buf + done, bytes - done, (off_t)(offset + done));
    if (n <= 0) return mapp_fail(MAPP_ERR_SYSTEM, "%s: reading %s: %s", f->path, what, n < 0 ? strerror(errno) : "end of file");
    done += (size_t)n;
  }
  return MAPP_OK;
}

static int open_file(const char *path, snap_file *f) {
  memset(f, 0, sizeof *f);
  f->path = path;
  f->fd = open(path, O_RDONLY);
  struct stat st;
  if (f->fd < 0 || fstat(f->fd, &st)) return mapp_fail(MAPP_ERR_INPUT, "cannot open %s: %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode)) return mapp_fail(MAPP_ERR_INPUT, "%s is not a regular file", path);
  f->size = (size_t)st.st_size;
  if (f->size < sizeof f->h)
    return mapp_fail(MAPP_ERR_INPUT, "%s is not a snapshot file: %zu bytes, shorter than a header", path, f->size);
  MAPP_TRY(read_at(f, &f->h, sizeof f->h, 0, "the header"));
  if (memcmp(f->h.magic, SNAP_FILE_MAGIC, 8))
    return mapp_fail(MAPP_ERR_INPUT, "%s is not a snapshot file (no %s magic)", path, SNAP_FILE_MAGIC);
  if (f->h.version != SNAP_FILE_VERSION)
    return mapp_fail(MAPP_ERR_INPUT, "%s: snapshot file version %u, this tool reads %u", path, f->h.version,
                     SNAP_FILE_VERSION);
  if (snap_checksum(&f->h, offsetof(snap_file_header, header_checksum)) != f->h.header_checksum)
    return mapp_fail(MAPP_ERR_INPUT, "%s: the header fails its checksum (corrupted)", path);
  return MAPP_OK;
}

static void print_header(const snap_file *f) {
  const snap_file_header *h = &f->h;
  printf("%s: %s, %u-D, space order %u, rank %u of %u\n", f->path, h->flags & SNAP_FILE_COMPLETE ? "complete" : "INCOMPLETE",
         h->dims, h->space_order, h->rank, h->nranks);
  if (h->dims == 3)
    printf("  grid %lld x %lld x %lld, subdomain x %lld..%lld (%lld x %lld x %lld)\n", (long long)h->global[0],
           (long long)h->global[1], (long long)h->global[2], (long long)h->first, (long long)(h->first + h->local[0] - 1),
           (long long)h->local[0], (long long)h->local[1], (long long)h->local[2]);
  else
    printf("  grid %lld x %lld, subdomain x %lld..%lld (%lld x %lld)\n", (long long)h->global[0], (long long)h->global[2],
           (long long)h->first, (long long)(h->first + h->local[0] - 1), (long long)h->local[0], (long long)h->local[2]);
  printf("  %lld steps, every %lld saved: %lld snapshots of %llu bytes, %lld on this disk file; compression %s\n",
         (long long)h->nt, (long long)h->save_every, (long long)h->nsnap, (unsigned long long)h->raw_bytes,
         (long long)h->on_disk, snap_compression_name((snap_compression)h->compression));
}

static int read_index(snap_file *f) {
  const snap_file_header *h = &f->h;
  if (!(h->flags & SNAP_FILE_COMPLETE))
    return mapp_fail(MAPP_ERR_VERIFY, "%s is incomplete: the run that wrote it did not finish its forward", f->path);
  if (h->on_disk < 0 || h->on_disk > h->nsnap)
    return mapp_fail(MAPP_ERR_VERIFY, "%s: index of %lld entries for %lld snapshots", f->path, (long long)h->on_disk,
                     (long long)h->nsnap);
  size_t bytes = sizeof(snap_file_entry) * (size_t)h->on_disk;
  MAPP_TRY(mapp_calloc((void **)&f->index, (size_t)h->on_disk + 1, sizeof(snap_file_entry), "the index"));
  MAPP_TRY(read_at(f, f->index, bytes, (size_t)h->index_offset, "the index"));
  if (snap_checksum(f->index, bytes) != h->index_checksum)
    return mapp_fail(MAPP_ERR_VERIFY, "%s: the index fails its checksum", f->path);
  return MAPP_OK;
}

/* Entry e's stored bytes, checked against its checksum. */
static int read_entry(const snap_file *f, const snap_file_entry *e, unsigned char **data) {
  if (e->stored <= 0 || (uint64_t)e->stored > f->h.raw_bytes)
    return mapp_fail(MAPP_ERR_VERIFY, "%s: snapshot %lld claims %lld bytes", f->path, (long long)e->snapshot,
                     (long long)e->stored);
  MAPP_TRY(mapp_alloc((void **)data, (size_t)e->stored, "a snapshot"));
  char what[64];
  snprintf(what, sizeof what, "snapshot %lld", (long long)e->snapshot);
  MAPP_TRY(read_at(f, *data, (size_t)e->stored, (size_t)e->offset, what));
  if (snap_checksum(*data, (size_t)e->stored) != e->checksum)
    return mapp_fail(MAPP_ERR_VERIFY, "%s: snapshot %lld (step %lld) fails its checksum", f->path,
                     (long long)e->snapshot, (long long)((e->snapshot + 1) * f->h.save_every));
  return MAPP_OK;
}

static int verify_all(const snap_file *f) {
  for (long i = 0; i < f->h.on_disk; i++) {
    unsigned char *data = NULL;
    int status = read_entry(f, &f->index[i], &data);
    free(data);
    MAPP_TRY(status);
  }
  printf("  all %lld snapshots on disk match their checksums\n", (long long)f->h.on_disk);
  return MAPP_OK;
}

static int write_snapshot(const snap_file *f, long step, const double *u, const char *out) {
  const snap_file_header *h = &f->h;
  hid_t file;
  MAPP_TRY(mapp_h5_create(MPI_COMM_SELF, out, &file));
  mapp_h5_slab slab = {.ndims = (int)h->dims, .first = 0, .count = h->local[0], .stride = h->local[1] * h->local[2]};
  slab.global_dims[0] = h->local[0];
  if (h->dims == 3) slab.global_dims[1] = h->local[1], slab.global_dims[2] = h->local[2];
  else slab.global_dims[1] = h->local[2];
  int status = mapp_h5_write_field(file, "snapshot", &slab, u);
  if (!status) status = mapp_h5_attr_long(file, "step", step);
  if (!status) status = mapp_h5_attr_long(file, "first_x", h->first);
  if (!status) status = mapp_h5_attr_long(file, "rank", h->rank);
  int closed = mapp_h5_close(file);
  return status ? status : closed;
}

static int read_step(const snap_file *f, long step, const char *out) {
  const snap_file_header *h = &f->h;
  if (step < h->save_every || step > h->nt || step % h->save_every)
    return mapp_fail(MAPP_ERR_INPUT, "--step %ld: the file saved every %lld-th of steps 1..%lld", step,
                     (long long)h->save_every, (long long)h->nt);
  long want = step / h->save_every - 1;
  const snap_file_entry *e = NULL;
  for (long i = 0; i < h->on_disk; i++)
    if (f->index[i].snapshot == want) e = &f->index[i];
  if (!e) {
    long lo = h->on_disk ? (long)f->index[0].snapshot : -1, hi = h->on_disk ? (long)f->index[h->on_disk - 1].snapshot : -1;
    return mapp_fail(MAPP_ERR_INPUT, "--step %ld is not in %s (it stayed in a faster layer); the file holds steps %ld..%ld",
                     step, f->path, (lo + 1) * (long)h->save_every, (hi + 1) * (long)h->save_every);
  }
  unsigned char *data = NULL;
  double *u = NULL;
  int status = read_entry(f, e, &data);
  if (!status) status = mapp_alloc((void **)&u, h->raw_bytes, "the snapshot");
  if (!status) status = snap_decompress_file_entry(h, e->codec, data, (size_t)e->stored, u);
  if (!status) {
    double lo = INFINITY, hi = -INFINITY, sq = 0;
    for (size_t i = 0; i < h->raw_bytes / 8; i++) lo = fmin(lo, u[i]), hi = fmax(hi, u[i]), sq += u[i] * u[i];
    printf("  step %ld: min %.6e, max %.6e, l2 %.6e (checksum ok)\n", step, lo, hi, sqrt(sq));
    if (out) status = write_snapshot(f, step, u, out);
  }
  free(data), free(u);
  return status;
}

int main(int argc, char **argv) {
  long step = 0;
  const char *out = NULL;
  const mapp_option opts[] = {
      {.name = "step", .kind = MAPP_OPT_LONG, .dest = &step, .min = 1, .max = 1L << 40, .default_text = "none",
       .help = "read this time step's snapshot back"},
      {.name = "output", .kind = MAPP_OPT_STRING, .dest = &out, .default_text = "none",
       .help = "with --step: write the snapshot to this HDF5 file (dataset 'snapshot')"},
      MAPP_OPTION_END,
  };
  MPI_Init(&argc, &argv);
  mapp_cli_result cli = {0};
  int status = mapp_cli_parse(prog, "Verify a snapshots disk-layer file, or read one snapshot back.", opts, true, argc,
                              argv, &cli);
  snap_file f = {.fd = -1};
  if (!status && !cli.help_shown) {
    if (cli.positional_count != 1) status = mapp_fail(MAPP_ERR_INPUT, "give exactly one snapshot FILE");
    else if (out && !step) status = mapp_fail(MAPP_ERR_INPUT, "--output needs --step");
    if (!status) status = open_file(cli.positional[0], &f);
    if (!status) print_header(&f);
    if (!status) status = read_index(&f);
    if (!status) status = step ? read_step(&f, step, out) : verify_all(&f);
  }
  if (f.fd >= 0) close(f.fd);
  free(f.index);
  mapp_cli_free(&cli);
  fflush(stdout);
  status = mapp_report_error(prog, status);
  MPI_Finalize();
  return status;
}
