/* mapp-heat-animate: the command line of heat_animate_region (reads a NAM
 * region written by mapp-heat, any rank count, and writes its snapshots as
 * a GIF animation, PNG frames and/or an HDF5 export). */
#include <stdio.h>

#include "heat_animate.h"

static const char *const prog = "mapp-heat-animate";
static const char *const summary =
    "Reads a NAM region written by mapp-heat --nam, verifies its header and snapshot checksums,\n"
    "and writes the snapshots as a GIF animation, PNG frames and/or an HDF5 file.\n"
    "usage: mapp-heat-animate REGION [options]";

static int parse_args(int argc, char **argv, const char **region, heat_animate_options *a, bool *done) {
  *a = (heat_animate_options){.delay = HEAT_ANIMATE_DEFAULT_DELAY, .summary = stdout};
  const mapp_option opts[] = {
      {.name = "gif", .kind = MAPP_OPT_STRING, .dest = &a->gif, .help = "write the animation to this GIF file"},
      {.name = "frames", .kind = MAPP_OPT_STRING, .dest = &a->frames,
       .help = "write one PNG per snapshot into this existing directory"},
      {.name = "hdf5", .kind = MAPP_OPT_STRING, .dest = &a->hdf5,
       .help = "write every snapshot as dataset /step_NNNNNN of this HDF5 file"},
      {.name = "rows", .kind = MAPP_OPT_LONG, .dest = &a->rows, .min = 1, .max = 1L << 40, .default_text = "any",
       .help = "the grid's interior rows the region must have"},
      {.name = "cols", .kind = MAPP_OPT_LONG, .dest = &a->cols, .min = 1, .max = 1L << 40, .default_text = "any",
       .help = "the grid's interior columns the region must have"},
      {.name = "delay", .kind = MAPP_OPT_LONG, .dest = &a->delay, .min = 1, .max = 10000,
       .help = "GIF frame delay in 1/100 s"},
      MAPP_OPTION_END,
  };
  mapp_cli_result cli;
  int status = mapp_cli_parse(prog, summary, opts, true, argc, argv, &cli);
  *done = cli.help_shown;
  if (status == MAPP_OK && !*done && cli.positional_count != 1)
    status = mapp_fail(MAPP_ERR_INPUT, "expected one NAM region path, got %d (see --help)", cli.positional_count);
  if (status == MAPP_OK && !*done) *region = cli.positional[0];
  mapp_cli_free(&cli);
  return status;
}

int main(int argc, char **argv) {
  mapp_mpi mpi; /* parallel HDF5 needs MPI; this tool runs on one process */
  int status = mapp_mpi_init(&argc, &argv, MPI_THREAD_SINGLE, &mpi);
  const char *region = NULL;
  heat_animate_options opt;
  bool help = false;
  if (status == MAPP_OK) status = parse_args(argc, argv, &region, &opt, &help);
  if (status == MAPP_OK && !help) status = heat_animate_region(region, &opt);
  mapp_report_error(prog, status);
  MPI_Finalize();
  return status;
}
