/*
 * The debezium format's internal header (src/lib/input/debezium): Debezium's JSON change events,
 * one per line, read through the NDJSON format's line framing (s3l__ndjson_format, the one format
 * another is built on) and rewritten, event by event, into the tape of one flat row: the table's
 * columns (from `after`, or for a delete from `before`) plus _openetl_op, _openetl_seq and
 * _openetl_id. With the schema/payload wrapper (Kafka Connect's JsonConverter with
 * schemas.enable=true) the Connect schema of each event types its columns: reader.c reads the
 * envelope, types.c maps Connect's types and logical types to ours and rewrites their values
 * into the text the converter takes, ident.c computes the sequence and the event id.
 * docs/internals/input.md ("debezium") describes the whole; docs/cli.md lists the types.
 */
#ifndef S3L_DEBEZIUM_INT_H
#define S3L_DEBEZIUM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "input/input.h"

/* The index of the value of member key in the object v[obj], or 0 (also when v[obj] is not an
 * object). The last duplicate is not preferred: the first one found wins. */
size_t s3l__dbz_member(const struct s3l_value *v, size_t obj, const char *key);

/* How a column's value is rewritten for the converter (types.c). */
enum s3l__dbz_conv {
    S3L__DBZ_COPY = 0,  /* the value as written (also: no wrapper, or no hint) */
    S3L__DBZ_DECIMAL,   /* base64 big-endian two's complement unscaled value -> "123.45" */
    S3L__DBZ_DATE,      /* int32 days since the epoch -> "YYYY-MM-DD" */
    S3L__DBZ_TIME_MS,   /* int32 milliseconds since midnight -> "HH:MM:SS.fff" */
    S3L__DBZ_TIME_US,   /* int64 microseconds since midnight */
    S3L__DBZ_TIME_NS,   /* int64 nanoseconds since midnight */
    S3L__DBZ_TS_MS,     /* int64 milliseconds since the epoch -> "YYYY-MM-DDTHH:MM:SS.fff" */
    S3L__DBZ_TS_US,     /* int64 microseconds since the epoch */
    S3L__DBZ_TS_NS,     /* int64 nanoseconds since the epoch */
    S3L__DBZ_BYTES,     /* base64 -> the bytes */
    S3L__DBZ_JSON,      /* a string holding JSON text -> that text, for a json column */
};

/* One column of an event's Connect schema (the `after` struct's fields). */
struct s3l__dbz_col {
    const char *name; /* into the event's tape; not NUL-terminated */
    size_t name_len;
    enum s3l__dbz_conv conv;
    int scale;        /* S3L__DBZ_DECIMAL */
    int precision;    /* S3L__DBZ_DECIMAL: connect.decimal.precision, or 38 */
    const char *type; /* our type's name ("decimal128(10, 2)"), NULL: no hint (nested types) */
    char type_buf[40];
};

/* The format's state, allocated by open (r->dbz). */
struct s3l__dbz {
    struct s3l_value *tape; /* the row built from the event */
    size_t n, cap;
    struct s3l_arena arena;   /* the row's new strings, reset per event */
    struct s3l_buf name;      /* the UUID v5 name of the event (ident.c) */
    struct s3l_schema *hint;  /* the types the events declared so far (NULL: none yet) */
    uint64_t tombstones;      /* null values skipped */
    struct s3l__dbz_col *cols; /* the current event's Connect columns */
    size_t n_cols, cap_cols;
};

/*
 * Reads the Connect schema of an event (values[i] is the wrapper's "schema" object) into d->cols:
 * the fields of the envelope's `after` struct (or `before`'s when after is absent), each with its
 * rewrite and our type. Unknown logical names keep their Connect base type. 0, or
 * S3L_EINVALID_INPUT with *what set to what was expected (the caller names the line), S3L_ENOMEM.
 */
int s3l__dbz_read_schema(struct s3l__dbz *d, const struct s3l_value *values, size_t i,
                         const char **what);

/*
 * Adds the columns of d->cols that d->hint lacks (and the three _openetl_ columns, once) to
 * d->hint, typed as declared; a column already there keeps its first type. 0 or S3L_ENOMEM.
 */
int s3l__dbz_hint_add(struct s3l__dbz *d, bool with_cols);

/*
 * Rewrites the scalar values[i] by col's rule into *out (a STRING entry whose bytes are in
 * d->arena). 0; S3L_EINVALID_INPUT with *what set when the value is not what the Connect type
 * says (a Decimal that is not base64, a Date that is not an integer, a value out of range);
 * S3L_ENOMEM. A null is copied (never rewritten).
 */
int s3l__dbz_rewrite(struct s3l__dbz *d, const struct s3l__dbz_col *col,
                     const struct s3l_value *values, size_t i, struct s3l_value *out,
                     const char **what);

/*
 * The event's _openetl_seq: source.lsn when it is an integer that fits int64 (PostgreSQL's LSN,
 * Debezium's "lsn" field), else fallback (the event's byte offset in the input). values[src]
 * is the `source` object, or src is 0 when the event has none.
 */
int64_t s3l__dbz_seq(const struct s3l_value *values, size_t src, int64_t fallback);

/*
 * The event's _openetl_id as 36 characters of 8-4-4-4-12 text into out (37 bytes, NUL
 * included): a UUID v5 (RFC 4122 section 4.3) in the namespace S3L__DBZ_NAMESPACE over the
 * table (source.db, schema, table), the source position fields the event names (lsn, txId,
 * and the other connectors' offset fields: see ident.c), the op, and the row image (`before`
 * and `after`, by value, so that two rows of one snapshot, which share a position, differ).
 * Whitespace and member spelling (escapes) do not change it. 0 or S3L_ENOMEM.
 */
int s3l__dbz_id(struct s3l__dbz *d, const struct s3l_value *values, size_t env, size_t src,
                char op, char out[37]);

#define S3L__DBZ_NAMESPACE "5f0f6bd2-7c4e-5b52-9a3e-2f4bb7d0c1a9"

#endif
