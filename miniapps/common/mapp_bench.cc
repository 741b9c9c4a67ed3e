// The Google Benchmark C bridge (see mapp_bench.h): the only C++ in mapp.
// A C benchmark is wrapped in a lambda; mapp_bench_state is the
// benchmark::State itself behind an opaque C type.
#include "mapp_bench.h"

#include <benchmark/benchmark.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

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

// Google Benchmark's own flag parsing turns bad values into aborts
// (--benchmark_repetitions=-1: std::length_error), usage text with exit 0
// (--benchmark_format=xml) or silent defaults (a boolean that is not one
// reads as true), so every flag it knows is checked here first and a bad
// value is one line and exit 2, like any other bad input.
enum class flag_kind { boolean, text, path, count, seconds, seconds_or_zero, choice, key_values, verbosity };

struct flag_rule {
  const char *name;
  flag_kind kind;
  const char *choices; // flag_kind::choice: '|'-separated
};

const flag_rule flag_rules[] = {
    {"benchmark_list_tests", flag_kind::boolean, nullptr},
    {"benchmark_filter", flag_kind::text, nullptr},
    {"benchmark_min_time", flag_kind::seconds, nullptr},
    {"benchmark_min_warmup_time", flag_kind::seconds_or_zero, nullptr},
    {"benchmark_repetitions", flag_kind::count, nullptr},
    {"benchmark_enable_random_interleaving", flag_kind::boolean, nullptr},
    {"benchmark_report_aggregates_only", flag_kind::boolean, nullptr},
    {"benchmark_display_aggregates_only", flag_kind::boolean, nullptr},
    {"benchmark_format", flag_kind::choice, "console|json|csv"},
    {"benchmark_out_format", flag_kind::choice, "console|json|csv"},
    {"benchmark_out", flag_kind::path, nullptr},
    {"benchmark_color", flag_kind::choice, "auto|true|false|yes|no|on|off|1|0"},
    {"benchmark_counters_tabular", flag_kind::boolean, nullptr},
    {"benchmark_perf_counters", flag_kind::text, nullptr},
    {"benchmark_context", flag_kind::key_values, nullptr},
    {"benchmark_time_unit", flag_kind::choice, "ns|us|ms|s"},
    {"v", flag_kind::verbosity, nullptr},
};

bool one_of(const std::string &value, const char *choices, bool ignore_case) {
  std::string v = value;
  if (ignore_case)
    for (char &c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const char *p = choices;
  while (*p) {
    size_t len = std::strcspn(p, "|");
    if (v.size() == len && v.compare(0, len, p, len) == 0) return true;
    p += len + (p[len] == '|');
  }
  return false;
}

bool parse_long(const std::string &text, long lo, long hi) {
  if (text.empty()) return false;
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0' && v >= lo && v <= hi;
}

bool parse_seconds(const std::string &text, bool zero_ok) {
  if (text.empty()) return false;
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  return *end == '\0' && std::isfinite(v) && (zero_ok ? v >= 0.0 : v > 0.0);
}

bool parse_key_values(const std::string &text) {
  if (text.empty()) return false;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string pair = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

// What a valid value looks like, for the error line; "" when value is valid.
std::string value_problem(const flag_rule &rule, const std::string &value, bool has_value) {
  switch (rule.kind) {
  case flag_kind::boolean:
    return !has_value || one_of(value, "true|false|yes|no|on|off|1|0|t|f|y|n", true)
               ? ""
               : "must be true or false";
  case flag_kind::text: return has_value ? "" : "needs a value (=TEXT)";
  case flag_kind::path: return has_value && !value.empty() ? "" : "needs a file name (=FILE)";
  case flag_kind::count: return parse_long(value, 1, INT32_MAX) ? "" : "must be a whole number >= 1";
  case flag_kind::seconds: return parse_seconds(value, false) ? "" : "must be a number of seconds > 0";
  case flag_kind::seconds_or_zero: return parse_seconds(value, true) ? "" : "must be a number of seconds >= 0";
  case flag_kind::choice:
    return has_value && one_of(value, rule.choices, false) ? "" : std::string("must be one of ") + rule.choices;
  case flag_kind::key_values: return parse_key_values(value) ? "" : "must be KEY=VALUE[,KEY=VALUE...]";
  case flag_kind::verbosity: return parse_long(value, 0, 1000) ? "" : "must be a whole number >= 0";
  }
  return "";
}

int check_benchmark_flags(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    if (std::strncmp(arg, "--", 2) != 0) continue;
    const char *name = arg + 2, *eq = std::strchr(name, '=');
    size_t len = eq ? static_cast<size_t>(eq - name) : std::strlen(name);
    for (const flag_rule &rule : flag_rules) {
      if (std::strlen(rule.name) != len || std::strncmp(rule.name, name, len) != 0) continue;
      std::string problem = value_problem(rule, eq ? std::string(eq + 1) : std::string(), eq != nullptr);
      if (!problem.empty()) return mapp_fail(MAPP_ERR_INPUT, "%s: %s", arg, problem.c_str());
    }
  }
  return MAPP_OK;
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

int mapp_bench_check_flags(int argc, char **argv) { return check_benchmark_flags(argc, argv); }

int mapp_bench_main(int argc, char **argv) {
  MAPP_TRY(check_benchmark_flags(argc, argv));
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
