/* gnuplot as every figure of mapp drives it: the terminals of the image
 * formats, strings made safe for scripts and data files, the templates in
 * plots/ with their @NAME@ placeholders, and one figure's steps (data file,
 * script, gnuplot, the images checked). `mapp plot`, `mapp report` and
 * `mapp history plot` all draw through here, so every figure has the same
 * look and the same defences against hostile strings. */
#ifndef HARNESS_GNUPLOT_H
#define HARNESS_GNUPLOT_H

#include <stdio.h>

#include "strv.h"

/* The terminal line of "png", "svg" or "pdf"; NULL for any other format. */
const char *gnuplot_terminal(const char *format);
/* "png,svg" into formats; an unknown format or none is an input error. */
int gnuplot_formats_parse(const char *text, strv *formats);

/* TEXT for the inside of a single-quoted gnuplot string ('...'): a quote
 * doubled, a control character blanked (malloc'd; NULL when out of
 * memory). Every string from records or paths that a gnuplot script quotes
 * must go through it: unescaped, a record could close the quote and call
 * system(). */
char *plot_gnuplot_quoted(const char *text);
/* The file-name stem of a figure (APP-KIND.png): the text with anything
 * but letters, digits and ._+- replaced by '_', never empty or starting
 * with a dot. */
void plot_file_stem(const char *text, char *buf, size_t len);
/* A series label inside a data file's double quotes (columnheader). */
void gnuplot_data_label(const char *text, FILE *f);

typedef struct {
  const char *name, *value;
} gnuplot_sub;

/* text with every @NAME@ of subs replaced (malloc'd); other at-signs stay. */
char *gnuplot_fill(const char *text, const gnuplot_sub *subs, size_t nsubs);
/* plots/NAME of the source tree. */
int gnuplot_template(const char *name, char **text);

typedef struct {
  const char *dir;     /* where data, scripts, images and gnuplot.log go */
  const strv *formats; /* png, svg, pdf */
  strv *written;       /* the images drawn are appended */
  const char *footer;  /* the PDF's footer line, gnuplot-quoted (NULL: none) */
} gnuplot_target;

/* One figure's script: for each format its terminal and output, then the
 * figure, and on PDF the footer (malloc'd into *script). */
int gnuplot_script(const gnuplot_target *t, const char *stem, const char *figure, char **script);

typedef int (*gnuplot_data_writer)(const void *what, const char *path);
typedef int (*gnuplot_script_maker)(const void *ctx, const void *what, const char *stem, const char *data_name,
                                    char **script);
/* STEM.dat written by write_data, STEM.gp made by make_script, gnuplot run
 * in t->dir (its log in gnuplot.log; a failure prints its tail and is a
 * system error), and each format's image checked and listed. */
int gnuplot_render(const gnuplot_target *t, const char *stem, gnuplot_data_writer write_data,
                   gnuplot_script_maker make_script, const void *ctx, const void *what);

#endif
