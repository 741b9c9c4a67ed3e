/* What the snapshot store's files share: the store itself, its index
 * entries and I/O workers, and the calls one layer makes into another.
 * Not part of the app's API (snapshots.h); only snap_store*.c include it. */
#ifndef SNAP_STORE_INTERNAL_H
#define SNAP_STORE_INTERNAL_H

#include <pthread.h>

#include <liburing.h>

#include "snapshots.h"

#define STORE_ALIGN 4096
/* --disk-io uring: a snapshot's transfer as this many aligned requests in
 * flight at once (the disk sees a queue, not one request at a time). */
#define STORE_URING_PIECES 4

typedef struct {
  int layer;        /* a snap_layer; -1 before placement */
  size_t offset;    /* in the device pool, the ring or the file */
  size_t stored;
  uint32_t codec;
  uint64_t checksum;
} entry;

typedef struct {
  snap_store *s;
  snap_codec *codec;
  unsigned char *cbuf;  /* compressed output */
  unsigned char *io;    /* aligned disk buffer */
  pthread_t thread;
  int id;
  bool has_ring;        /* io_uring set up (--disk-io uring, disk layer) */
  struct io_uring ring; /* this worker's own: one thread submits and reaps */
  double compress_s, write_s, read_s, decompress_s;
} worker;

struct snap_store {
  snap_store_config cfg;
  const snap_grid *g;
  snap_config pcfg;
  long nsnap;
  size_t raw, bound, io_bytes;
  double *all;                      /* layers none: every snapshot, in memory */
  entry *e;
  /* host layer: a FIFO ring */
  unsigned char *ring;
  size_t ring_cap, ring_head, ring_tail, host_used;
  /* in place (raw, written there by the forward): snapshot i in slot i % ring_slots */
  bool ring_in_place;
  long ring_slots;
  long *resident, res_first, res_count;
  /* device tier: snapshots [dev_first, nsnap) in slots of one pool */
  void *pool;
  size_t dev_slot;
  long dev_first, dev_count, dev_next;
  /* disk layer */
  int fd;
  char path[512];
  size_t file_end, disk_used, disk_written, disk_read;
  bool direct, uring;               /* O_DIRECT, io_uring in force */
  /* forward: staging buffers, the queue, writers */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int nstage, nfree;
  double **stage;
  int *free_stage;
  long *queue_idx;
  int *queue_slot;
  long nqueue, q_head, q_count;    /* the writers' queue: nstage, or ring_slots in place */
  int pending_slot[2];              /* acquired, not yet committed: snapshot i's at i % 2 */
  long acquired, committed, place_next;
  bool stop, threads_started;
  int nworkers;
  worker *workers;
  /* adjoint: prefetchers (as many as writers), position p = nsnap-1-i in
   * ready slot p % depth */
  worker *fetchers;
  bool fetch_started, fetch_stop;
  int fetch_running;                /* prefetcher threads started */
  int depth;
  double **ready;
  const double **ready_ptr;
  long *ready_pos;                  /* the position a slot holds, -1 none */
  long released;
  long checksum_failures;
  /* the first failure in a thread */
  int err_code;
  char err_msg[400];
  double stall_fw, stall_bw;
  size_t host_peak, stored_total;
  long count[SNAP_NLAYERS];
};

static inline size_t store_round_up(size_t n) { return (n + STORE_ALIGN - 1) / STORE_ALIGN * STORE_ALIGN; }
/* Ring blocks start on 64-byte boundaries: a raw snapshot after a
 * compressed one is still an aligned array of doubles, handed out in place. */
static inline size_t store_ring_bytes(size_t n) { return (n + 63) / 64 * 64; }

/* snap_store.c: failures from any thread, aligned buffers */
int store_thread_fail(snap_store *s, int code, const char *fmt, ...);
int store_thread_status(snap_store *s);
int store_aligned_alloc_touched(void **out, size_t bytes, const char *what);

/* snap_store_disk.c: the file, its header and its index */
int store_open_disk(snap_store *s);
int store_write_header(snap_store *s, bool complete, long on_disk, size_t index_offset, uint64_t index_checksum);
int store_write_index(snap_store *s);
int store_disk_put(snap_store *s, worker *w, long i, const void *data, size_t stored, uint32_t codec);
int store_disk_read(snap_store *s, worker *w, void *buf, size_t bytes, size_t offset);

/* snap_store_ring.c: the host ring */
int store_place(snap_store *s, worker *w, long i, const void *data, size_t stored, uint32_t codec);
int store_place_in_ring(snap_store *s, worker *w, long i);
size_t store_ring_slot_offset(const snap_store *s, long i);
bool store_stays_in_ring(const snap_store *s, long i);

/* snap_store_device.c: the device tier */
double *store_device_slot(const snap_store *s, long i);

/* snap_store_threads.c: the writers (forward) and prefetchers (adjoint) */
int store_start_writers(snap_store *s);
void store_stop_writers(snap_store *s);
int store_start_fetchers(snap_store *s);
void store_stop_fetcher(snap_store *s);
bool store_read_in_place(const snap_store *s, long i);

#endif
