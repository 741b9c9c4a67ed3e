// The Google Benchmark C bridge (see mapp_bench.h): the only C++ in mapp.
// A C benchmark is wrapped in a lambda; mapp_bench_state is the
// benchmark::State itself behind an opaque C type.
#include "mapp_bench.h"

#include <benchmark/benchmark.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

// mapp_error.h includes <mpi.h>; include it first, outside extern "C" (it
// has its own guards), and without Open MPI's deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
extern "C" {
#include "mapp_error.h"
}

namespace {

benchmark::State &state(mapp_bench_state *st) { return *reinterpret_cast<benchmark::State *>(st); }
const benchmark::State &state(const mapp_bench_state *st) {
  return *reinterpret_cast<const benchmark::State *>(st);
}

// The first error a benchmark skipped with, so that mapp_bench_main can
// fail with it (benchmarks run one at a time; threads of one benchmark
// may race, hence the lock).
std::mutex skip_lock;
std::string first_skip;

benchmark::TimeUnit time_unit(mapp_bench_unit unit) {
  switch (unit) {
  case MAPP_BENCH_MICROSECOND: return benchmark::kMicrosecond;
  case MAPP_BENCH_MILLISECOND: return benchmark::kMillisecond;
  case MAPP_BENCH_SECOND: return benchmark::kSecond;
  case MAPP_BENCH_NANOSECOND: break;
  }
  return benchmark::kNanosecond;
}

// Spelled out rather than cast, so the C values need not track the C++ ones.
benchmark::Counter::Flags counter_flags(int flags) {
  int f = benchmark::Counter::kDefaults;
  if (flags & MAPP_BENCH_COUNTER_RATE) f |= benchmark::Counter::kIsRate;
  if (flags & MAPP_BENCH_COUNTER_AVG_THREADS) f |= benchmark::Counter::kAvgThreads;
  if (flags & MAPP_BENCH_COUNTER_ITERATION_INVARIANT) f |= benchmark::Counter::kIsIterationInvariant;
  if (flags & MAPP_BENCH_COUNTER_AVG_ITERATIONS) f |= benchmark::Counter::kAvgIterations;
  if (flags & MAPP_BENCH_COUNTER_INVERT) f |= benchmark::Counter::kInvert;
  return static_cast<benchmark::Counter::Flags>(f);
}

int check_options(const char *name, const mapp_bench_options &o) {
  if (o.nargs < 0 || o.nargs > MAPP_BENCH_MAX_ARGS)
    return mapp_fail(MAPP_ERR_INPUT, "benchmark %s: nargs must be 0..%d, got %d", name,
                     MAPP_BENCH_MAX_ARGS, o.nargs);
  if (o.ninstances > 0 && o.ranges)
    return mapp_fail(MAPP_ERR_INPUT, "benchmark %s: give args or ranges, not both", name);
  if (o.nargs > 0 && !(o.ranges || (o.args && o.ninstances > 0)))
    return mapp_fail(MAPP_ERR_INPUT, "benchmark %s: nargs = %d but no args or ranges", name,
                     o.nargs);
  if (o.nargs == 0 && (o.ranges || o.ninstances > 0))
    return mapp_fail(MAPP_ERR_INPUT, "benchmark %s: args or ranges given with nargs = 0", name);
  if (o.min_time < 0 || o.repetitions < 0 || o.range_multiplier < 0 || o.range_multiplier == 1)
    return mapp_fail(MAPP_ERR_INPUT,
                     "benchmark %s: min_time %g, repetitions %d, range_multiplier %d out of range",
                     name, o.min_time, o.repetitions, o.range_multiplier);
  return MAPP_OK;
}

void apply_instances(benchmark::internal::Benchmark *b, const mapp_bench_options &o) {
  if (o.arg_names) b->ArgNames(std::vector<std::string>(o.arg_names, o.arg_names + o.nargs));
  if (o.range_multiplier) b->RangeMultiplier(o.range_multiplier);
  if (o.ranges) {
    std::vector<std::pair<int64_t, int64_t>> r;
    for (int k = 0; k < o.nargs; ++k) r.emplace_back(o.ranges[k][0], o.ranges[k][1]);
    b->Ranges(r);
  }
  for (int i = 0; i < o.ninstances; ++i)
    b->Args(std::vector<int64_t>(o.args + i * o.nargs, o.args + (i + 1) * o.nargs));
}

void apply_timing(benchmark::internal::Benchmark *b, const mapp_bench_options &o) {
  if (o.min_time > 0) b->MinTime(o.min_time);
  if (o.repetitions > 0) b->Repetitions(o.repetitions);
  if (o.use_real_time) b->UseRealTime();
  b->Unit(time_unit(o.unit));
}

} // namespace

extern "C" {

int mapp_bench_register(const char *name, mapp_bench_fn fn, void *arg,
                        const mapp_bench_options *opt) {
  const mapp_bench_options o = opt ? *opt : mapp_bench_options{};
  if (!name || !*name || !fn) return mapp_fail(MAPP_ERR_INPUT, "benchmark needs a name and a function");
  MAPP_TRY(check_options(name, o));
  auto *b = benchmark::RegisterBenchmark(name, [fn, arg](benchmark::State &st) {
    fn(reinterpret_cast<mapp_bench_state *>(&st), arg);
  });
  apply_instances(b, o);
  apply_timing(b, o);
  return MAPP_OK;
}

int mapp_bench_main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv); // removes the --benchmark_* flags it knows
  // Anything left is ours to report, as one line (Google Benchmark's
  // ReportUnrecognizedArguments would print its own besides).
  if (argc > 1)
    return mapp_fail(MAPP_ERR_INPUT, "unrecognized flag '%s' (--help lists the flags)", argv[1]);
  size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (ran == 0) return mapp_fail(MAPP_ERR_INPUT, "no benchmark matches --benchmark_filter");
  std::lock_guard<std::mutex> lock(skip_lock);
  if (!first_skip.empty())
    return mapp_fail(MAPP_ERR_SYSTEM, "a benchmark failed: %s", first_skip.c_str());
  return MAPP_OK;
}

bool mapp_bench_keep_running(mapp_bench_state *st) { return state(st).KeepRunning(); }
int64_t mapp_bench_iterations(const mapp_bench_state *st) { return state(st).iterations(); }
long mapp_bench_range(const mapp_bench_state *st, int k) {
  return static_cast<long>(state(st).range(static_cast<size_t>(k)));
}
void mapp_bench_pause_timing(mapp_bench_state *st) { state(st).PauseTiming(); }
void mapp_bench_resume_timing(mapp_bench_state *st) { state(st).ResumeTiming(); }
void mapp_bench_set_items_processed(mapp_bench_state *st, int64_t items) {
  state(st).SetItemsProcessed(items);
}
void mapp_bench_set_bytes_processed(mapp_bench_state *st, int64_t bytes) {
  state(st).SetBytesProcessed(bytes);
}
void mapp_bench_set_counter(mapp_bench_state *st, const char *name, double value, int flags) {
  state(st).counters[name] = benchmark::Counter(value, counter_flags(flags));
}
void mapp_bench_skip_with_error(mapp_bench_state *st, const char *msg) {
  {
    std::lock_guard<std::mutex> lock(skip_lock);
    if (first_skip.empty()) first_skip = msg;
  }
  state(st).SkipWithError(msg);
}

} // extern "C"
