#include "yamlutil.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapp_error.h"

/* libfyaml's diagnostics go to this sink instead of stderr, so a syntax
 * error becomes our one-line message instead of its multi-line report. */
static void keep_first_diagnostic(struct fy_diag *diag, void *user, const char *buf, size_t len) {
  (void)diag;
  yaml_doc *y = user;
  if (!y->first_error[0]) snprintf(y->first_error, sizeof y->first_error, "%.*s", (int)len, buf);
}

static int yaml_open_diag(yaml_doc *y, const char *origin) {
  *y = (yaml_doc){.origin = strdup(origin)};
  struct fy_diag_cfg cfg;
  fy_diag_cfg_default(&cfg);
  cfg.fp = NULL;
  cfg.output_fn = keep_first_diagnostic;
  cfg.user = y;
  cfg.colorize = false;
  cfg.show_source = false;
  y->diag = fy_diag_create(&cfg);
  if (!y->origin || !y->diag) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading %s", origin);
  return MAPP_OK;
}

/* "...:LINE:COL: error: MESSAGE" becomes "ORIGIN:LINE:COL: not valid YAML: MESSAGE". */
static int yaml_syntax_error(const yaml_doc *y) {
  const char *marker = strstr(y->first_error, ": error: ");
  if (!marker) return mapp_fail(MAPP_ERR_INPUT, "%s: not valid YAML", y->origin);
  const char *message = marker + strlen(": error: ");
  int width = (int)strcspn(message, "\n");
  /* the position is the two numbers before the marker */
  const char *p = marker;
  for (int colons = 0; p > y->first_error && colons < 2; --p) colons += p[-1] == ':';
  int line = 0, column = 0;
  if (sscanf(p + 1, "%d:%d", &line, &column) == 2 && line > 0)
    return mapp_fail(MAPP_ERR_INPUT, "%s:%d:%d: not valid YAML: %.*s", y->origin, line, column, width, message);
  return mapp_fail(MAPP_ERR_INPUT, "%s: not valid YAML: %.*s", y->origin, width, message);
}

static int yaml_finish_load(yaml_doc *y) {
  if (!y->doc) return yaml_syntax_error(y);
  if (!fy_document_root(y->doc)) return mapp_fail(MAPP_ERR_INPUT, "%s: the document is empty", y->origin);
  return MAPP_OK;
}

int yaml_load_file(const char *path, yaml_doc *y) {
  MAPP_TRY(yaml_open_diag(y, path));
  FILE *probe = fopen(path, "r");
  if (!probe) return mapp_fail(MAPP_ERR_INPUT, "cannot read %s: %s", path, strerror(errno));
  fclose(probe);
  struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET, .diag = y->diag};
  y->doc = fy_document_build_from_file(&cfg, path);
  return yaml_finish_load(y);
}

int yaml_load_string(const char *text, const char *origin, yaml_doc *y) {
  MAPP_TRY(yaml_open_diag(y, origin));
  struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET, .diag = y->diag};
  y->doc = fy_document_build_from_string(&cfg, text, FY_NT);
  return yaml_finish_load(y);
}

void yaml_close(yaml_doc *y) {
  if (y->doc) fy_document_destroy(y->doc);
  if (y->diag) fy_diag_unref(y->diag);
  free(y->origin);
  *y = (yaml_doc){0};
}

int yaml_root(const yaml_doc *y, yaml_map *root) {
  root->origin = y->origin;
  root->node = fy_document_root(y->doc);
  if (!fy_node_is_mapping(root->node))
    return mapp_fail(MAPP_ERR_INPUT, "%s: the top level must be a mapping of keys to values", y->origin);
  return MAPP_OK;
}

static int node_line(struct fy_node *node) {
  struct fy_token *token = node ? fy_node_get_scalar_token(node) : NULL;
  const struct fy_mark *mark = token ? fy_token_start_mark(token) : NULL;
  return mark ? mark->line + 1 : 0;
}

/* The pair whose key is `key`, or NULL. */
static struct fy_node_pair *find_pair(const yaml_map *m, const char *key) {
  if (!m->node) return NULL;
  void *iter = NULL;
  for (struct fy_node_pair *p; (p = fy_node_mapping_iterate(m->node, &iter));) {
    const char *name = fy_node_get_scalar0(fy_node_pair_key(p));
    if (name && strcmp(name, key) == 0) return p;
  }
  return NULL;
}

static int vfail_at(const yaml_map *m, struct fy_node *node, const char *fmt, va_list ap) {
  char message[512];
  vsnprintf(message, sizeof message, fmt, ap);
  int line = node_line(node);
  if (line > 0) return mapp_fail(MAPP_ERR_INPUT, "%s:%d: %s", m->origin, line, message);
  return mapp_fail(MAPP_ERR_INPUT, "%s: %s", m->origin, message);
}

int yaml_error_at(const yaml_map *m, const char *key, const char *fmt, ...) {
  struct fy_node_pair *pair = find_pair(m, key);
  va_list ap;
  va_start(ap, fmt);
  int status = vfail_at(m, pair ? fy_node_pair_key(pair) : NULL, fmt, ap);
  va_end(ap);
  return status;
}

bool yaml_has(const yaml_map *m, const char *key) { return find_pair(m, key) != NULL; }

int yaml_check_keys_of(const yaml_map *m, const char *const allowed[], const char *owner) {
  if (!m->node) return MAPP_OK;
  void *iter = NULL;
  for (struct fy_node_pair *p; (p = fy_node_mapping_iterate(m->node, &iter));) {
    const char *name = fy_node_get_scalar0(fy_node_pair_key(p));
    bool known = false;
    for (size_t i = 0; name && allowed[i] && !known; ++i) known = strcmp(name, allowed[i]) == 0;
    if (known) continue;
    const char *shown = name ? name : "(not a scalar)";
    if (!owner) return yaml_error_at(m, name ? name : "", "unknown key '%s'", shown);
    char list[256] = "";
    for (size_t i = 0; allowed[i]; ++i)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", allowed[i]);
    return yaml_error_at(m, name ? name : "", "%s: unknown key '%s' (known: %s)", owner, shown, list);
  }
  return MAPP_OK;
}

int yaml_check_keys(const yaml_map *m, const char *const allowed[]) { return yaml_check_keys_of(m, allowed, NULL); }

/* The value node of key; a missing required key is an input error. */
static int lookup(const yaml_map *m, const char *key, bool required, struct fy_node **value) {
  struct fy_node_pair *pair = find_pair(m, key);
  *value = pair ? fy_node_pair_value(pair) : NULL;
  if (pair || !required) return MAPP_OK;
  /* Point at the mapping that lacks the key: the line of its first key. */
  void *iter = NULL;
  struct fy_node_pair *first = m->node ? fy_node_mapping_iterate(m->node, &iter) : NULL;
  int line = first ? node_line(fy_node_pair_key(first)) : 0;
  if (line > 0) return mapp_fail(MAPP_ERR_INPUT, "%s:%d: missing required key '%s'", m->origin, line, key);
  return mapp_fail(MAPP_ERR_INPUT, "%s: missing required key '%s'", m->origin, key);
}

static int parse_long_text(const yaml_map *m, const char *key, const char *text, long min, long *out) {
  char *end;
  errno = 0;
  long v = text ? strtol(text, &end, 10) : 0;
  if (!text || errno || end == text || *end != '\0')
    return yaml_error_at(m, key, "'%s' must be an integer, got '%s'", key, text ? text : "(not a scalar)");
  if (v < min) return yaml_error_at(m, key, "'%s' must be at least %ld, got %ld", key, min, v);
  *out = v;
  return MAPP_OK;
}

int yaml_get_string(const yaml_map *m, const char *key, bool required, char **out) {
  struct fy_node *value;
  MAPP_TRY(lookup(m, key, required, &value));
  if (!value) return MAPP_OK;
  const char *text = fy_node_is_scalar(value) ? fy_node_get_scalar0(value) : NULL;
  if (!text) return yaml_error_at(m, key, "'%s' must be a single value", key);
  char *copy = strdup(text);
  if (!copy) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(*out);
  *out = copy;
  return MAPP_OK;
}

int yaml_get_long(const yaml_map *m, const char *key, bool required, long min, long *out) {
  struct fy_node *value;
  MAPP_TRY(lookup(m, key, required, &value));
  if (!value) return MAPP_OK;
  const char *text = fy_node_is_scalar(value) ? fy_node_get_scalar0(value) : NULL;
  return parse_long_text(m, key, text, min, out);
}

/* The value of key, which must be a sequence (NULL when absent). */
static int lookup_sequence(const yaml_map *m, const char *key, bool required, const char *what,
                           struct fy_node **seq) {
  MAPP_TRY(lookup(m, key, required, seq));
  if (*seq && !fy_node_is_sequence(*seq))
    return yaml_error_at(m, key, "'%s' must be a list of %s, e.g. %s: [a, b]", key, what, key);
  return MAPP_OK;
}

int yaml_get_strings(const yaml_map *m, const char *key, bool required, strv *out) {
  struct fy_node *seq;
  MAPP_TRY(lookup_sequence(m, key, required, "values", &seq));
  if (!seq) return MAPP_OK;
  strv_free(out);
  void *iter = NULL;
  for (struct fy_node *item; (item = fy_node_sequence_iterate(seq, &iter));) {
    const char *text = fy_node_is_scalar(item) ? fy_node_get_scalar0(item) : NULL;
    if (!text) return yaml_error_at(m, key, "every item of '%s' must be a single value", key);
    MAPP_TRY(strv_push(out, text));
  }
  return MAPP_OK;
}

int yaml_get_longs(const yaml_map *m, const char *key, bool required, long min, long **out,
                   size_t *count) {
  struct fy_node *seq;
  MAPP_TRY(lookup_sequence(m, key, required, "integers", &seq));
  if (!seq) return MAPP_OK;
  int n = fy_node_sequence_item_count(seq);
  long *values = calloc(n > 0 ? (size_t)n : 1, sizeof *values);
  if (!values) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  void *iter = NULL;
  size_t used = 0;
  int status = MAPP_OK;
  for (struct fy_node *item; status == MAPP_OK && (item = fy_node_sequence_iterate(seq, &iter));) {
    const char *text = fy_node_is_scalar(item) ? fy_node_get_scalar0(item) : NULL;
    status = parse_long_text(m, key, text, min, &values[used++]);
  }
  if (status == MAPP_OK && used == 0) status = yaml_error_at(m, key, "'%s' is an empty list", key);
  if (status != MAPP_OK) {
    free(values);
    return status;
  }
  free(*out);
  *out = values;
  *count = used;
  return MAPP_OK;
}

/* The scalar items of a sequence appended to out (none: an input error at key). */
static int push_scalar_items(const yaml_map *m, const char *key, struct fy_node *seq, strv *out) {
  void *iter = NULL;
  size_t pushed = 0;
  for (struct fy_node *item; (item = fy_node_sequence_iterate(seq, &iter)); ++pushed) {
    const char *text = fy_node_is_scalar(item) ? fy_node_get_scalar0(item) : NULL;
    if (!text) return yaml_error_at(m, key, "every item of '%s' must be a single value", key);
    MAPP_TRY(strv_push(out, text));
  }
  return pushed ? MAPP_OK : yaml_error_at(m, key, "'%s' is an empty list", key);
}

/* A mapping of names to scalars, or (lists) to scalars or lists of them,
 * appended to names/values in file order, a name once per value. */
static int get_pairs(const yaml_map *m, const char *key, bool lists, strv *names, strv *values) {
  yaml_map sub;
  MAPP_TRY(yaml_get_map(m, key, &sub));
  if (!sub.node) return MAPP_OK;
  void *iter = NULL;
  for (struct fy_node_pair *p; (p = fy_node_mapping_iterate(sub.node, &iter));) {
    const char *name = fy_node_get_scalar0(fy_node_pair_key(p));
    struct fy_node *value = fy_node_pair_value(p);
    if (lists && name && value && fy_node_is_sequence(value)) {
      size_t before = values->count;
      MAPP_TRY(push_scalar_items(&sub, name, value, values));
      for (size_t i = before; i < values->count; ++i) MAPP_TRY(strv_push(names, name));
      continue;
    }
    const char *text = value && fy_node_is_scalar(value) ? fy_node_get_scalar0(value) : NULL;
    if (!name || !text)
      return yaml_error_at(m, key, lists ? "'%s' must map names to a value or a list of values"
                                         : "'%s' must map names to single values", key);
    MAPP_TRY(strv_push(names, name));
    MAPP_TRY(strv_push(values, text));
  }
  return MAPP_OK;
}

int yaml_get_pairs(const yaml_map *m, const char *key, strv *names, strv *values) {
  return get_pairs(m, key, false, names, values);
}

int yaml_get_pairs_of_lists(const yaml_map *m, const char *key, strv *names, strv *values) {
  return get_pairs(m, key, true, names, values);
}

int yaml_get_string_or_list(const yaml_map *m, const char *key, strv *out) {
  struct fy_node *value;
  MAPP_TRY(lookup(m, key, false, &value));
  if (!value) return MAPP_OK;
  if (fy_node_is_sequence(value)) return push_scalar_items(m, key, value, out);
  const char *text = fy_node_is_scalar(value) ? fy_node_get_scalar0(value) : NULL;
  if (!text) return yaml_error_at(m, key, "'%s' must be a value or a list of values", key);
  return strv_push(out, text);
}

int yaml_map_keys(const yaml_map *m, strv *keys) {
  if (!m->node) return MAPP_OK;
  void *iter = NULL;
  for (struct fy_node_pair *p; (p = fy_node_mapping_iterate(m->node, &iter));) {
    const char *name = fy_node_get_scalar0(fy_node_pair_key(p));
    if (!name) return mapp_fail(MAPP_ERR_INPUT, "%s: a key of a mapping is not a single value", m->origin);
    MAPP_TRY(strv_push(keys, name));
  }
  return MAPP_OK;
}

int yaml_get_map(const yaml_map *m, const char *key, yaml_map *sub) {
  struct fy_node *value;
  MAPP_TRY(lookup(m, key, false, &value));
  *sub = (yaml_map){.origin = m->origin, .node = value};
  if (value && !fy_node_is_mapping(value))
    return yaml_error_at(m, key, "'%s' must be a mapping of keys to values", key);
  return MAPP_OK;
}

int yaml_get_map_list(const yaml_map *m, const char *key, bool required, yaml_map **items,
                      size_t *count) {
  struct fy_node *seq;
  *items = NULL;
  *count = 0;
  MAPP_TRY(lookup_sequence(m, key, required, "mappings", &seq));
  if (!seq) return MAPP_OK;
  int n = fy_node_sequence_item_count(seq);
  if (n <= 0) return yaml_error_at(m, key, "'%s' is an empty list", key);
  *items = calloc((size_t)n, sizeof **items);
  if (!*items) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  void *iter = NULL;
  for (struct fy_node *item; (item = fy_node_sequence_iterate(seq, &iter));) {
    if (!fy_node_is_mapping(item))
      return yaml_error_at(m, key, "every item of '%s' must be a mapping (app: ..., ranks: ...)", key);
    (*items)[(*count)++] = (yaml_map){.origin = m->origin, .node = item};
  }
  return MAPP_OK;
}

int yaml_get_map_or_list(const yaml_map *m, const char *key, yaml_map **items, size_t *count) {
  struct fy_node *value;
  *items = NULL;
  *count = 0;
  MAPP_TRY(lookup(m, key, false, &value));
  if (!value || !fy_node_is_mapping(value)) return yaml_get_map_list(m, key, false, items, count);
  if (!(*items = malloc(sizeof **items))) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  **items = (yaml_map){.origin = m->origin, .node = value};
  *count = 1;
  return MAPP_OK;
}
