/* Core-to-core hand-off round trip: the latency anchor for what threads
 * handing work to each other bound (METG, pipelined sweeps, barriers), as
 * the STREAM triad is the bandwidth anchor. Two threads pinned to two CPUs
 * bounce a counter on a cache line of its own; the round trip is what one
 * hand-off and its answer cost on this machine at this moment.
 *
 * Why it is measured in the same run: on a virtual machine it is not a
 * constant. The 2-core development VM has been seen at 0.07 µs and at
 * 0.56 µs on different minutes of one day (the host moves its vCPUs), and
 * every hand-off-bound figure moved with it (subgraph METG 0.41-0.53 µs
 * against 0.90-1.07 µs). A figure quoted with the round trip of its run can
 * be told apart from a machine in its slow mode. */
#ifndef MAPP_LATENCY_H
#define MAPP_LATENCY_H

/* Median round trip in ns over `batches` batches of `trips` round trips
 * between two new threads pinned to cpu_a and cpu_b (the caller's own
 * affinity is left alone). A batch stops early after 100 ms (on a loaded
 * node a trip can cost a time slice), so a call takes at most about
 * batches x 0.1 s.
 * MAPP_OK, or MAPP_ERR_INPUT for bad counts, MAPP_ERR_SYSTEM when a thread
 * cannot be created or pinned, or when one round trip takes over a second
 * (the other thread is not running); the message is recorded. */
int mapp_core_round_trip(int cpu_a, int cpu_b, long trips, int batches, double *ns);

/* The two lowest CPUs this process may run on, into *a and *b; false when
 * it may run on fewer than two. */
_Bool mapp_two_cpus(int *a, int *b);

/* Registers benchmark "machine/core_round_trip" (in the mapp_bench library,
 * beside stream/triad): counter round_trip_ns, the mean over its iterations
 * of 2000 round trips each between mapp_two_cpus. Skipped with an error
 * where the process has one CPU. */
int mapp_latency_register(void);

#endif
