/* The dycore's halo exchanges between the global steps: what the rest of
 * the model sends while the CRMs do not talk at all. The global model is a
 * spectral-element cubed sphere (neN, 4 x 4 points an element, 72 levels);
 * each rank holds a square patch of the elements of one node of the
 * resolution (6 N^2 / NODES of --sypd-at) on a periodic 2-D grid of the
 * ranks, and each exchange sends its 4 edges (4 points an element edge)
 * and 4 corners (one point column) of 4 fields (u, v, T, dp) over the 72
 * levels to its 8 neighbours. The patch shape and the field count are
 * this model's; E3SM's partitions are space-filling curves with 5-9
 * neighbours. Each message carries its sender and direction, checked on
 * arrival, so a lost or crossed message is an error, not a silent pass. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crm.h"

enum { DYCORE_LEVELS = 72, DYCORE_FIELDS = 4, DYCORE_NP = 4 };

/* The 8 directions (dx, dy): edges first, then corners. */
static const int directions[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, -1}, {1, -1}, {-1, 1}};

static int neighbour(const int dims[2], const int me[2], int dx, int dy) {
  int x = (me[0] + dx + dims[0]) % dims[0], y = (me[1] + dy + dims[1]) % dims[1];
  return x * dims[1] + y;
}

int crm_dycore_create(MPI_Comm comm, const crm_sypd_at *at, long exchanges, crm_dycore *d) {
  memset(d, 0, sizeof *d);
  d->comm = comm;
  d->exchanges = exchanges;
  if (exchanges <= 0) return MAPP_OK;
  int rank, nranks, dims[2] = {0, 0};
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  MAPP_MPI(MPI_Dims_create(nranks, 2, dims));
  int me[2] = {rank / dims[1], rank % dims[1]};
  double elements = 6.0 * (double)at->ne * (double)at->ne / (double)at->nodes;
  long column = DYCORE_LEVELS * DYCORE_FIELDS;
  long edge = (long)ceil(DYCORE_NP * sqrt(elements)) * column;
  for (int k = 0; k < 8; ++k) {
    d->peer[k] = neighbour(dims, me, directions[k][0], directions[k][1]);
    d->count[k] = k < 4 ? edge : column;
    d->total += d->count[k];
  }
  MAPP_TRY(mapp_calloc((void **)&d->send, (size_t)d->total, sizeof(double), "the dycore's halo"));
  MAPP_TRY(mapp_calloc((void **)&d->recv, (size_t)d->total, sizeof(double), "the dycore's halo"));
  double *at_k = d->send;
  for (int k = 0; k < 8; ++k) {
    for (long i = 0; i < d->count[k]; ++i) at_k[i] = (double)(rank * 8 + k) + 1e-6 * (double)i;
    at_k += d->count[k];
  }
  return MAPP_OK;
}

/* One global step's exchanges: every direction's message to its
 * neighbour, and from the opposite one, tagged with the direction. */
int crm_dycore_exchange(crm_dycore *d) {
  MPI_Request requests[16];
  for (long e = 0; e < d->exchanges; ++e) {
    long offset = 0;
    for (int k = 0; k < 8; ++k) {
      int opposite = k ^ 1; /* the list pairs each direction with its reverse */
      MAPP_MPI(MPI_Irecv(d->recv + offset, (int)d->count[k], MPI_DOUBLE, d->peer[opposite], k, d->comm,
                         &requests[2 * k]));
      MAPP_MPI(MPI_Isend(d->send + offset, (int)d->count[k], MPI_DOUBLE, d->peer[k], k, d->comm,
                         &requests[2 * k + 1]));
      offset += d->count[k];
    }
    MAPP_MPI(MPI_Waitall(16, requests, MPI_STATUSES_IGNORE));
  }
  if (d->exchanges <= 0) return MAPP_OK;
  long offset = 0;
  for (int k = 0; k < 8; ++k) {
    int opposite = k ^ 1;
    double expected = (double)(d->peer[opposite] * 8 + k);
    if (d->recv[offset] != expected || d->recv[offset + d->count[k] - 1] != expected + 1e-6 * (double)(d->count[k] - 1))
      return mapp_fail(MAPP_ERR_VERIFY, "dycore halo: direction %d brought %g, expected %g from rank %d", k,
                       d->recv[offset], expected, d->peer[opposite]);
    offset += d->count[k];
  }
  return MAPP_OK;
}

void crm_dycore_free(crm_dycore *d) {
  free(d->send);
  free(d->recv);
  d->send = d->recv = NULL;
}
