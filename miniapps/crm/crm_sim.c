/* Charging the CRMs' compute on a simulated cluster (SimGrid SMPI, the
 * simulated build): a few sampled ranks compute for real while the
 * simulator stops counting, and every rank is charged a burst measured
 * here, so a 1,024-node run costs the simulation a few ranks' compute, not
 * 1,024 (and the ranks that only charge hold no CRM state).
 *
 * Under SMPI the program's clock_gettime is the simulated clock (smpicc
 * includes smpi_helpers.h, which redefines it); the bursts are measured on
 * the real one. smpi_execute_benched charges a duration measured here,
 * scaled to the simulated host as SMPI's own benchmarking scales what it
 * measures; smpi_bench_end / smpi_bench_begin stop and resume that
 * benchmarking, so work between them is not charged. */
#include <time.h>

#include "crm.h"

#if MAPP_SIMULATED
#undef clock_gettime
#endif

bool crm_sim_available(void) { return MAPP_SIMULATED != 0; }

double crm_sim_real_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void crm_sim_pause(void) {
#if MAPP_SIMULATED
  smpi_bench_end();
#endif
}

void crm_sim_resume(void) {
#if MAPP_SIMULATED
  smpi_bench_begin();
#endif
}

void crm_sim_charge(double seconds) {
#if MAPP_SIMULATED
  if (seconds > 0) smpi_execute_benched(seconds);
#else
  (void)seconds;
#endif
}
