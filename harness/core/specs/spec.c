#include "spec.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "mapp_backend.h"
#include "mapp_error.h"
#include "measure.h"
#include "yamlutil.h"

static const char *const top_keys[] = {"name", "description", "check", "weak_reference", "runs", "plots",
                                       MEASURE_KEYS, NULL};
static const char *const run_keys[] = {"app",   "variants", "backends", "ranks", "threads", "sizes",          "scaling",
                                       "args",  "label",    "matrix",   "gpus",  "check",   "weak_reference", "case",
                                       "answer_of", MEASURE_KEYS, NULL};

static bool one_of(const char *choices, const char *word) {
  size_t len = strlen(word);
  for (const char *p = choices; *p;) {
    size_t n = strcspn(p, "|");
    if (n == len && strncmp(p, word, len) == 0) return true;
    p += n + (p[n] == '|');
  }
  return false;
}

/* Every item of a list key must be one of choices. */
static int check_choices(const yaml_map *m, const char *key, const strv *items, const char *choices) {
  for (size_t i = 0; i < items->count; ++i)
    if (!one_of(choices, items->items[i]))
      return yaml_error_at(m, key, "'%s' has unknown value '%s' (choose from %s)", key, items->items[i], choices);
  return MAPP_OK;
}

static int default_list(strv *list, const char *value) { return list->count ? MAPP_OK : strv_push(list, value); }

/* Names that become file or folder names (the sweep's name, an entry's
 * label): one safe path component. */
static bool plain_name(const char *name) {
  const char *allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
  return name[0] != '\0' && name[0] != '.' && strspn(name, allowed) == strlen(name);
}

static int check_name(const yaml_map *m, const char *key, const char *name) {
  if (!plain_name(name))
    return yaml_error_at(m, key, "'%s' must be letters, digits, '.', '_' or '-' (it names files), got '%s'",
                         key, name);
  return MAPP_OK;
}

/* ------------------------------------------------------------ matrix */

/* A matrix value as JSON: a number where the whole text is one, else text. */
static json_t *param_value(const char *text) {
  char *end;
  double x = strtod(text, &end);
  if (end != text && *end == '\0') {
    long n = strtol(text, &end, 10);
    return *end == '\0' ? json_integer(n) : json_real(x);
  }
  return json_string(text);
}

static int parse_matrix(const yaml_map *m, spec_run *run) {
  yaml_map matrix;
  MAPP_TRY(yaml_get_map(m, "matrix", &matrix));
  if (!matrix.node) return MAPP_OK;
  strv keys = {0};
  int status = yaml_map_keys(&matrix, &keys);
  if (status == MAPP_OK && keys.count == 0) status = yaml_error_at(m, "matrix", "'matrix' names no flag");
  if (status == MAPP_OK && !(run->matrix_values = calloc(keys.count, sizeof *run->matrix_values)))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t k = 0; status == MAPP_OK && k < keys.count; ++k) {
    const char *key = keys.items[k], *name = key + strspn(key, "-");
    char *flag = str_printf("--%s", name);
    status = flag && *name ? strv_push(&run->matrix_flags, flag)
                           : yaml_error_at(m, "matrix", "'matrix' key '%s' is not a flag name", key);
    free(flag);
    if (status == MAPP_OK) status = yaml_get_strings(&matrix, key, true, &run->matrix_values[k]);
    if (status == MAPP_OK && run->matrix_values[k].count == 0)
      status = yaml_error_at(&matrix, key, "'%s' has no values", key);
  }
  strv_free(&keys);
  return status;
}

/* Combination `index` of the matrix (mixed radix, the first flag slowest). */
static int make_combo(const spec_run *run, size_t index, spec_combo *c) {
  MAPP_TRY(strv_extend(&c->args, &run->args));
  if (!run->matrix_flags.count) return MAPP_OK;
  size_t nflags = run->matrix_flags.count, *digit = calloc(nflags, sizeof *digit);
  if (!digit || !(c->params = json_object())) {
    free(digit);
    return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  }
  for (size_t k = nflags; k-- > 0;) {
    digit[k] = index % run->matrix_values[k].count;
    index /= run->matrix_values[k].count;
  }
  strv words = {0};
  int status = MAPP_OK;
  for (size_t k = 0; status == MAPP_OK && k < nflags; ++k) {
    const char *flag = run->matrix_flags.items[k], *value = run->matrix_values[k].items[digit[k]];
    char *word = str_printf("%s=%s", flag + 2, value);
    status = word ? strv_push(&words, word) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    free(word);
    if (status == MAPP_OK) status = strv_push(&c->args, flag);
    if (status == MAPP_OK) status = strv_push(&c->args, value);
    if (status == MAPP_OK) json_object_set_new(c->params, flag + 2, param_value(value));
  }
  if (status == MAPP_OK && !(c->text = strv_join(&words, " "))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  strv_free(&words);
  free(digit);
  return status;
}

/* The entry's combinations: one without a matrix, else the product. */
static int make_combos(const yaml_map *m, spec_run *run) {
  size_t count = 1;
  for (size_t k = 0; k < run->matrix_flags.count; ++k) {
    count *= run->matrix_values[k].count;
    if (count > 100000) return yaml_error_at(m, "matrix", "'matrix' expands to more than 100000 combinations");
  }
  if (!(run->combos = calloc(count, sizeof *run->combos))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  run->ncombos = count;
  for (size_t i = 0; i < count; ++i) MAPP_TRY(make_combo(run, i, &run->combos[i]));
  return MAPP_OK;
}

/* `check:` of the spec or of an entry; *mode keeps its value when absent. */
static int parse_check(const yaml_map *m, check_mode *mode) {
  char *text = NULL;
  MAPP_TRY(yaml_get_string(m, "check", false, &text));
  int status = MAPP_OK;
  if (text && check_mode_parse(text, mode) != MAPP_OK) {
    mapp_error_clear(); /* the message that names the file and line replaces it */
    status = yaml_error_at(m, "check", "'check' must be required, optional or none, got '%s'", text);
  }
  free(text);
  return status;
}

/* `weak_reference:` of the spec or of an entry (true | false); *value
 * keeps its value when absent. */
static int parse_weak_reference(const yaml_map *m, bool *value) {
  char *text = NULL;
  MAPP_TRY(yaml_get_string(m, "weak_reference", false, &text));
  int status = MAPP_OK;
  if (text && strcmp(text, "true") && strcmp(text, "false"))
    status = yaml_error_at(m, "weak_reference", "'weak_reference' must be true or false, got '%s'", text);
  else if (text) *value = strcmp(text, "true") == 0;
  free(text);
  return status;
}

static int parse_run(const yaml_map *m, const sweep_spec *spec, spec_run *run) {
  MAPP_TRY(yaml_check_keys(m, run_keys));
  MAPP_TRY(measure_parse(m, &spec->measure, &run->measure));
  run->check = spec->check;
  MAPP_TRY(parse_check(m, &run->check));
  run->weak_reference = spec->weak_reference;
  MAPP_TRY(parse_weak_reference(m, &run->weak_reference));
  MAPP_TRY(yaml_get_string(m, "case", false, &run->case_name));
  if (run->case_name) MAPP_TRY(check_name(m, "case", run->case_name));
  MAPP_TRY(yaml_get_string(m, "app", true, &run->app));
  MAPP_TRY(yaml_get_strings(m, "variants", false, &run->variants));
  MAPP_TRY(yaml_get_strings(m, "backends", false, &run->backends));
  MAPP_TRY(yaml_get_longs(m, "ranks", true, 1, &run->ranks, &run->nranks));
  MAPP_TRY(yaml_get_longs(m, "threads", false, 1, &run->threads, &run->nthreads));
  MAPP_TRY(yaml_get_strings(m, "sizes", false, &run->sizes));
  MAPP_TRY(yaml_get_string(m, "scaling", false, &run->scaling));
  MAPP_TRY(yaml_get_strings(m, "args", false, &run->args));
  MAPP_TRY(yaml_get_string(m, "label", false, &run->label));
  run->gpus = -1;
  MAPP_TRY(yaml_get_long(m, "gpus", false, 0, &run->gpus));
  if (run->label) MAPP_TRY(check_name(m, "label", run->label));
  MAPP_TRY(yaml_get_string(m, "answer_of", false, &run->answer_of));
  if (run->answer_of) MAPP_TRY(check_name(m, "answer_of", run->answer_of));
  MAPP_TRY(parse_matrix(m, run));
  MAPP_TRY(make_combos(m, run));
  MAPP_TRY(default_list(&run->backends, "serial"));
  MAPP_TRY(default_list(&run->sizes, "tiny"));
  char backends[128];
  mapp_backend_choices(~0u, backends, sizeof backends);
  MAPP_TRY(check_choices(m, "backends", &run->backends, backends));
  /* Sizes are the apps' presets (heat's bsc, crm's tiny-rain): each app
   * checks its own; here only that they make file names. */
  for (size_t i = 0; i < run->sizes.count; ++i) MAPP_TRY(check_name(m, "sizes", run->sizes.items[i]));
  if (!run->scaling && !(run->scaling = strdup("strong"))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (!one_of("weak|strong", run->scaling))
    return yaml_error_at(m, "scaling", "'scaling' must be weak or strong, got '%s'", run->scaling);
  if (!run->threads) {
    if (!(run->threads = malloc(sizeof *run->threads))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
    run->threads[0] = 1;
    run->nthreads = 1;
  }
  return MAPP_OK;
}

static int parse_reference(const yaml_map *ref, speedup_refs *refs) {
  static const char *const ref_keys[] = {"variant", "backend", NULL};
  char *variant = NULL, *backend = NULL;
  int status = yaml_check_keys(ref, ref_keys);
  if (status == MAPP_OK) status = yaml_get_string(ref, "variant", true, &variant);
  if (status == MAPP_OK) status = yaml_get_string(ref, "backend", true, &backend);
  if (status == MAPP_OK) status = speedup_refs_add(refs, variant, backend);
  free(variant);
  free(backend);
  return status;
}

static int parse_bool(const yaml_map *m, const char *key, bool *out) {
  char *text = NULL;
  MAPP_TRY(yaml_get_string(m, key, false, &text));
  if (!text) return MAPP_OK;
  bool yes = !strcmp(text, "true") || !strcmp(text, "yes"), no = !strcmp(text, "false") || !strcmp(text, "no");
  free(text);
  if (!yes && !no) return yaml_error_at(m, key, "'%s' must be true or false", key);
  *out = yes;
  return MAPP_OK;
}

/* A matrix flag may be named as written in the matrix (--iterations). */
static void strip_dashes(char *name) {
  size_t n = strspn(name, "-");
  memmove(name, name + n, strlen(name + n) + 1);
}

static int parse_figure(const yaml_map *m, figure_spec *f) {
  static const char *const keys[] = {"name", "app", "x", "y", "logx", "logy", "series", "title", "where", NULL};
  MAPP_TRY(yaml_check_keys(m, keys));
  MAPP_TRY(yaml_get_string(m, "name", true, &f->name));
  MAPP_TRY(check_name(m, "name", f->name));
  MAPP_TRY(yaml_get_string(m, "app", false, &f->app));
  MAPP_TRY(yaml_get_string(m, "x", true, &f->x));
  MAPP_TRY(yaml_get_string(m, "y", true, &f->y));
  MAPP_TRY(yaml_get_string(m, "title", false, &f->title));
  MAPP_TRY(parse_bool(m, "logx", &f->logx));
  MAPP_TRY(parse_bool(m, "logy", &f->logy));
  MAPP_TRY(yaml_get_strings(m, "series", false, &f->series));
  MAPP_TRY(yaml_get_pairs_of_lists(m, "where", &f->where_fields, &f->where_values));
  if (!f->series.count) {
    MAPP_TRY(strv_push(&f->series, "variant"));
    MAPP_TRY(strv_push(&f->series, "backend"));
  }
  strip_dashes(f->x);
  return MAPP_OK;
}

/* ------------------------------------------------------------ tables */

/* Every path of a table's list (columns, value, where) well formed;
 * matrix flags' dashes dropped. */
static int check_table_paths(const yaml_map *m, const table_spec *t, const char *key, const char *what,
                             strv *paths) {
  for (size_t i = 0; i < paths->count; ++i) {
    char *path = paths->items[i];
    strip_dashes(path);
    if (!figure_path_valid(path))
      return yaml_error_at(m, key, "table '%s': %s '%s' is not a field path (names of letters, digits, '_' or '-' "
                           "joined by single dots, e.g. app_data.metg_us)", t->name, what, paths->items[i]);
  }
  return MAPP_OK;
}

static int check_table_columns(const yaml_map *m, table_spec *t) {
  if (!t->columns.count) return yaml_error_at(m, "columns", "table '%s': 'columns' is empty", t->name);
  MAPP_TRY(check_table_paths(m, t, "columns", "column", &t->columns));
  for (size_t i = 0; i < t->columns.count; ++i)
    for (size_t j = 0; j < i; ++j)
      if (!strcmp(t->columns.items[i], t->columns.items[j]))
        return yaml_error_at(m, "columns", "table '%s': column '%s' is listed twice", t->name, t->columns.items[i]);
  MAPP_TRY(check_table_paths(m, t, "value", "value", &t->values));
  for (size_t i = 0; i < t->values.count; ++i)
    if (!strv_contains(&t->columns, t->values.items[i]))
      return yaml_error_at(m, "value", "table '%s': value '%s' is not one of its columns", t->name,
                           t->values.items[i]);
  return check_table_paths(m, t, "where", "where field", &t->where_fields);
}

/* Keys are checked after the name, so that every complaint names the table. */
static int parse_table(const yaml_map *m, table_spec *t) {
  static const char *const keys[] = {"name", "app", "title", "columns", "value", "where", NULL};
  MAPP_TRY(yaml_get_string(m, "name", true, &t->name));
  if (!plain_name(t->name))
    return yaml_error_at(m, "name", "table '%s': 'name' must be letters, digits, '.', '_' or '-' (it names the file "
                         "plots/APP-NAME.csv)", t->name);
  char owner[160];
  snprintf(owner, sizeof owner, "table '%s'", t->name);
  MAPP_TRY(yaml_check_keys_of(m, keys, owner));
  MAPP_TRY(yaml_get_string(m, "app", false, &t->app));
  MAPP_TRY(yaml_get_string(m, "title", false, &t->title));
  MAPP_TRY(yaml_get_strings(m, "columns", true, &t->columns));
  MAPP_TRY(yaml_get_string_or_list(m, "value", &t->values));
  MAPP_TRY(yaml_get_pairs_of_lists(m, "where", &t->where_fields, &t->where_values));
  return check_table_columns(m, t);
}

/* ------------------------------------------------------------ ratios */

static int parse_ratio(const yaml_map *m, ratio_spec *r) {
  static const char *const keys[] = {"name", "app", "title", "note", "numerator", "denominator", "same", NULL};
  MAPP_TRY(yaml_get_string(m, "name", true, &r->name));
  if (!plain_name(r->name))
    return yaml_error_at(m, "name", "ratio '%s': 'name' must be letters, digits, '.', '_' or '-'", r->name);
  char owner[160];
  snprintf(owner, sizeof owner, "ratio '%s'", r->name);
  MAPP_TRY(yaml_check_keys_of(m, keys, owner));
  MAPP_TRY(yaml_get_string(m, "app", false, &r->app));
  MAPP_TRY(yaml_get_string(m, "title", false, &r->title));
  MAPP_TRY(yaml_get_string(m, "note", false, &r->note));
  MAPP_TRY(yaml_get_pairs_of_lists(m, "numerator", &r->num_fields, &r->num_values));
  MAPP_TRY(yaml_get_pairs_of_lists(m, "denominator", &r->den_fields, &r->den_values));
  if (!r->num_fields.count || !r->den_fields.count)
    return yaml_error_at(m, r->num_fields.count ? "denominator" : "numerator",
                         "ratio '%s': numerator and denominator each need a where map, e.g. {label: gpu}", r->name);
  MAPP_TRY(yaml_get_strings(m, "same", false, &r->same));
  if (!r->same.count) MAPP_TRY(strv_push(&r->same, "host"));
  strv *paths[] = {&r->num_fields, &r->den_fields, &r->same};
  for (size_t p = 0; p < 3; ++p)
    for (size_t i = 0; i < paths[p]->count; ++i) {
      strip_dashes(paths[p]->items[i]);
      if (!figure_path_valid(paths[p]->items[i]))
        return yaml_error_at(m, p == 2 ? "same" : p ? "denominator" : "numerator",
                             "ratio '%s': '%s' is not a field path", r->name, paths[p]->items[i]);
    }
  return MAPP_OK;
}

/* The list under `key` of plots (figures, tables) into a new array of
 * `size`-byte items, each parsed by `parse` and holding its name at
 * `name_at`. Figures and tables name files (APP-NAME.png, APP-NAME.csv):
 * two of a kind with one name would overwrite each other. */
static int parse_named_list(const yaml_map *plots, const char *key, const char *kind, size_t size, size_t name_at,
                            int (*parse)(const yaml_map *, void *), void **out, size_t *n) {
  yaml_map *items = NULL;
  size_t count = 0;
  char *array = NULL;
  int status = yaml_get_map_list(plots, key, false, &items, &count);
  if (status == MAPP_OK && count && !(array = calloc(count, size))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) *out = array, *n = count;
  for (size_t i = 0; status == MAPP_OK && i < count; ++i) {
    status = parse(&items[i], array + i * size);
    const char *name = *(char **)(array + i * size + name_at);
    for (size_t j = 0; status == MAPP_OK && j < i; ++j)
      if (strcmp(name, *(char **)(array + j * size + name_at)) == 0)
        status = yaml_error_at(&items[i], "name", "%s '%s' is defined twice (its name names its file)", kind, name);
  }
  free(items);
  return status;
}

static int parse_figure_item(const yaml_map *m, void *item) { return parse_figure(m, item); }
static int parse_table_item(const yaml_map *m, void *item) { return parse_table(m, item); }
static int parse_ratio_item(const yaml_map *m, void *item) { return parse_ratio(m, item); }

static int parse_figures(const yaml_map *plots, sweep_spec *spec) {
  return parse_named_list(plots, "figures", "figure", sizeof(figure_spec), offsetof(figure_spec, name),
                          parse_figure_item, (void **)&spec->figures, &spec->nfigures);
}

static int parse_tables(const yaml_map *plots, sweep_spec *spec) {
  return parse_named_list(plots, "tables", "table", sizeof(table_spec), offsetof(table_spec, name), parse_table_item,
                          (void **)&spec->tables, &spec->ntables);
}

static int parse_ratios(const yaml_map *plots, sweep_spec *spec) {
  return parse_named_list(plots, "ratios", "ratio", sizeof(ratio_spec), offsetof(ratio_spec, name), parse_ratio_item,
                          (void **)&spec->ratios, &spec->nratios);
}

static int parse_plots(const yaml_map *root, sweep_spec *spec) {
  static const char *const plot_keys[] = {"reference", "figures", "tables", "ratios", NULL};
  yaml_map plots, *refs = NULL;
  size_t count = 0;
  MAPP_TRY(yaml_get_map(root, "plots", &plots));
  MAPP_TRY(yaml_check_keys(&plots, plot_keys));
  int status = yaml_get_map_or_list(&plots, "reference", &refs, &count);
  for (size_t i = 0; status == MAPP_OK && i < count; ++i) status = parse_reference(&refs[i], &spec->reference);
  free(refs);
  if (status == MAPP_OK) status = parse_figures(&plots, spec);
  if (status == MAPP_OK) status = parse_tables(&plots, spec);
  if (status == MAPP_OK) status = parse_ratios(&plots, spec);
  return status;
}

static int parse_spec(const yaml_map *root, sweep_spec *spec) {
  MAPP_TRY(yaml_check_keys(root, top_keys));
  MAPP_TRY(yaml_get_string(root, "name", true, &spec->name));
  MAPP_TRY(check_name(root, "name", spec->name));
  MAPP_TRY(yaml_get_string(root, "description", false, &spec->description));
  measure_spec defaults = measure_defaults();
  MAPP_TRY(measure_parse(root, &defaults, &spec->measure));
  spec->repetitions = spec->measure.repetitions;
  spec->check = CHECK_OPTIONAL;
  MAPP_TRY(parse_check(root, &spec->check));
  MAPP_TRY(parse_weak_reference(root, &spec->weak_reference));
  yaml_map *entries = NULL;
  size_t count = 0;
  int status = yaml_get_map_list(root, "runs", true, &entries, &count);
  /* Zeroed entries free safely, so a parse failing half way frees them all. */
  if (status == MAPP_OK && !(spec->runs = calloc(count, sizeof *spec->runs)))
    status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  if (status == MAPP_OK) spec->nruns = count;
  for (size_t i = 0; status == MAPP_OK && i < count; ++i) status = parse_run(&entries[i], spec, &spec->runs[i]);
  free(entries);
  if (status == MAPP_OK) status = parse_plots(root, spec);
  return status;
}

static int spec_from_doc(yaml_doc *y, int status, sweep_spec *spec) {
  yaml_map root;
  if (status == MAPP_OK) status = yaml_root(y, &root);
  if (status == MAPP_OK) status = parse_spec(&root, spec);
  if (status == MAPP_OK && !(spec->origin = strdup(y->origin))) status = mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  yaml_close(y);
  if (status != MAPP_OK) spec_free(spec);
  return status;
}

int spec_load(const char *path, sweep_spec *spec) {
  *spec = (sweep_spec){0};
  yaml_doc y;
  int status = yaml_load_file(path, &y);
  return spec_from_doc(&y, status, spec);
}

int spec_parse_string(const char *text, const char *origin, sweep_spec *spec) {
  *spec = (sweep_spec){0};
  yaml_doc y;
  int status = yaml_load_string(text, origin, &y);
  return spec_from_doc(&y, status, spec);
}

static void spec_run_free(spec_run *run) {
  free(run->app);
  strv_free(&run->variants);
  strv_free(&run->backends);
  strv_free(&run->sizes);
  strv_free(&run->args);
  free(run->ranks);
  free(run->threads);
  free(run->scaling);
  free(run->label);
  free(run->case_name);
  free(run->answer_of);
  for (size_t k = 0; run->matrix_values && k < run->matrix_flags.count; ++k) strv_free(&run->matrix_values[k]);
  free(run->matrix_values);
  strv_free(&run->matrix_flags);
  for (size_t i = 0; i < run->ncombos; ++i) {
    strv_free(&run->combos[i].args);
    json_decref(run->combos[i].params);
    free(run->combos[i].text);
  }
  free(run->combos);
}

void spec_free(sweep_spec *spec) {
  for (size_t i = 0; i < spec->nruns; ++i) spec_run_free(&spec->runs[i]);
  free(spec->runs);
  free(spec->name);
  free(spec->description);
  free(spec->origin);
  speedup_refs_free(&spec->reference);
  for (size_t i = 0; i < spec->nfigures; ++i) figure_spec_free(&spec->figures[i]);
  free(spec->figures);
  for (size_t i = 0; i < spec->ntables; ++i) table_spec_free(&spec->tables[i]);
  free(spec->tables);
  for (size_t i = 0; i < spec->nratios; ++i) ratio_spec_free(&spec->ratios[i]);
  free(spec->ratios);
  *spec = (sweep_spec){0};
}

/* ---------------------------------------------------------------- expansion */

static const app_info *find_app(const app_info *apps, size_t napps, const char *name) {
  for (size_t i = 0; i < napps; ++i)
    if (strcmp(apps[i].name, name) == 0) return &apps[i];
  return NULL;
}

/* The variants a run entry names, checked against the app; all when it names none. */
static int run_variants(const spec_run *run, const app_info *app, const sweep_spec *spec, const char ***names,
                        size_t *count) {
  *count = run->variants.count ? run->variants.count : app->nvariants;
  *names = calloc(*count, sizeof **names);
  if (!*names) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  for (size_t i = 0; i < *count; ++i) {
    (*names)[i] = run->variants.count ? run->variants.items[i] : app->variants[i].name;
    if (!app_find_variant(app, (*names)[i]))
      return mapp_fail(MAPP_ERR_INPUT, "%s: app '%s' has no variant '%s'", spec->origin, run->app, (*names)[i]);
  }
  return MAPP_OK;
}

static int push_job(sweep_jobs *jobs, size_t *capacity, const sweep_job *item) {
  if (jobs->count == *capacity) {
    size_t grown = *capacity ? *capacity * 2 : 64;
    sweep_job *items = realloc(jobs->items, grown * sizeof *items);
    if (!items) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory expanding the sweep");
    jobs->items = items;
    *capacity = grown;
  }
  jobs->items[jobs->count++] = *item;
  return MAPP_OK;
}

/* The most runs any entry's first round has. */
static long first_round_repetitions(const sweep_spec *spec) {
  long most = 0;
  for (size_t i = 0; i < spec->nruns; ++i)
    if (spec->runs[i].measure.repetitions > most) most = spec->runs[i].measure.repetitions;
  return most;
}

/* The product of one run entry for one repetition. */
static int expand_run(const spec_run *run, const app_info *app, const char **variants, size_t nvariants,
                      long repetition, sweep_jobs *jobs, size_t *capacity) {
  for (size_t c = 0; c < run->ncombos; ++c)
    for (size_t v = 0; v < nvariants; ++v)
      for (size_t b = 0; b < run->backends.count; ++b)
        for (size_t s = 0; s < run->sizes.count; ++s)
          for (size_t t = 0; t < run->nthreads; ++t)
            for (size_t r = 0; r < run->nranks; ++r) {
              const spec_combo *combo = &run->combos[c];
              sweep_job item = {
                  .job = {.app = run->app, .variant = variants[v], .backend = run->backends.items[b],
                          .size = run->sizes.items[s], .scaling = run->scaling, .ranks = run->ranks[r],
                          .threads = run->threads[t], .repetition = repetition, .extra_args = &combo->args,
                          .label = run->label, .params = combo->params, .params_text = combo->text,
                          .reference = app->reference, .exe = app->exe, .baselines = app->baselines, .check = run->check, .baseline_case = run->case_name,
                          .gpus = run->gpus >= 0 ? run->gpus : !strcmp(run->backends.items[b], "cuda"),
                          .min_time = run->measure.min_time, .time_limit = run->measure.time_limit},
                  .measure = &run->measure,
                  .combo = app_combo(app, variants[v], run->backends.items[b]),
                  .bitwise_ranks = app->bitwise_ranks,
                  .weak_reference = run->weak_reference,
                  .peer_of = app->peer_of,
                  .answer_of = run->answer_of};
              MAPP_TRY(push_job(jobs, capacity, &item));
            }
  return MAPP_OK;
}

/* Whether a program of the spec (apps) is a peer of `name`. */
static bool has_peer(const app_info *apps, size_t napps, const char *name) {
  for (size_t i = 0; i < napps; ++i)
    if (apps[i].peer_of && strcmp(apps[i].peer_of, name) == 0) return true;
  return false;
}

int spec_expand(const sweep_spec *spec, const app_info *apps, size_t napps, sweep_jobs *jobs) {
  *jobs = (sweep_jobs){0};
  size_t capacity = 0;
  int status = MAPP_OK;
  long rounds = first_round_repetitions(spec);
  for (long rep = 0; status == MAPP_OK && rep < rounds; ++rep)
    for (size_t i = 0; status == MAPP_OK && i < spec->nruns; ++i) {
      const spec_run *run = &spec->runs[i];
      if (rep >= run->measure.repetitions) continue;
      const app_info *app = find_app(apps, napps, run->app);
      if (!app) {
        status = mapp_fail(MAPP_ERR_INPUT, "%s: no mini-app '%s' in this build", spec->origin, run->app);
        break;
      }
      if (run->answer_of && !app->peer_of) {
        status = mapp_fail(MAPP_ERR_INPUT, "%s: answer_of '%s' on mapp-%s, which is no peer of a mini-app "
                           "(its --list names no peer_of)", spec->origin, run->answer_of, run->app);
        break;
      }
      const char **variants = NULL;
      size_t nvariants = 0;
      status = run_variants(run, app, spec, &variants, &nvariants);
      if (status == MAPP_OK) status = expand_run(run, app, variants, nvariants, rep, jobs, &capacity);
      free(variants);
    }
  for (size_t i = 0; status == MAPP_OK && i < jobs->count; ++i)
    jobs->items[i].peer_target = has_peer(apps, napps, jobs->items[i].job.app);
  if (status != MAPP_OK) sweep_jobs_free(jobs);
  return status;
}

void sweep_jobs_free(sweep_jobs *jobs) {
  free(jobs->items);
  *jobs = (sweep_jobs){0};
}
