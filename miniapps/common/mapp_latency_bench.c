/* The machine/core_round_trip benchmark (see mapp_latency.h). */
#include "mapp_bench.h"
#include "mapp_error.h"
#include "mapp_latency.h"

/* Each iteration: 2000 round trips on two fresh pinned threads; the counter
 * is their mean over the iterations (repetitions give the median). */
static void bm_round_trip(mapp_bench_state *st, void *arg) {
  (void)arg;
  int a, b;
  if (!mapp_two_cpus(&a, &b)) {
    mapp_bench_skip_with_error(st, "this process may run on one CPU only");
    return;
  }
  double sum = 0.0;
  while (mapp_bench_keep_running(st)) {
    double ns = 0.0;
    if (mapp_core_round_trip(a, b, 2000, 1, &ns) != MAPP_OK) {
      mapp_bench_skip_with_error(st, mapp_error_message());
      return;
    }
    sum += ns;
  }
  int64_t n = mapp_bench_iterations(st);
  if (n > 0) mapp_bench_set_counter(st, "round_trip_ns", sum / (double)n, MAPP_BENCH_COUNTER_DEFAULT);
}

int mapp_latency_register(void) {
  mapp_bench_options opt = {.use_real_time = true, .unit = MAPP_BENCH_MICROSECOND};
  return mapp_bench_register("machine/core_round_trip", bm_round_trip, NULL, &opt);
}
