/* Where the harness finds things. Each location has one environment
 * override, so tests and installed trees can point elsewhere:
 *   executables  $MAPP_BIN_DIR, else the directory of the running mapp
 *   source tree  $MAPP_SOURCE_DIR, else the tree this build came from
 *   baselines    $MAPP_BASELINE_DIR, else <source tree>/baselines
 * All functions return malloc'd strings, or NULL when out of memory. */
#ifndef HARNESS_PATHS_H
#define HARNESS_PATHS_H

char *paths_bin_dir(void);
char *paths_source_dir(void);
char *paths_baseline_dir(void);
/* <source tree>/<sub>, e.g. "plots", "envs". */
char *paths_source_file(const char *sub);
/* <bin_dir>/mapp-<app>; bin_dir NULL means paths_bin_dir() (another
 * build's bin dir runs that build, e.g. the -O0 build of an envelope). */
char *paths_app_executable(const char *bin_dir, const char *app);

#endif
