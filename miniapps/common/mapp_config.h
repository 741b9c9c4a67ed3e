/* libmapp's settings from the environment, read in this one place: no other
 * file of libmapp calls getenv("MAPP_..."). Add a setting as a field here,
 * read in mapp_config_read, and document it in README.md. */
#ifndef MAPP_CONFIG_H
#define MAPP_CONFIG_H

#include <stdbool.h>

typedef struct {
  /* MAPP_DEBUG (set, and neither empty nor "0"): a reported error is
   * followed by the calls that carried it up (mapp_error.h). */
  bool debug;
} mapp_config;

/* The environment now (read on every call: cheap, and only read where an
 * error is reported). */
mapp_config mapp_config_read(void);

#endif
