/* JSON Schema (draft 2020-12) validation of the subset mapp's own schemas
 * use (docs/schema/NAME.schema.json): type (a name or a list of names),
 * required, properties, additionalProperties (true, false or a schema for
 * every property that properties does not name), enum, items (one schema
 * for every element), minimum; and the annotations $schema, $id, $comment,
 * title, description, examples, default, which check nothing.
 *
 * Debian has no C JSON Schema library; the subset is small, and the schema
 * stays a file outsiders read and validate against with any tool. A schema
 * using a keyword outside the subset is refused when it is checked (it
 * would otherwise check nothing, silently).
 *
 * One deviation, stricter than the standard: "integer" is a JSON number
 * written without a fraction or exponent (1, not 1.0), since that is what
 * the harness reads as an integer. */
#ifndef HARNESS_JSONSCHEMA_H
#define HARNESS_JSONSCHEMA_H

#include <jansson.h>

/* Every keyword of schema (and its subschemas) is one of the subset's, each
 * of the right JSON type; an input error naming the keyword and `origin`
 * otherwise. */
int jsonschema_check_schema(const json_t *schema, const char *origin);

/* Validates instance. Returns MAPP_OK when the check was made; *violation
 * is then NULL when the instance is valid, else the first violation as one
 * line (malloc'd) naming the instance (`what`, e.g. "record") and the field
 * by its path:
 *   record lacks required field 'fom.value'
 *   record field 'ranks' must be an integer, got a string ("1")
 *   record field 'verification.status' is "maybe", not one of "pass", "fail", "none"
 *   record field 'ranks' is 0, below its minimum 1
 * A schema the subset cannot read is an input error. */
int jsonschema_validate(const json_t *schema, const json_t *instance, const char *what, char **violation);

#endif
