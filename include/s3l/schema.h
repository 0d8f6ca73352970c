/*
 * Schemas: a tree of columns with Arrow types, as the destination records them and as the
 * Parquet writer encodes them. Type names are written and parsed the way Arrow prints them
 * (arrow::DataType::ToString): int64, string, binary, fixed_size_binary[16], timestamp[us, tz=UTC],
 * date32[day], time64[ns], decimal128(18, 3), list<item: int64>, struct<a: int64, b: string>,
 * map<string, int64>; the usual short forms (utf8, float, double, bool, ...) are accepted too.
 * Extension-like names used by this project: uuid, json, interval[month_day_nano] (Arrow's
 * month_day_nano_interval).
 */
#ifndef S3L_SCHEMA_H
#define S3L_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/error.h"

enum s3l_type_id {
    S3L_TYPE_BOOL = 1,
    S3L_TYPE_INT8,
    S3L_TYPE_INT16,
    S3L_TYPE_INT32,
    S3L_TYPE_INT64,
    S3L_TYPE_UINT8,
    S3L_TYPE_UINT16,
    S3L_TYPE_UINT32,
    S3L_TYPE_UINT64,
    S3L_TYPE_FLOAT16,
    S3L_TYPE_FLOAT32,
    S3L_TYPE_FLOAT64,
    S3L_TYPE_UTF8,
    S3L_TYPE_BINARY,
    S3L_TYPE_FIXED_SIZE_BINARY,
    S3L_TYPE_UUID,  /* 16 bytes; Parquet FIXED_LEN_BYTE_ARRAY(16) + UUID logical type */
    S3L_TYPE_JSON,  /* UTF-8 text; Parquet BYTE_ARRAY + JSON logical type */
    S3L_TYPE_DATE32, /* days since 1970-01-01 */
    S3L_TYPE_TIME32, /* unit s or ms since midnight */
    S3L_TYPE_TIME64, /* unit us or ns since midnight */
    S3L_TYPE_TIMESTAMP, /* unit since 1970-01-01T00:00:00 (UTC when tz is set) */
    S3L_TYPE_DECIMAL128, /* precision 1..38, scale 0..precision */
    S3L_TYPE_INTERVAL, /* month_day_nano: months int32, days int32, nanoseconds int64 */
    S3L_TYPE_LIST,     /* one child, named "item" by default */
    S3L_TYPE_STRUCT,   /* n children */
    S3L_TYPE_MAP,      /* two children: key (never nullable), value */
};

enum s3l_time_unit {
    S3L_UNIT_SECOND = 0,
    S3L_UNIT_MILLI,
    S3L_UNIT_MICRO,
    S3L_UNIT_NANO,
};

/* A column (its name, Arrow type, nullability, key flag) and the top-level columns of a table:
 * opaque, built with s3l_schema_new and s3l_schema_add_column or s3l_schema_from_json, read with
 * s3l_schema_n_fields, s3l_schema_field and the s3l_field_* accessors, so that their
 * representation can change without breaking an embedder. */
struct s3l_field;
struct s3l_schema;

/* A new empty schema, or NULL on out-of-memory. */
struct s3l_schema *s3l_schema_new(void);
/* Frees a schema and everything it owns. NULL is a no-op. */
void s3l_schema_free(struct s3l_schema *s);
/* A deep copy, or NULL on out-of-memory. */
struct s3l_schema *s3l_schema_copy(const struct s3l_schema *s);
/*
 * Appends a column, as one column of s3l_schema_from_json: name (NUL-terminated, non-empty),
 * type an Arrow type name (the forms above), nullable, key (part of the stream's key; a key
 * column cannot be nullable). Errors: S3L_EINVALID_CONFIG for an empty or NULL name or type, a
 * type that does not parse (naming the column, the part and what was expected) or a nullable
 * key; S3L_EINVALID_ARGUMENT when the name is already there; S3L_ENOMEM. s is unchanged on
 * failure.
 */
int s3l_schema_add_column(struct s3l_schema *s, const char *name, const char *type, bool nullable,
                          bool key, struct s3l_error *err);
/* Index of the top-level column named name, or -1. */
int s3l_schema_find(const struct s3l_schema *s, const char *name, size_t name_len);
/* The number of top-level columns of s. */
size_t s3l_schema_n_fields(const struct s3l_schema *s);
/* Column i of s (i < s3l_schema_n_fields(s)), borrowed: valid while s is unchanged. */
const struct s3l_field *s3l_schema_field(const struct s3l_schema *s, size_t i);

/* A column's parts (f from s3l_schema_field; strings borrowed, valid as f is). */
const char *s3l_field_name(const struct s3l_field *f);
bool s3l_field_nullable(const struct s3l_field *f);
bool s3l_field_key(const struct s3l_field *f);
enum s3l_type_id s3l_field_type_id(const struct s3l_field *f);
/* The Arrow name of f's type into out (cap bytes, NUL-terminated; out may be NULL when cap is
 * 0). Returns the length the full name needs (excluding the NUL), like snprintf. */
size_t s3l_field_type_name(const struct s3l_field *f, char *out, size_t cap);

/*
 * Parses a declared schema: a JSON list of columns
 * [{"name": "ts", "type": "timestamp[us, tz=UTC]", "nullable": true, "key": false}, ...]
 * ("nullable" defaults to true, "key" to false; a key column is never nullable).
 * Also accepts the schema record written by s3l_schema_to_json (an object with "columns").
 * Errors: S3L_EINVALID_CONFIG naming the column index and what was wrong; S3L_ENOMEM.
 */
int s3l_schema_from_json(const char *json, size_t len, struct s3l_schema **out,
                         struct s3l_error *err);

/*
 * Serialises s as a JSON list of columns in the form s3l_schema_from_json reads, one column per
 * line. *out is NUL-terminated and owned by the caller (s3l_free). S3L_ENOMEM.
 */
int s3l_schema_to_json(const struct s3l_schema *s, char **out, size_t *out_len);

/* Options of s3l_schema_merge. table and record_path only go into messages. */
struct s3l_schema_merge_options {
    const char *table;       /* "NAMESPACE/TABLE" or "TABLE" */
    const char *record_path; /* "URL/_openetl/schemas/T.json" */
    bool allow_type_changes; /* --type-changes allow: the incoming type replaces the recorded one */
};

/*
 * Merges the schema of a stream (incoming) into the table's record (recorded; NULL when the table
 * has no record yet), per docs/design.md section 3:
 *  - columns of recorded keep their order; columns only in incoming are appended in its order;
 *  - a column missing from incoming is kept, made nullable (files written now lack it);
 *  - a column whose type differs (s3l__type_equal, nested names and nullability included) fails
 *    with S3L_ESCHEMA_DRIFT: "table T: column "c" changed type from int64 to string; remove
 *    RECORD_PATH to accept it (or allow type changes)", unless allow_type_changes, when the
 *    incoming type is taken;
 *  - a column nullable in incoming becomes nullable.
 * On success *out is a new schema (s3l_schema_free) and *changed (may be NULL) says whether it
 * differs from recorded, i.e. the record must be rewritten. Errors: S3L_ESCHEMA_DRIFT, S3L_ENOMEM.
 */
int s3l_schema_merge(const struct s3l_schema *recorded, const struct s3l_schema *incoming,
                     const struct s3l_schema_merge_options *opt, struct s3l_schema **out,
                     bool *changed, struct s3l_error *err);

#endif
