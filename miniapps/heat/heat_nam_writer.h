/* The NAM region's writer, shared by its two files: heat_nam.c (the compute
 * ranks' side, both modes) and heat_nam_rank.c (the memory rank of rank
 * mode, and the hand-over at the end). Internal to them. */
#ifndef HEAT_NAM_WRITER_H
#define HEAT_NAM_WRITER_H

#include <stdatomic.h>
#include <zlib.h>

#include "heat_nam.h"
#include "mapp_watchdog.h"
#include "heat_nam_layout.h"

struct heat_nam {
  heat_nam_options opt;
  MPI_Comm comm;   /* the compute ranks (the domain's) */
  MPI_Comm world;  /* rank mode: they and the memory rank (the window's); else MPI_COMM_NULL */
  int rank, nranks;
  MPI_Win win;
  int target;      /* the rank whose window memory holds this rank's subregion */
  MPI_Aint base;   /* where it starts there, in doubles */
  double *sub;     /* file mode: this rank's subregion, mapped */
  size_t sub_bytes;
  unsigned char *head; /* rank 0 (file mode) or the memory rank: the header area, mapped */
  size_t head_bytes;
  long capacity, count;
  long *timesteps;  /* of each claimed slot */
  part_shape part;  /* this rank's blocks */
  long slot_elems;  /* doubles of one snapshot of this rank */
  double *stage;    /* one snapshot in the slot's layout: the puts' origin */
  uLong *crcs;      /* capacity x blocks: CRC-32 of each block as put */
  /* Rank mode: the guard against a memory rank that stopped answering. */
  _Atomic double waiting_since; /* mapp_now() a wait on the memory rank began; 0: none */
  const char *_Atomic waiting_for;
  mapp_watchdog guard;
};

/* The header and every compute rank's share (shares: nranks entries) for
 * d's run: the same on every rank, computed from the decomposition. */
int nam_plan_layout(const heat_domain *d, long every, heat_nam_header *h, heat_nam_share *shares);
/* A fresh, allocated file of the full size whose header claims no snapshot,
 * its header area mapped into n->head. */
int nam_create_file(const char *path, const heat_nam_header *h, const heat_nam_share *shares, heat_nam *n);
/* The snapshot table (timesteps, and crcs[r * count + s] combined in rank
 * order), synced, then the count, so it never covers data not in the file. */
int nam_publish(heat_nam *n, const long *timesteps, long count, const uint32_t *crcs);
int nam_sync_map(void *map, size_t bytes, const char *what);
/* The worst status over `comm`; a rank that did not fail itself names the
 * cause, so every rank returns a message. */
int nam_agree(MPI_Comm comm, int status);
/* The CRC-32 of a rank's slot as stored: its blocks' CRCs combined in block
 * (= storage) order. */
uint32_t nam_slot_checksum(const part_shape *part, const uLong *block_crcs);

/* Rank mode, compute side (heat_nam_rank.c): the layout to the memory rank
 * (or, status failed, why there is none) and the window with it; at the
 * end, the hand-over. */
int nam_rank_attach(heat_nam *n, int status, const heat_nam_header *h, const heat_nam_share *shares);
int nam_rank_finish(heat_nam *n, int status);
/* Around a call that waits for the memory rank (an epoch's lock and
 * unlock): past opt.answer_s, one line and exit 3. Without a guard (file
 * mode) they only note the wait. */
void nam_rank_wait_begin(heat_nam *n, const char *what);
void nam_rank_wait_end(heat_nam *n);
void nam_rank_stop_guard(heat_nam *n);

#endif
