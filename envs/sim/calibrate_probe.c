/* Probes for envs/sim/calibrate.sh: this machine's core speed and its
 * intra-node MPI latency and bandwidth. Built twice by the script, with
 * mpicc (measured, Open MPI) and with smpicc (the same probe simulated on
 * the platform the script writes, as a check of the model).
 *
 *   calibrate_probe flops REPS [TRIALS]
 *                                  1 rank: TRIALS times (default 1), REPS
 *                                  sweeps of y = a*y + x over two
 *                                  L1-resident arrays (2 flops an element);
 *                                  prints "flops F seconds T" per trial
 *   calibrate_probe pingpong       2 ranks: for each size, round trips
 *                                  timed one by one; prints "pingpong BYTES
 *                                  median T min T" (one-way: half a trip);
 *                                  then the cost of an MPI_Test and an
 *                                  MPI_Iprobe that find nothing: prints
 *                                  "poll test T iprobe T"
 *
 * Times are MPI_Wtime (under SMPI, the simulated clock). Not part of the
 * mapp build: the script compiles it into a temporary folder. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOPS_N 2048 /* 2 x 16 KiB: both arrays stay in L1 */

static int probe_flops(long reps, int trials) {
  static double x[FLOPS_N], y[FLOPS_N];
  for (int i = 0; i < FLOPS_N; ++i) {
    x[i] = 1e-3 * (double)(i % 7);
    y[i] = 1.0 + 1e-6 * (double)i;
  }
  const double a = 0.999999;
  for (int t = 0; t < trials; ++t) {
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; ++r) {
      for (int i = 0; i < FLOPS_N; ++i) y[i] = a * y[i] + x[i];
      __asm__ __volatile__("" ::: "memory"); /* keep every sweep */
    }
    double t1 = MPI_Wtime();
    printf("flops %.0f seconds %.9f\n", 2.0 * FLOPS_N * (double)reps, t1 - t0);
  }
  double sum = 0.0;
  for (int i = 0; i < FLOPS_N; ++i) sum += y[i];
  printf("checksum %.6e\n", sum);
  return 0;
}

static const long pp_sizes[] = {1, 8, 64, 512, 4096, 32768, 262144, 1048576, 4194304};

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Each round trip timed on its own: the median is robust to the odd round
 * trip that a descheduled rank stretches on a shared machine. */
static int probe_pingpong(int rank, int size) {
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "calibrate_probe: pingpong needs 2 ranks (got %d)\n", size);
    return 2;
  }
  long biggest = pp_sizes[sizeof pp_sizes / sizeof pp_sizes[0] - 1];
  char *buf = malloc((size_t)biggest);
  double *trip = malloc(1000 * sizeof *trip);
  if (!buf || !trip) return 1;
  memset(buf, 1, (size_t)biggest);
  int peer = 1 - rank;
  for (size_t s = 0; s < sizeof pp_sizes / sizeof pp_sizes[0]; ++s) {
    long n = pp_sizes[s];
    /* Round trips: 1,000 for small messages, down to 40 for 4 MiB. */
    long iters = 1000L * 65536L / (n + 65536L);
    if (iters < 40) iters = 40;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long i = -5; i < iters; ++i) { /* 5 untimed warm-up round trips */
      double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buf, (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      }
      if (i >= 0) trip[i] = MPI_Wtime() - t0;
    }
    qsort(trip, (size_t)iters, sizeof *trip, by_value);
    if (rank == 0) printf("pingpong %ld median %.9e min %.9e\n", n, trip[iters / 2] / 2.0, trip[0] / 2.0);
  }
  /* Polling: rank 0 calls MPI_Test on a receive rank 1 sends only later, and
   * MPI_Iprobe for a message that never comes; the best of 5 batches of
   * 20,000 calls, per call. */
  enum { POLL_BATCHES = 5, POLL_CALLS = 20000 };
  double best_test = 1e30, best_iprobe = 1e30;
  char token = 0;
  if (rank == 0) {
    MPI_Request req;
    MPI_Irecv(&token, 1, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &req);
    for (int b = 0; b < POLL_BATCHES; ++b) {
      int flag = 0;
      double t0 = MPI_Wtime();
      for (int i = 0; i < POLL_CALLS; ++i) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      double t1 = MPI_Wtime();
      for (int i = 0; i < POLL_CALLS; ++i) MPI_Iprobe(peer, 8, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      double t2 = MPI_Wtime();
      if ((t1 - t0) / POLL_CALLS < best_test) best_test = (t1 - t0) / POLL_CALLS;
      if ((t2 - t1) / POLL_CALLS < best_iprobe) best_iprobe = (t2 - t1) / POLL_CALLS;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    printf("poll test %.9e iprobe %.9e\n", best_test, best_iprobe);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(&token, 1, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
  }
  free(trip);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, status = 2;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc >= 3 && strcmp(argv[1], "flops") == 0 && atol(argv[2]) > 0) {
    int trials = argc >= 4 ? atoi(argv[3]) : 1;
    status = rank == 0 ? probe_flops(atol(argv[2]), trials > 0 ? trials : 1) : 0;
  } else if (argc >= 2 && strcmp(argv[1], "pingpong") == 0) {
    status = probe_pingpong(rank, size);
  } else if (rank == 0) {
    fprintf(stderr, "usage: calibrate_probe flops REPS [TRIALS] | pingpong\n");
  }
  fflush(stdout);
  MPI_Finalize();
  return status;
}
