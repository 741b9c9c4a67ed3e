/* libmapp: what every mini-app shares. */
#ifndef MAPP_H
#define MAPP_H

#include "mapp_app.h"
#include "mapp_backend.h"
#include "mapp_cli.h"
#include "mapp_decomp.h"
#include "mapp_error.h"
#include "mapp_error_mpi.h"
#include "mapp_h5.h"
#include "mapp_pool.h"
#include "mapp_record.h"
#include "mapp_reduce.h"
#include "mapp_timer.h"

#endif
