/* The app path: where the harness finds the programs it runs, in order
 *   1. the build's own bin dir (an environment's bin_dir, e.g. a simulated
 *      build's, else paths_bin_dir());
 *   2. each directory of $MAPP_APP_PATH (colon-separated, as PATH; the
 *      caller's own, for this shell);
 *   3. each directory of the environment's `app_path:` (the machine's).
 * The first directory holding an executable mapp-NAME provides NAME, so a
 * build's own app cannot be shadowed, and an outside program is found by
 * the same name in `mapp run NAME`, a spec's apps: and mapp list. The
 * programs keep the mapp contract (docs/contract.md). */
#ifndef HARNESS_APPPATH_H
#define HARNESS_APPPATH_H

#include <stdbool.h>

#include "env.h"
#include "strv.h"

/* The directories in search order (absolute; empty entries dropped). */
int app_path_dirs(const harness_env *env, strv *dirs);
/* The absolute path of mapp-APP in the first directory that has it as an
 * executable file; an input error naming the directories searched when
 * none has, or when app is not a plain name. */
int app_path_find(const harness_env *env, const char *app, char **exe);
/* Letters, digits, '.', '_' and '-', not starting with '.' or '-': a name
 * that is one file name in every directory and one word on a command line. */
bool app_name_plain(const char *name);

#endif
