/* mapp-crm-columns: synthetic global-model columns for mapp-crm --input
 * (the standalone-test workflow of the report). Column j depends on j
 * alone, so a file written by any rank count is the same file. */
#include <string.h>

#include "crm.h"

static const char *const prog = "mapp-crm-columns";
static const char *const summary =
    "Write synthetic global-model columns (sounding, wind, large-scale forcing) seeded by the\n"
    "global column index, for mapp-crm --input.";

typedef struct {
  long columns, nz;
  double dz, wind;
  const char *sounding, *output;
} columns_args;

static int parse_args(int argc, char **argv, columns_args *a, bool *done) {
  *a = (columns_args){.columns = 8, .nz = 16, .sounding = "tropical"};
  const mapp_option opts[] = {
      {.name = "columns", .kind = MAPP_OPT_LONG, .dest = &a->columns, .min = 1, .max = 1L << 40,
       .help = "number of columns"},
      {.name = "nz", .kind = MAPP_OPT_LONG, .dest = &a->nz, .min = 3, .max = 1L << 16, .help = "levels"},
      {.name = "dz", .kind = MAPP_OPT_DOUBLE, .dest = &a->dz, .dmin = 0, .dmax = 1e5,
       .default_text = "20000 / nz", .help = "level depth (m)"},
      {.name = "sounding", .kind = MAPP_OPT_CHOICE, .dest = &a->sounding,
       .choices = "tropical|dry-stable|dry-neutral", .help = "the columns' sounding"},
      {.name = "wind", .kind = MAPP_OPT_DOUBLE, .dest = &a->wind, .dmin = -1e4, .dmax = 1e4,
       .help = "wind (m/s) added to every level"},
      {.name = "output", .kind = MAPP_OPT_STRING, .dest = &a->output, .default_text = "required",
       .help = "HDF5 file to write"},
      MAPP_OPTION_END,
  };
  mapp_cli_result cli;
  int status = mapp_cli_parse(prog, summary, opts, false, argc, argv, &cli);
  *done = cli.help_shown;
  mapp_cli_free(&cli);
  if (status == MAPP_OK && !*done && !a->output) return mapp_fail(MAPP_ERR_INPUT, "--output FILE is required");
  return status;
}

static int write_columns(const mapp_mpi *mpi, const columns_args *a) {
  crm_sounding kind = !strcmp(a->sounding, "dry-stable")    ? CRM_SOUNDING_DRY_STABLE
                      : !strcmp(a->sounding, "dry-neutral") ? CRM_SOUNDING_DRY_NEUTRAL
                                                            : CRM_SOUNDING_TROPICAL;
  double dz = a->dz > 0 ? a->dz : crm_default_dz(a->nz);
  mapp_range mine = mapp_split_even(a->columns, mpi->nranks, mpi->rank);
  crm_columns cols;
  int status = crm_columns_alloc(&cols, mine.count, a->nz, mine.first);
  if (status == MAPP_OK) status = crm_columns_synthesize(&cols, kind, dz, a->wind);
  status = mapp_agree(mpi->comm, prog, status);
  if (status == MAPP_OK)
    status = mapp_agree(mpi->comm, prog, crm_columns_write(mpi->comm, a->output, &cols, a->columns, dz));
  crm_columns_free(&cols);
  return status;
}

int main(int argc, char **argv) {
  mapp_mpi mpi;
  int status = mapp_mpi_init(&argc, &argv, MPI_THREAD_FUNNELED, &mpi);
  columns_args args;
  bool help = false;
  if (status == MAPP_OK) status = parse_args(argc, argv, &args, &help);
  if (mpi.rank != 0) mapp_error_clear();
  status = mapp_agree(mpi.comm, prog, status);
  if (status == MAPP_OK && !help) status = write_columns(&mpi, &args);
  MPI_Finalize();
  return status;
}
