/* Reading the harness's YAML files (sweep specs, environments) with
 * libfyaml. Every error is one line naming the file and, where the node is
 * known, its line: "quick.yaml:9: 'ranks' must be a list of integers". */
#ifndef HARNESS_YAMLUTIL_H
#define HARNESS_YAMLUTIL_H

#include <libfyaml.h>
#include <stdbool.h>

#include "strv.h"

typedef struct {
  char *origin; /* the file name (or a label for text) used in messages */
  struct fy_document *doc;
  struct fy_diag *diag;
  char first_error[512]; /* libfyaml's first diagnostic, "FILE:LINE:COL: error: MESSAGE" */
} yaml_doc;

/* A mapping node and where it came from. */
typedef struct {
  const char *origin;
  struct fy_node *node; /* NULL: the mapping is absent (every lookup finds nothing) */
} yaml_map;

int yaml_load_file(const char *path, yaml_doc *y);
int yaml_load_string(const char *text, const char *origin, yaml_doc *y);
void yaml_close(yaml_doc *y);
/* The document's top level, which must be a mapping. */
int yaml_root(const yaml_doc *y, yaml_map *root);

/* A key not in `allowed` (NULL-terminated) is an input error: it catches
 * typos such as "rank:" for "ranks:" that would otherwise be ignored. */
int yaml_check_keys(const yaml_map *m, const char *const allowed[]);
/* The same, the complaint naming its owner ("table 'm'") and the known keys. */
int yaml_check_keys_of(const yaml_map *m, const char *const allowed[], const char *owner);
bool yaml_has(const yaml_map *m, const char *key);
/* Absent optional keys leave *out untouched. */
int yaml_get_string(const yaml_map *m, const char *key, bool required, char **out);
int yaml_get_long(const yaml_map *m, const char *key, bool required, long min, long *out);
int yaml_get_strings(const yaml_map *m, const char *key, bool required, strv *out);
int yaml_get_longs(const yaml_map *m, const char *key, bool required, long min, long **out,
                   size_t *count);
/* A mapping of scalars to scalars, appended to names/values in file order. */
int yaml_get_pairs(const yaml_map *m, const char *key, strv *names, strv *values);
/* As yaml_get_pairs, and a value may be a list: the name is appended once
 * per item, so {label: [a, b]} gives (label, a), (label, b). */
int yaml_get_pairs_of_lists(const yaml_map *m, const char *key, strv *names, strv *values);
/* One value or a list of them (`value: x` or `value: [x, y]`), appended to out. */
int yaml_get_string_or_list(const yaml_map *m, const char *key, strv *out);
/* The keys of mapping m, in file order. */
int yaml_map_keys(const yaml_map *m, strv *keys);
/* A nested mapping (sub->node NULL when absent). */
int yaml_get_map(const yaml_map *m, const char *key, yaml_map *sub);
/* Each item of a sequence of mappings, as yaml_maps (malloc'd array). */
int yaml_get_map_list(const yaml_map *m, const char *key, bool required, yaml_map **items,
                      size_t *count);
/* As yaml_get_map_list, and a single mapping reads as a list of one, so a
 * key can grow from one item to several without breaking older files. */
int yaml_get_map_or_list(const yaml_map *m, const char *key, yaml_map **items, size_t *count);
/* Input error "ORIGIN:LINE: message" at the line of key's entry. */
int yaml_error_at(const yaml_map *m, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
