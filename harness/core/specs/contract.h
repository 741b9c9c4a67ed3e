/* The mapp program contract (docs/contract.md) as the harness enforces it
 * on every program it runs, a built mini-app or one from the app path:
 * --list's JSON and the result record against their JSON Schemas
 * (docs/schema/list.schema.json, record.schema.json), and the record
 * answering the run that was asked for. A program that breaks it is
 * refused with one line naming what it broke, never half-read. */
#ifndef HARNESS_CONTRACT_H
#define HARNESS_CONTRACT_H

#include <jansson.h>

/* docs/schema/NAME.schema.json of the source tree, else the copy embedded
 * at build time (as envs/local.yaml), checked to use only what
 * jsonschema.h implements. *schema is a new reference. */
int contract_schema_load(const char *name, json_t **schema);

/* --list's JSON of program ("mapp-heat") against list.schema.json, and
 * what a schema cannot say: at least one variant, and a `baselines` that
 * is a plain name. MAPP_OK when checked; *violation NULL when it keeps the
 * contract, else one line naming the field (malloc'd). */
int contract_check_list(const char *program, const json_t *list, char **violation);

/* A record against record.schema.json, and naming the run it answers: its
 * app, variant and backend are the ones the harness asked for (each NULL:
 * not compared), else results would be filed under another configuration.
 * Same *violation convention. */
int contract_check_record(const json_t *record, const char *app, const char *variant, const char *backend,
                          char **violation);

#endif
