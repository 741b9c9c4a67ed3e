/* The animation of a NAM region (heat_animate.h): every snapshot rebuilt
 * and checked (heat_nam_frame), then handed to gnuplot (GIF, PNG frames)
 * and/or written to HDF5. Shared by mapp-heat-animate and mapp-heat --gif. */
#include "heat_animate.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heat_nam.h"

#ifndef MAPP_GNUPLOT
#define MAPP_GNUPLOT "gnuplot"
#endif

extern char **environ;

static int check_grid(const heat_nam_region *r, const char *region, const heat_animate_options *a) {
  long rows = (long)r->h.rows, cols = (long)r->h.cols;
  if ((a->rows && a->rows != rows) || (a->cols && a->cols != cols))
    return mapp_fail(MAPP_ERR_INPUT, "'%s' holds a %ld x %ld grid, expected %ld x %ld", region, rows, cols,
                     a->rows ? a->rows : rows, a->cols ? a->cols : cols);
  return MAPP_OK;
}

/* ---- frames on disk for gnuplot: raw float64, row-major ---- */

typedef struct {
  char dir[64];
  long count;
} frame_files;

static void frame_path(const frame_files *f, long s, char *buf, size_t len) {
  snprintf(buf, len, "%s/frame_%06ld.bin", f->dir, s);
}

static int save_frame(const frame_files *f, long s, const double *m, size_t n) {
  char path[128];
  frame_path(f, s, path, sizeof path);
  FILE *out = fopen(path, "wb");
  bool ok = out && fwrite(m, sizeof *m, n, out) == n;
  if (out && fclose(out) != 0) ok = false;
  return ok ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "cannot write temporary frame '%s': %s", path, strerror(errno));
}

static void remove_frames(frame_files *f) {
  char path[128];
  for (long s = 0; s < f->count; ++s) {
    frame_path(f, s, path, sizeof path);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/plot.gp", f->dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/gnuplot.log", f->dir);
  unlink(path);
  rmdir(f->dir);
}

/* ---- gnuplot ---- */

/* gnuplot single-quoted string: a quote is written twice. */
static void put_quoted(FILE *out, const char *s) {
  fputc('\'', out);
  for (; *s; ++s) {
    if (*s == '\'') fputc('\'', out);
    fputc(*s, out);
  }
  fputc('\'', out);
}

/* The plot of every frame with the current terminal; `per_frame_dir`
 * non-NULL: one output file per frame there. Row 0 (the top boundary) is
 * drawn at the top. */
static void plot_frames(FILE *gp, const frame_files *f, const heat_nam_region *r, const char *per_frame_dir) {
  long width = (long)r->h.cols + 2, height = (long)r->h.rows + 2;
  for (long s = 0; s < f->count; ++s) {
    char path[128], out[4096];
    if (per_frame_dir) {
      snprintf(out, sizeof out, "%s/frame_%06llu.png", per_frame_dir, (unsigned long long)r->snapshots[s].timestep);
      fputs("set output ", gp);
      put_quoted(gp, out);
      fputc('\n', gp);
    }
    frame_path(f, s, path, sizeof path);
    fprintf(gp, "set title 'heat diffusion, timestep %llu of %llu'\n", (unsigned long long)r->snapshots[s].timestep,
            (unsigned long long)r->h.steps);
    fprintf(gp, "plot '%s' binary array=(%ld,%ld) format='%%float64' with image\n", path, width, height);
  }
}

static void write_script(FILE *gp, const frame_files *f, const heat_nam_region *r, const heat_animate_options *a,
                         double lo, double hi) {
  long width = (long)r->h.cols + 2, height = (long)r->h.rows + 2;
  int px = 720, py = (int)fmin(1200.0, fmax(240.0, 720.0 * (double)height / (double)width + 60.0));
  /* One colour scale for every frame, so the heat is seen spreading. */
  fprintf(gp, "unset key\nset size ratio -1\nset cbrange [%.17g:%.17g]\nset cblabel 'temperature'\n"
              "set palette defined (0 'black', 1 'dark-blue', 2 'red', 3 'orange', 4 'yellow', 5 'white')\n"
              "set xrange [-0.5:%ld.5]\nset yrange [%ld.5:-0.5]\nset xlabel 'column'\nset ylabel 'row'\n",
          lo, hi, width - 1, height - 1);
  if (a->gif) {
    fprintf(gp, "set terminal gif animate delay %ld loop 0 size %d,%d\nset output ", a->delay, px, py);
    put_quoted(gp, a->gif);
    fputc('\n', gp);
    plot_frames(gp, f, r, NULL);
    fputs("set output\n", gp);
  }
  if (a->frames) {
    fprintf(gp, "set terminal pngcairo size %d,%d\n", px, py);
    plot_frames(gp, f, r, a->frames);
    fputs("set output\n", gp);
  }
}

/* gnuplot's chatter ("4 frames in animation sequence") and errors go to
 * `log`, not to our stderr, whose one line is the contract's; a failure
 * quotes the log's first line. */
static int run_gnuplot(const char *script, const char *log) {
  char *const argv[] = {(char *)MAPP_GNUPLOT, (char *)script, NULL};
  posix_spawn_file_actions_t io;
  posix_spawn_file_actions_init(&io);
  posix_spawn_file_actions_addopen(&io, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&io, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid;
  int err = posix_spawnp(&pid, MAPP_GNUPLOT, &io, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&io);
  if (err) return mapp_fail(MAPP_ERR_SYSTEM, "cannot run %s: %s", MAPP_GNUPLOT, strerror(err));
  int wstatus;
  if (waitpid(pid, &wstatus, 0) >= 0 && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return MAPP_OK;
  char said[256] = "";
  FILE *f = fopen(log, "r");
  if (f) {
    if (!fgets(said, sizeof said, f)) said[0] = '\0';
    fclose(f);
    said[strcspn(said, "\n")] = '\0';
  }
  return mapp_fail(MAPP_ERR_SYSTEM, "%s failed on '%s': %s", MAPP_GNUPLOT, script, said[0] ? said : "no message");
}

/* gnuplot exits 0 even when it could not write its output (a full disk):
 * read the file back. A GIF is whole when it starts with its signature and
 * ends with its trailer byte (0x3B); a PNG when it ends with its IEND chunk. */
static int check_complete(const char *path, const char *head, const unsigned char *tail, size_t tail_len) {
  FILE *f = fopen(path, "rb");
  if (!f) return mapp_fail(MAPP_ERR_SYSTEM, "gnuplot did not write '%s': %s", path, strerror(errno));
  char start[8] = {0};
  unsigned char end[16] = {0};
  size_t got = fread(start, 1, strlen(head), f);
  bool whole = got == strlen(head) && memcmp(start, head, got) == 0 && fseek(f, -(long)tail_len, SEEK_END) == 0 &&
               fread(end, 1, tail_len, f) == tail_len && memcmp(end, tail, tail_len) == 0;
  fclose(f);
  return whole ? MAPP_OK : mapp_fail(MAPP_ERR_SYSTEM, "'%s' is incomplete (a full disk?): gnuplot's output was not written whole", path);
}

static int check_outputs(const frame_files *f, const heat_nam_region *r, const heat_animate_options *a) {
  static const unsigned char gif_trailer[] = {0x3B};
  static const unsigned char png_iend[] = {'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
  if (a->gif) MAPP_TRY(check_complete(a->gif, "GIF89a", gif_trailer, sizeof gif_trailer));
  for (long s = 0; a->frames && s < f->count; ++s) {
    char out[4096];
    snprintf(out, sizeof out, "%s/frame_%06llu.png", a->frames, (unsigned long long)r->snapshots[s].timestep);
    MAPP_TRY(check_complete(out, "\x89PNG", png_iend, sizeof png_iend));
  }
  return MAPP_OK;
}

static int render(const frame_files *f, const heat_nam_region *r, const heat_animate_options *a, double lo, double hi) {
  char script[128], log[128];
  snprintf(script, sizeof script, "%s/plot.gp", f->dir);
  snprintf(log, sizeof log, "%s/gnuplot.log", f->dir);
  FILE *gp = fopen(script, "w");
  if (!gp) return mapp_fail(MAPP_ERR_SYSTEM, "cannot write '%s': %s", script, strerror(errno));
  write_script(gp, f, r, a, lo, hi);
  if (fclose(gp) != 0) return mapp_fail(MAPP_ERR_SYSTEM, "cannot write '%s': %s", script, strerror(errno));
  MAPP_TRY(run_gnuplot(script, log));
  return check_outputs(f, r, a);
}

/* ---- the frames ---- */

/* The colour range: the fixed boundary and the zero initial interior bound
 * every value of every frame (the discrete maximum principle). */
static void value_range(const double *m, long height, long width, double *lo, double *hi) {
  *lo = 0.0;
  *hi = 0.0;
  for (long r = 0; r < height; ++r)
    for (long c = 0; c < width; c += (r == 0 || r == height - 1) ? 1 : width - 1) {
      *lo = fmin(*lo, m[r * width + c]);
      *hi = fmax(*hi, m[r * width + c]);
    }
  if (*hi <= *lo) *hi = *lo + 1.0;
}

static int export_frame(hid_t file, const heat_nam_region *r, long s, const double *m) {
  char name[32];
  snprintf(name, sizeof name, "step_%06llu", (unsigned long long)r->snapshots[s].timestep);
  long height = (long)r->h.rows + 2, width = (long)r->h.cols + 2;
  mapp_h5_slab slab = {.ndims = 2, .global_dims = {height, width}, .first = 0, .count = height, .stride = width};
  return mapp_h5_write_field(file, name, &slab, m);
}

/* Every snapshot: rebuilt, checked, then handed to the outputs. */
static int each_frame(const heat_nam_region *r, const heat_animate_options *a, frame_files *f, hid_t h5, double range[2]) {
  long height = (long)r->h.rows + 2, width = (long)r->h.cols + 2;
  double *m;
  MAPP_TRY(mapp_alloc((void **)&m, sizeof *m * (size_t)(height * width), "a frame"));
  int status = MAPP_OK;
  for (long s = 0; status == MAPP_OK && s < (long)r->h.saved; ++s) {
    status = heat_nam_frame(r, s, m);
    if (status == MAPP_OK && s == 0) value_range(m, height, width, &range[0], &range[1]);
    if (status == MAPP_OK && (a->gif || a->frames)) {
      status = save_frame(f, s, m, (size_t)(height * width));
      if (status == MAPP_OK) f->count = s + 1;
    }
    if (status == MAPP_OK && h5 >= 0) status = export_frame(h5, r, s, m);
  }
  free(m);
  return status;
}

/* The frames go through files in a private temporary directory: gnuplot
 * reads each as a binary array. */
static int make_frame_dir(frame_files *f) {
  const char *tmp = getenv("TMPDIR");
  snprintf(f->dir, sizeof f->dir, "%s/mapp-animate-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
  if (!mkdtemp(f->dir)) {
    f->dir[0] = '\0';
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot create a temporary directory: %s", strerror(errno));
  }
  return MAPP_OK;
}

static void print_summary(FILE *out, const char *region, const heat_nam_region *r) {
  fprintf(out, "%s: %llu snapshots (timesteps %llu..%llu) of %llu x %llu from %llu ranks, checksums ok\n", region,
          (unsigned long long)r->h.saved, (unsigned long long)r->snapshots[0].timestep,
          (unsigned long long)r->snapshots[r->h.saved - 1].timestep, (unsigned long long)r->h.rows,
          (unsigned long long)r->h.cols, (unsigned long long)r->h.nranks);
}

/* Every frame checked and saved (and exported), then rendered at once. */
static int animate_open_region(const char *region, const heat_nam_region *r, const heat_animate_options *a) {
  bool plots = a->gif || a->frames;
  frame_files f = {.dir = "", .count = 0};
  hid_t h5 = -1;
  double range[2] = {0.0, 1.0};
  int status = check_grid(r, region, a);
  if (status == MAPP_OK && plots) status = make_frame_dir(&f);
  if (status == MAPP_OK && a->hdf5) status = mapp_h5_create(MPI_COMM_SELF, a->hdf5, &h5);
  if (status == MAPP_OK) status = each_frame(r, a, &f, h5, range);
  if (h5 >= 0) {
    if (status == MAPP_OK) status = mapp_h5_attr_long(h5, "snapshots", (long)r->h.saved);
    int closed = mapp_h5_close(h5);
    if (status == MAPP_OK) status = closed;
  }
  if (status == MAPP_OK && plots) status = render(&f, r, a, range[0], range[1]);
  if (f.dir[0]) remove_frames(&f);
  return status;
}

int heat_animate_region(const char *region, const heat_animate_options *a) {
  heat_nam_region r;
  MAPP_TRY(heat_nam_open(region, &r));
  int status = animate_open_region(region, &r, a);
  if (status == MAPP_OK && a->summary) print_summary(a->summary, region, &r);
  heat_nam_close(&r);
  return status;
}
