/* Scaling models: time against the rank count p, fitted by Extra-P (its
 * PMNF: a constant plus terms c * p^i * log2(p)^j) from the files `mapp
 * export --format extrap` writes. `mapp model` fits them through
 * harness/analysis/extrap_fit.py, in the Python venv ci/analysis-venv.sh
 * makes, and keeps them in RESULTS/models.json, which `mapp plot` (a line
 * through each series' points, on to the largest rank count predicted) and
 * `mapp report` (each model's leading term under the scaling figures) read. */
#ifndef HARNESS_MODEL_H
#define HARNESS_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
  double coefficient, p_exponent, log2_exponent;
} model_term;

typedef struct {
  const char *series;   /* "heat mpi/serial tiny weak t1[ setting]": export.h's series name */
  const char *callpath; /* "timed" (what the figure of merit is over), "main->compute", ... */
  const char *text;     /* Extra-P's text of the model */
  const char *leading;  /* the fastest-growing term without coefficient: "p", "p * log2(p)", "1" */
  double constant;
  model_term *terms;
  size_t nterms;
  double ar2, smape; /* adjusted R^2 and symmetric mean absolute percentage error of the fit */
} scaling_model;

typedef struct {
  json_t *root; /* models.json; the strings above point into it */
  scaling_model *items;
  size_t count;
  long fit_max_ranks; /* points above this were left out of the fits (0: none) */
  long predict_to;    /* the largest rank count the models are drawn to */
} model_set;

/* The model at p (> 0). */
double model_eval(const scaling_model *m, double p);
/* The model to 3 digits: "8.34e-05 + 0.00048 * p^0.5 * log2(p)". */
void model_format(const scaling_model *m, char *buf, size_t len);
/* The model as a gnuplot expression in x (malloc'd). */
char *model_gnuplot(const scaling_model *m);

/* The python of the analysis venv: $MAPP_ANALYSIS_VENV/bin/python, else
 * the build's analysis-venv, else the source tree's build/analysis-venv;
 * an input error saying how to make it when none exists. */
int model_python(char **python);
/* The exponents of p a fit tries: a weak-scaling time grows or stays
 * (0, 1/2, 1, 3/2, 2, 3), a strong-scaling one also falls as 1/p or
 * 1/sqrt(p) towards its serial part (-1 and -1/2 too); the exponents of
 * log2 p are 0, 1 and 2 for both. */
#define MODEL_WEAK_EXPONENTS "0,0.5,1,1.5,2,3"
#define MODEL_STRONG_EXPONENTS "-1,-0.5,0,0.5,1,1.5,2,3"

/* Fits one Extra-P file with the exponents of p given: appends a JSON
 * object per callpath (extrap_fit.py's lines, with "series" added) to
 * fits, with predictions at predict[n]. */
int model_fit_file(const char *python, const char *file, const char *series, const char *exponents,
                   const long *predict, size_t npredict, json_t *fits);

/* RESULTS/models.json; *found false (and an empty set) when there is none. */
int model_set_load(const char *results_dir, model_set *set, bool *found);
const scaling_model *model_find(const model_set *set, const char *series, const char *callpath);
void model_set_free(model_set *set);

#endif
