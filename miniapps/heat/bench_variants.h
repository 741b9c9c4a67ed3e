/* Per-variant step benchmarks for mapp-heat-bench (bench_variants.c). */
#ifndef HEAT_BENCH_VARIANTS_H
#define HEAT_BENCH_VARIANTS_H

/* Registers heat/step/<variant>/n:N/block:B/threads:T for mpi, forkjoin
 * and tasks: STEPS timesteps of one rank's domain per iteration. */
int heat_bench_register_variants(void);

#endif
