#include "paths.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "mapp_build_info.h"

static const char *env_nonempty(const char *name) {
  const char *value = getenv(name);
  return value && value[0] ? value : NULL;
}

char *paths_bin_dir(void) {
  const char *override = env_nonempty("MAPP_BIN_DIR");
  if (override) return strdup(override);
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return strdup(MAPP_BINARY_DIR "/bin");
  exe[len] = '\0';
  return path_dirname(exe);
}

char *paths_source_dir(void) {
  const char *override = env_nonempty("MAPP_SOURCE_DIR");
  return strdup(override ? override : MAPP_SOURCE_DIR);
}

char *paths_source_file(const char *sub) {
  char *source = paths_source_dir();
  char *path = source ? path_join(source, sub) : NULL;
  free(source);
  return path;
}

char *paths_baseline_dir(void) {
  const char *override = env_nonempty("MAPP_BASELINE_DIR");
  return override ? strdup(override) : paths_source_file("baselines");
}

char *paths_app_executable(const char *bin_dir, const char *app) {
  char *bin = bin_dir ? strdup(bin_dir) : paths_bin_dir();
  char *path = bin ? str_printf("%s/mapp-%s", bin, app) : NULL;
  free(bin);
  return path;
}
