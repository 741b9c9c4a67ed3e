#include "mapp_config.h"

#include <stdlib.h>
#include <string.h>

static bool flag(const char *value) { return value && value[0] && strcmp(value, "0") != 0; }

mapp_config mapp_config_read(void) { return (mapp_config){.debug = flag(getenv("MAPP_DEBUG"))}; }
