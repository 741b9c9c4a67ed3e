/* METG(50 %), Task Bench's minimum effective task granularity, measured so
 * that one stall cannot move it.
 *
 * The sweep halves the kernel work K from its largest value. Each point is
 * run `repeats` times, and the repeats are interleaved in time: the first
 * pass measures each new point once, and later passes go over the whole
 * ladder again, so a stall (another process on a worker's core for a while)
 * lands on one pass, a few repeats of many points, instead of on every
 * repeat of the points that ran while it lasted. Each point is then the
 * median of its repeats, with its interquartile range and extremes as its
 * spread; METG is read from the median curve, and the two quartile curves
 * give its range. Two flaws are flagged: a median curve that dips below 50 %
 * and rises again towards the small grains beyond its spread (a stall still
 * bent it where it decides the crossing), and a range
 * wider than TB_METG_PRECISION (the repeats disagree about where the curve
 * crosses, so its median cannot be trusted to that factor either).
 *
 * Definitions (Task Bench): efficiency = useful kernel time / (wall x
 * workers), granularity = wall x workers / tasks; METG is the smallest
 * granularity whose efficiency is still 50 %: the last crossing of 50 % going
 * down the ladder, interpolated in log(granularity) (the last, so a dip at a
 * large K does not end the search early).
 *
 * Everything here works on the values the probe returns, so the sweep makes
 * the same decisions on every rank when the probe returns the same values
 * (walls reduced over ranks, one calibration broadcast). */
#ifndef TB_METG_H
#define TB_METG_H

#include <stdbool.h>

enum {
  TB_METG_MAX_POINTS = 48,
  TB_METG_MAX_REPEATS = 25,
};
/* Runs per point: the median of 5 outvotes two stalled runs. A macro, so
 * --help can print it (TB_METG_TEXT). */
#define TB_METG_DEFAULT_REPEATS 5
#define TB_METG_TEXT_(x) #x
#define TB_METG_TEXT(x) TB_METG_TEXT_(x)

/* The ladder ends after two points in a row below this (median) efficiency. */
#define TB_METG_STOP_EFFICIENCY 0.25
/* METG is imprecise when its quartile curves cross further apart than this
 * factor (or one does not cross): its repeats then cannot place it within
 * 1.5x, the tolerance a disturbed METG is held to before it is flagged. */
#define TB_METG_PRECISION 1.5
/* A rise of the median curve towards the small grains is a flaw only after
 * a dip below TB_METG_DIP_LEVEL (a dip that stays above 50 % cannot make or
 * move the crossing; on the shared VM the plateau's long runs dip to 70 %
 * and back in quiet sweeps), and only when it exceeds both interquartile
 * ranges and TB_METG_RISE_MIN efficiency (a stall halves a point). */
#define TB_METG_DIP_LEVEL 0.5
#define TB_METG_RISE_MIN 0.05

typedef struct {
  long iterations;                         /* K */
  double round_trip_ns;                    /* hand-off round trip before its first run; 0: not measured */
  int n;                                   /* repeats so far */
  double wall_s[TB_METG_MAX_REPEATS];      /* each repeat's wall time */
  double calib_ns[TB_METG_MAX_REPEATS];    /* the kernel calibrated before each repeat */
  /* tb_metg_summarise_point: */
  double kernel_ns;                        /* useful time of one task: the median calibration */
  double wall_median_s, granularity_us;    /* median wall and its granularity */
  double efficiency;                       /* median of the repeats' efficiencies */
  double eff_min, eff_q1, eff_q3, eff_max; /* their spread */
  /* the granularities of the quartile runs (from the walls' quartiles: the
   * lower efficiency quartile is the slower runs'), for the quartile curves */
  double granularity_q1_us, granularity_q3_us;
} tb_metg_point;

/* A rise of the median curve beyond its spread: point `rise` (smaller grain)
 * is more efficient than point `dip`, the least efficient one before it. */
typedef struct {
  int dip, rise;
} tb_metg_rise;

typedef struct {
  double tasks, workers; /* of the whole run, all ranks */
  int repeats;
  int npoints;
  tb_metg_point points[TB_METG_MAX_POINTS];
  /* tb_metg_summarise: */
  double metg_us;                 /* the median curve's crossing; < 0: not crossed */
  double metg_low_us, metg_high_us; /* the upper and lower quartile curves' crossings; < 0: not crossed */
  bool monotone;
  bool precise; /* both quartile curves cross, within TB_METG_PRECISION of each other */
  int nrises;
  tb_metg_rise rises[TB_METG_MAX_POINTS];
} tb_metg_sweep;

/* What the sweep measures with. Every callback returns a status. */
typedef struct {
  void *ctx;
  /* One run of the whole problem at K: its wall seconds. */
  int (*run)(void *ctx, long k, double *wall_s);
  /* The useful time of one task at K, run alone. */
  int (*calibrate)(void *ctx, long k, double *kernel_ns);
  /* The hand-off round trip now (0: not measured); NULL: none. */
  int (*round_trip)(void *ctx, double *ns);
} tb_metg_probe;

/* The q-quantile (0 <= q <= 1) of n values, linearly interpolated between
 * order statistics (Hyndman and Fan's type 7, R's and NumPy's default). */
double tb_metg_quantile(const double *values, int n, double q);

/* The last crossing of 50 % going down a curve of n points, interpolated in
 * log(granularity); -1 when the curve does not cross. */
double tb_metg_crossing(const double *granularity_us, const double *efficiency, int n);

/* The rises of the median curve above its running minimum, once that is
 * below TB_METG_DIP_LEVEL, beyond its spread and TB_METG_RISE_MIN, at most max of them into out; their count. Each dip
 * is reported once, with the first point that rises above it. */
int tb_metg_find_rises(const tb_metg_point *points, int n, tb_metg_rise *out, int max);

/* A point's kernel time, medians and spread from its repeats. */
void tb_metg_summarise_point(const tb_metg_sweep *sweep, tb_metg_point *pt);
/* Is METG's quartile range [low, high] within TB_METG_PRECISION? */
bool tb_metg_is_precise(double low_us, double high_us);
/* Every point, then METG, its quartile range and the two flags. */
void tb_metg_summarise(tb_metg_sweep *sweep);

/* The sweep from k_max down, each point `repeats` times (1 to
 * TB_METG_MAX_REPEATS), interleaved as the header says; sweep->tasks and
 * sweep->workers must be set. Ends summarised. */
int tb_metg_measure(const tb_metg_probe *probe, long k_max, int repeats, tb_metg_sweep *sweep);

#endif
