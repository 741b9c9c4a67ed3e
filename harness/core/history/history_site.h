/* `mapp history publish DIR`: the history as a static site, as `asv
 * publish` makes one. DIR/index.html lists every configuration with its
 * latest figure of merit, its change against the previous revision, its
 * change points and what `mapp history check` answers for it; DIR/SLUG.html
 * (SLUG: the configuration as a file name) shows one configuration's trend
 * figure, change points marked, and its change points and revisions as
 * tables. The pages open from the file system: no server, no script, the
 * figures inlined (doc.h); the figures' files stay in DIR/figures/.
 * DIR/.mapp-site lists the configurations' files a publish wrote; the next
 * publish into DIR removes those it does not write again (a configuration
 * deselected or gone), and nothing else. */
#ifndef HARNESS_HISTORY_SITE_H
#define HARNESS_HISTORY_SITE_H

#include <stdbool.h>

#include "historydb.h"
#include "verdict.h"

typedef struct {
  const char *db_path;             /* the history file, named on the pages */
  const history_series_set *set;
  const bool *keep;                /* keep[i]: set->items[i] is published */
  const verdict_summary *verdicts; /* verdicts[i]: the verdict of set->items[i]'s latest revision */
  double threshold;                /* the slowdown `check` counts (0.05: 5 %) */
} history_site;

/* Writes the site into dir (made when missing; a dir that cannot be made or
 * written is an input error naming it) and prints the path of each page. */
int history_site_publish(const history_site *site, const char *dir);

#endif
