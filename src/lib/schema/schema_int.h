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

/* A schema's representation (opaque in include/s3l/schema.h): the modules that build and read
 * schemas (parquet, input, commit, config, pipeline) see it through this header. */
struct s3l_schema {
    size_t n_fields;
    struct s3l_field *fields;
};

/* The type of a column that has only seen nulls so far (never part of a written schema). */
#define S3L__TYPE_NONE 0

/* Deep copy of a field. S3L_ENOMEM (dst is then empty). */
int s3l__field_copy(struct s3l_field *dst, const struct s3l_field *src);

/* The Arrow name of t in buf (cap bytes), "..." at the end when cut short. Returns buf. */
char *s3l__type_name(const struct s3l_type *t, char *buf, size_t cap);

/* ---- compatibility with the schema record (compat.c) ----------------------------------------- */

/*
 * Whether values inferred as type `in` go into a column recorded as `rec` without loss, so that
 * the recorded type is kept and no type change is reported: no value seen yet (S3L__TYPE_NONE);
 * the same type (s3l_type_equal); anything into json; any text into string (text: the values
 * were CSV fields, all text; from JSON every primitive but bool, since a JSON string keeps its
 * characters and a number its text, whatever type their shape inferred); integers into integer
 * (range-checked per value by the converter), float or decimal128 columns; floats into double;
 * a date32 or a timestamp into a timestamp; structs whose common children fit (children only one
 * side has are growth, not a change); lists and maps whose items fit. Pure; never fails.
 */
bool s3l__type_fits(const struct s3l_type *in, const struct s3l_type *rec, bool text);

/*
 * Fits an inference sample's schema (inferred, borrowed) to the table's schema record (rec,
 * changed in place): rec keeps its columns in its order, with their recorded types where the
 * inferred type fits (s3l__type_fits, with text as there: a column the sample saw only as null
 * keeps its type this way); a column whose inferred type does not fit takes the inferred type
 * (and becomes nullable if either is), which s3l_schema_merge later reports as SCHEMA_DRIFT naming table, column and
 * both types (or records, with allow_type_changes); inferred columns rec lacks are appended in
 * inferred's order. Errors: S3L_ENOMEM (rec is then partly fitted: free it); those of
 * s3l_schema_add_field.
 */
int s3l__schema_fit_sample(struct s3l_schema *rec, const struct s3l_schema *inferred, bool text,
                           struct s3l_error *err);

#endif
