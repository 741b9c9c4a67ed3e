#include <stddef.h>

#include "mapp.h"

int mapp_app_main(const mapp_app *app, int argc, char **argv) {
  mapp_mpi mpi;
  int level = app->thread_level ? app->thread_level(argc, argv) : MPI_THREAD_FUNNELED;
  int status = mapp_mpi_init(&argc, &argv, level, &mpi);
  bool help = false;
  if (status == MAPP_OK) status = app->parse(argc, argv, app->args, &help);
  /* Every rank parsed the same line: only rank 0 reports it. */
  if (mpi.rank != 0) mapp_error_clear();
  status = mapp_agree(mpi.comm, app->prog, status);
  const mapp_common_args *common = (const mapp_common_args *)((const char *)app->args + app->common_offset);
  int verdict = MAPP_OK;
  if (status == MAPP_OK && !help) {
    if (common->list) {
      if (mpi.rank == 0) mapp_print_variants_json(app->name, app->variants, stdout);
    } else {
      status = app->run(&mpi, app->args, argc, argv, &verdict);
    }
  }
  MPI_Finalize();
  return status != MAPP_OK ? status : verdict;
}
