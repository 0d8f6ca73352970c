/*
 * The schema module's internal header: helpers shared by its files (type names, schema records,
 * widening). The text parsers that turn a value's text into a typed value are the input
 * module's (src/lib/input/value.h), beside the formats and the converter that use them.
 */
#ifndef S3L_SCHEMA_INT_H
#define S3L_SCHEMA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/schema.h"
#include "util/util.h"

/* The type of a column that has only seen nulls so far (never part of a written schema). */
#define S3L__TYPE_NONE 0

/* Deep copy of a field. S3L_ENOMEM (dst is then empty). */
int s3l__field_copy(struct s3l_field *dst, const struct s3l_field *src);

/* The Arrow name of t in buf (cap bytes), "..." at the end when cut short. Returns buf. */
char *s3l__type_name(const struct s3l_type *t, char *buf, size_t cap);

#endif
