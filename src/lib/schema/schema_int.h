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

/* ---- the representation (opaque in include/s3l/schema.h) ----------------------------------- */

/* A type. Owned by its field; s3l__type_cleanup frees what it owns. */
struct s3l_type {
    enum s3l_type_id id;
    enum s3l_time_unit unit; /* TIME32, TIME64, TIMESTAMP */
    char *tz;                /* TIMESTAMP: NULL without a time zone, else "UTC", ... */
    int32_t byte_width;      /* FIXED_SIZE_BINARY: bytes per value (>= 1); UUID: 16 */
    int32_t precision;       /* DECIMAL128 */
    int32_t scale;           /* DECIMAL128 */
    size_t n_children;       /* LIST 1, MAP 2 (key, value), STRUCT n */
    struct s3l_field *children;
};

/* A named column. key: the column is part of the stream's key and refuses nulls. */
struct s3l_field {
    char *name;
    struct s3l_type type;
    bool nullable;
    bool key;
};

/*
 * Parses an Arrow type name (text, len bytes) into *out. On failure returns S3L_EINVALID_CONFIG
 * naming the offending part and what was expected; S3L_ENOMEM. *out is untouched on failure.
 */
int s3l__type_parse(const char *text, size_t len, struct s3l_type *out, struct s3l_error *err);

/*
 * Writes the Arrow name of t into out (cap bytes, NUL-terminated). Returns the length that the
 * full name needs (excluding the NUL), like snprintf; a result >= cap means it was truncated.
 */
size_t s3l__type_format(const struct s3l_type *t, char *out, size_t cap);

/* Deep copy of src into *dst. S3L_ENOMEM. */
int s3l__type_copy(struct s3l_type *dst, const struct s3l_type *src);
/* Structural equality, field names and nullability included. */
bool s3l__type_equal(const struct s3l_type *a, const struct s3l_type *b);
/* Frees what t owns (not t itself). */
void s3l__type_cleanup(struct s3l_type *t);
/*
 * Grows t (a recorded type) by in when in only adds nullable struct fields, at any depth (nested
 * fields in lacks are made nullable), as s3l_schema_merge grows a recorded column: 0 (*changed
 * set when t changed), 1 when the types differ otherwise (t may be half grown: the caller works
 * on a copy), S3L_ENOMEM.
 */
int s3l__type_grow(struct s3l_type *t, const struct s3l_type *in, bool *changed);
/* Frees what f owns (not f itself). */
void s3l__field_cleanup(struct s3l_field *f);

/* Appends a deep copy of f. S3L_EINVALID_ARGUMENT when the name is already there; S3L_ENOMEM. */
int s3l__schema_add_field(struct s3l_schema *s, const struct s3l_field *f, struct s3l_error *err);

/*
 * The common type of a and b, for inference over a sample (docs/internals/schema.md has the
 * table): equal types stay; a type id 0 ("no value seen yet") yields the other; integers widen to
 * int64, integers and floats to double; date32 and timestamp without zone to the timestamp; two
 * timestamps with (or without) zone to the finer unit; struct and struct to the union of their
 * fields (a's order, then b's new fields; all nullable); list and list to a list of the widened
 * items; a nested type or json with anything else to json; other mixes to string.
 * *out is owned by the caller (s3l__type_cleanup). S3L_ENOMEM.
 */
int s3l__type_widen(const struct s3l_type *a, const struct s3l_type *b, struct s3l_type *out);

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
 * the same type (s3l__type_equal); anything into json; any text into string (text: the values
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
 * s3l__schema_add_field.
 */
int s3l__schema_fit_sample(struct s3l_schema *rec, const struct s3l_schema *inferred, bool text,
                           struct s3l_error *err);

#endif
