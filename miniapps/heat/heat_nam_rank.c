/* The NAM region in rank mode: one more MPI rank, the last of the world,
 * is the memory node. It owns the region as window memory
 * (MPI_Win_allocate), the compute ranks put their blocks into it in
 * passive-target epochs it takes no part in, and at the run's end it
 * checksums what it received, writes the region to the file and answers.
 *
 * The exchange, on the world communicator (compute ranks first, the memory
 * rank last):
 *   layout  compute rank 0 -> memory rank: the header and shares, or the
 *           status that stopped the compute ranks before they had one;
 *   window  MPI_Win_allocate, collective: the region on the memory rank,
 *           nothing on the others; then every rank's status agreed;
 *   finish  compute rank 0 -> memory rank: the solve's status, the
 *           snapshots' timesteps and, with --nam-checksum crc32, the CRC-32
 *           each compute rank computed of what it put;
 *   answer  memory rank -> compute rank 0: whether the region is published,
 *           and why not; then MPI_Win_free, collective.
 * While the compute ranks run, the memory rank waits for `finish` testing
 * every millisecond (sleeping between): it costs no core, and its tests
 * give MPI the progress a passive target needs where the network is not
 * RDMA.
 *
 * A memory rank that stopped or died cannot be told from a slow one by MPI
 * (Open MPI 4.1 has no fault notification; a killed rank makes mpirun end
 * the job). So a compute rank that has waited on it for --watchdog-s (an
 * epoch's lock or unlock, the answer at the end) ends the run with one line
 * and exit 3, from a guard thread that sleeps otherwise: nothing collective
 * can end the run then. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heat_nam_writer.h"

enum { TAG_LAYOUT = 7101, TAG_FINISH = 7102, TAG_ANSWER = 7103 };

typedef struct {
  int status;
  char message[500];
} answer;

static int world_shape(MPI_Comm world, int *rank, int *memory) {
  int size;
  MAPP_MPI(MPI_Comm_rank(world, rank));
  MAPP_MPI(MPI_Comm_size(world, &size));
  *memory = size - 1;
  return MAPP_OK;
}

/* Every world rank's status agreed; where the memory rank failed first, its
 * message goes to compute rank 0, which reports it. */
static int agree_world(MPI_Comm world, int status) {
  int rank, memory, worst = status, first;
  MAPP_TRY(world_shape(world, &rank, &memory));
  int candidate = status != MAPP_OK ? rank : memory + 1;
  MAPP_MPI(MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, world));
  MAPP_MPI(MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, world));
  if (worst == MAPP_OK) return MAPP_OK;
  if (first == memory && memory != 0) {
    answer a = {.status = worst};
    if (rank == memory) {
      snprintf(a.message, sizeof a.message, "%s", mapp_error_message());
      MAPP_MPI(MPI_Send(&a, sizeof a, MPI_BYTE, 0, TAG_ANSWER, world));
      return status;
    }
    if (rank == 0) {
      MAPP_MPI(MPI_Recv(&a, sizeof a, MPI_BYTE, memory, TAG_ANSWER, world, MPI_STATUS_IGNORE));
      return mapp_fail(worst, "the memory rank: %s", a.message);
    }
  }
  if (status == MAPP_OK) return mapp_fail(worst, "another rank failed on the NAM region");
  return status;
}

/* ---------------------------------------------------------------- the guard */

/* The guard's check: a wait on the memory rank longer than answer_s. */
static bool unanswered(void *arg, char *line, size_t len) {
  heat_nam *n = arg;
  double since = n->waiting_since;
  if (since <= 0 || mapp_now() - since <= n->opt.answer_s) return false;
  int rank, memory;
  if (world_shape(n->world, &rank, &memory) != MAPP_OK) memory = -1;
  snprintf(line, len,
           "mapp-heat: error: the memory rank (rank %d) has not answered for %.1f s (%s): it has stopped or "
           "died, and the NAM region claims no snapshot",
           memory, mapp_now() - since, n->waiting_for ? n->waiting_for : "?");
  return true;
}

/* Compute rank 0 says it; the others leave a little later, quietly. */
static int start_guard(heat_nam *n) {
  return n->opt.answer_s > 0 ? mapp_watchdog_start(&n->guard, unanswered, n, n->rank == 0) : MAPP_OK;
}

void nam_rank_stop_guard(heat_nam *n) { mapp_watchdog_stop(&n->guard); }

void nam_rank_wait_begin(heat_nam *n, const char *what) {
  n->waiting_for = what;
  n->waiting_since = mapp_now();
}

void nam_rank_wait_end(heat_nam *n) { n->waiting_since = 0; }

/* ---------------------------------------------------------------- compute side */

int nam_rank_attach(heat_nam *n, int status, const heat_nam_header *h, const heat_nam_share *shares) {
  int rank, memory;
  MAPP_TRY(world_shape(n->world, &rank, &memory));
  status = nam_agree(n->comm, status);
  /* The layout, or [0, the status that stopped us]. */
  if (n->rank == 0) {
    if (status == MAPP_OK) {
      size_t bytes = sizeof *h + h->nranks * sizeof *shares;
      unsigned char *msg = malloc(bytes);
      if (!msg) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory sending the NAM layout");
      memcpy(msg, h, sizeof *h);
      memcpy(msg + sizeof *h, shares, h->nranks * sizeof *shares);
      int sent = mapp_mpi_check(MPI_Send(msg, (int)bytes, MPI_BYTE, memory, TAG_LAYOUT, n->world),
                                "MPI_Send of the NAM layout");
      free(msg);
      MAPP_TRY(sent);
    } else {
      uint64_t none[2] = {0, (uint64_t)status};
      MAPP_MPI(MPI_Send(none, 2, MPI_UINT64_T, memory, TAG_LAYOUT, n->world));
    }
  }
  if (status != MAPP_OK) return status;
  MAPP_TRY(nam_agree(n->comm, start_guard(n)));
  nam_rank_wait_begin(n, "making the region");
  double *base = NULL;
  status = mapp_mpi_check(MPI_Win_allocate(0, sizeof(double), MPI_INFO_NULL, n->world, &base, &n->win),
                          "MPI_Win_allocate of the NAM region (compute side)");
  n->target = memory;
  n->base = (MPI_Aint)((shares[n->rank].offset - h->header_bytes) / sizeof(double));
  status = agree_world(n->world, status);
  nam_rank_wait_end(n);
  return status;
}

/* Compute rank 0: the memory rank's answer (the guard ends a wait that
 * never ends). */
static int await_answer(heat_nam *n, int memory, answer *a) {
  MPI_Request req;
  MAPP_MPI(MPI_Irecv(a, sizeof *a, MPI_BYTE, memory, TAG_ANSWER, n->world, &req));
  nam_rank_wait_begin(n, "its answer at the run's end");
  for (int done = 0; !done;) {
    MAPP_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (!done) mapp_sleep(1e-3);
  }
  nam_rank_wait_end(n);
  return MAPP_OK;
}

/* Every compute rank's per-slot CRC-32 on compute rank 0, rank-major. */
static int gather_checksums(heat_nam *n, uint32_t *all) {
  uint32_t *mine = NULL;
  MAPP_TRY(mapp_calloc((void **)&mine, (size_t)n->count + 1, sizeof *mine, "snapshot checksums"));
  for (long s = 0; s < n->count; ++s) mine[s] = nam_slot_checksum(&n->part, n->crcs + s * n->part.blocks);
  int status = mapp_mpi_check(MPI_Gather(mine, (int)n->count, MPI_UINT32_T, all, (int)n->count, MPI_UINT32_T, 0,
                                         n->comm), "MPI_Gather of snapshot checksums");
  free(mine);
  return status;
}

/* finish: [status, count, with checksums, timesteps x count, crcs x nranks x count]. */
static int send_finish(heat_nam *n, int memory, int status, const uint32_t *crcs) {
  size_t words = 3 + (size_t)n->count + (crcs ? (size_t)n->nranks * (size_t)n->count : 0);
  uint64_t *msg = calloc(words, sizeof *msg);
  if (!msg) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory ending the NAM region");
  msg[0] = (uint64_t)status;
  msg[1] = (uint64_t)n->count;
  msg[2] = crcs != NULL;
  for (long s = 0; s < n->count; ++s) msg[3 + s] = (uint64_t)n->timesteps[s];
  for (size_t i = 0; crcs && i < (size_t)n->nranks * (size_t)n->count; ++i) msg[3 + n->count + i] = crcs[i];
  int sent = mapp_mpi_check(MPI_Send(msg, (int)words, MPI_UINT64_T, memory, TAG_FINISH, n->world),
                            "MPI_Send of the run's end to the memory rank");
  free(msg);
  return sent;
}

int nam_rank_finish(heat_nam *n, int status) {
  int rank, memory;
  MAPP_TRY(world_shape(n->world, &rank, &memory));
  uint32_t *all = NULL;
  bool checksums = status == MAPP_OK && n->opt.checksum;
  if (checksums && n->rank == 0)
    status = mapp_calloc((void **)&all, (size_t)n->nranks * (size_t)n->count + 1, sizeof *all, "snapshot checksums");
  status = nam_agree(n->comm, status);
  if (checksums && status == MAPP_OK) status = nam_agree(n->comm, gather_checksums(n, all));
  answer a = {.status = status};
  if (n->rank == 0) {
    int sent = send_finish(n, memory, status, status == MAPP_OK ? all : NULL);
    if (sent == MAPP_OK) sent = await_answer(n, memory, &a);
    if (sent != MAPP_OK) a.status = sent;
    else if (a.status != MAPP_OK && status == MAPP_OK) mapp_fail(a.status, "the memory rank: %s", a.message);
  }
  free(all);
  MPI_Bcast(&a.status, 1, MPI_INT, 0, n->comm);
  nam_rank_stop_guard(n);
  int freed = mapp_mpi_check(MPI_Win_free(&n->win), "MPI_Win_free of the NAM region");
  n->win = MPI_WIN_NULL;
  if (status != MAPP_OK) return status;
  if (a.status != MAPP_OK && n->rank != 0) return mapp_fail(a.status, "the memory rank could not publish the region");
  return a.status != MAPP_OK ? a.status : freed;
}

/* ---------------------------------------------------------------- memory side */

/* The layout from compute rank 0, or the status that stopped them. */
static int receive_layout(MPI_Comm world, unsigned char **layout) {
  MPI_Status st;
  int bytes;
  MAPP_MPI(MPI_Probe(0, TAG_LAYOUT, world, &st));
  MAPP_MPI(MPI_Get_count(&st, MPI_BYTE, &bytes));
  unsigned char *msg = malloc((size_t)bytes);
  if (!msg) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory receiving the NAM layout (%d bytes)", bytes);
  MAPP_MPI(MPI_Recv(msg, bytes, MPI_BYTE, 0, TAG_LAYOUT, world, MPI_STATUS_IGNORE));
  if ((size_t)bytes < sizeof(heat_nam_header)) {
    uint64_t none[2];
    memcpy(none, msg, sizeof none);
    free(msg);
    return mapp_fail((int)none[1], "the compute ranks stopped before the NAM region was made");
  }
  *layout = msg;
  return MAPP_OK;
}

/* Wait for the compute ranks' end; return its words. */
static int receive_finish(MPI_Comm world, uint64_t **words, int *count) {
  MPI_Status st;
  for (int flag = 0;;) {
    MAPP_MPI(MPI_Iprobe(0, TAG_FINISH, world, &flag, &st));
    if (flag) break;
    mapp_sleep(1e-3);
  }
  MAPP_MPI(MPI_Get_count(&st, MPI_UINT64_T, count));
  *words = malloc(sizeof **words * (size_t)*count);
  if (!*words) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory receiving the run's end (%d words)", *count);
  MAPP_MPI(MPI_Recv(*words, *count, MPI_UINT64_T, 0, TAG_FINISH, world, MPI_STATUS_IGNORE));
  return MAPP_OK;
}

/* The CRC-32 of every rank's part of every snapshot as received, checked
 * against the one its rank computed before putting it, where it did. */
static int checksum_received(const heat_nam_header *h, const heat_nam_share *shares, const unsigned char *region,
                             long count, const uint64_t *sent, uint32_t *crcs) {
  for (uint64_t r = 0; r < h->nranks; ++r) {
    size_t part = shares[r].row_count * h->cols * sizeof(double);
    for (long s = 0; s < count; ++s) {
      const unsigned char *at = region + (shares[r].offset - h->header_bytes) + (size_t)s * part;
      uint32_t crc = (uint32_t)crc32_z(0, at, part);
      crcs[r * (size_t)count + (size_t)s] = crc;
      if (sent && sent[r * (size_t)count + (size_t)s] != crc)
        return mapp_fail(MAPP_ERR_SYSTEM,
                         "snapshot %ld of compute rank %llu reached the memory rank with CRC-32 %08x, it was put "
                         "with %08llx",
                         s, (unsigned long long)r, crc, (unsigned long long)sent[r * (size_t)count + (size_t)s]);
    }
  }
  return MAPP_OK;
}

/* The region's data after its header, then the table and the count. */
static int publish_region(const char *path, heat_nam *n, const unsigned char *region, const uint64_t *words,
                          int nwords) {
  const heat_nam_header *h = (const heat_nam_header *)n->head;
  const heat_nam_share *shares = (const heat_nam_share *)(n->head + sizeof *h);
  long count = (long)words[1];
  bool with_crcs = words[2] != 0;
  if (count < 0 || (uint64_t)count > h->capacity ||
      (size_t)nwords != 3 + (size_t)count + (with_crcs ? h->nranks * (size_t)count : 0))
    return mapp_fail(MAPP_ERR_SYSTEM, "the run's end names %ld snapshots in %d words, the region holds %llu", count,
                     nwords, (unsigned long long)h->capacity);
  long *timesteps = NULL;
  uint32_t *crcs = NULL;
  int status = mapp_calloc((void **)&timesteps, (size_t)count + 1, sizeof *timesteps, "snapshot timesteps");
  if (status == MAPP_OK) status = mapp_calloc((void **)&crcs, h->nranks * (size_t)count + 1, sizeof *crcs, "checksums");
  for (long s = 0; status == MAPP_OK && s < count; ++s) timesteps[s] = (long)words[3 + s];
  if (status == MAPP_OK)
    status = checksum_received(h, shares, region, count, with_crcs ? words + 3 + count : NULL, crcs);
  if (status == MAPP_OK) {
    int fd = open(path, O_WRONLY);
    size_t bytes = (size_t)(h->file_bytes - h->header_bytes);
    size_t done = 0;
    while (fd >= 0 && done < bytes) {
      ssize_t wrote = pwrite(fd, region + done, bytes - done, (off_t)(h->header_bytes + done));
      if (wrote <= 0) break;
      done += (size_t)wrote;
    }
    if (fd < 0 || done < bytes || fsync(fd) != 0)
      status = mapp_fail(MAPP_ERR_SYSTEM, "writing the NAM region's %zu bytes to '%s' failed: %s", bytes, path,
                         strerror(errno));
    if (fd >= 0) close(fd);
  }
  if (status == MAPP_OK) status = nam_publish(n, timesteps, count, crcs);
  free(timesteps);
  free(crcs);
  return status;
}

/* MAPP_HEAT_NAM_FLIP=1 (a planted fault, for the test that the memory
 * rank's check catches a block damaged on its way): one bit of the first
 * snapshot of compute rank 0 flipped before the check. */
static void plant_flip(unsigned char *region) {
  const char *flip = getenv("MAPP_HEAT_NAM_FLIP");
  if (flip && strcmp(flip, "1") == 0) region[0] ^= 1u;
}

static int serve_run(const char *path, MPI_Comm world, heat_nam *n, unsigned char *region) {
  uint64_t *words = NULL;
  int nwords = 0;
  int status = receive_finish(world, &words, &nwords);
  if (status == MAPP_OK && nwords < 3) status = mapp_fail(MAPP_ERR_SYSTEM, "the run's end is %d words long", nwords);
  /* A failed solve publishes nothing: the region keeps claiming none. */
  bool solved = status == MAPP_OK && words[0] == MAPP_OK;
  if (solved) plant_flip(region);
  if (solved) status = publish_region(path, n, region, words, nwords);
  answer a = {.status = status};
  if (status != MAPP_OK) snprintf(a.message, sizeof a.message, "%s", mapp_error_message());
  if (!solved && status == MAPP_OK) status = (int)words[0];
  free(words);
  MAPP_MPI(MPI_Send(&a, sizeof a, MPI_BYTE, 0, TAG_ANSWER, world));
  return status;
}

int heat_nam_serve(const char *path, MPI_Comm world, const heat_nam_options *opt) {
  unsigned char *layout = NULL;
  MAPP_TRY(receive_layout(world, &layout));
  const heat_nam_header *h = (const heat_nam_header *)layout;
  const heat_nam_share *shares = (const heat_nam_share *)(layout + sizeof *h);
  heat_nam n = {.opt = *opt, .world = world, .win = MPI_WIN_NULL};
  int status = nam_create_file(path, h, shares, &n);
  size_t bytes = (size_t)(h->file_bytes - h->header_bytes);
  unsigned char *region = NULL;
  int made = mapp_mpi_check(MPI_Win_allocate((MPI_Aint)bytes, sizeof(double), MPI_INFO_NULL, world, &region, &n.win),
                            "MPI_Win_allocate of the NAM region");
  if (status == MAPP_OK) status = made;
  /* Touched now, in setup, so no put of the run takes a page fault there. */
  if (status == MAPP_OK) memset(region, 0, bytes);
  status = agree_world(world, status);
  if (status == MAPP_OK) status = serve_run(path, world, &n, region);
  if (n.win != MPI_WIN_NULL) MPI_Win_free(&n.win);
  if (n.head) munmap(n.head, n.head_bytes);
  free(layout);
  return status;
}
