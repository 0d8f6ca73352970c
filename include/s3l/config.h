/*
 * Config documents: the Destination, Pipeline and Sink documents of docs/config.md, read from
 * YAML (one or several documents per file, separated by `---`) or JSON, checked against the
 * JSON Schemas that ship with the product (schemas/KIND.schema.json, JSON Schema 2020-12), their
 * secrets resolved through a callback the caller gives, and handed out as typed structs.
 *
 * A `struct s3l_config` is opaque: it owns every document added to it and every string the typed
 * views below point to. The views stay valid until s3l_config_free. Secret values are copies the
 * config wipes when it is freed; no message this module writes ever holds one.
 *
 * Paths in messages use dots for fields and [i] for list items, counted from 0:
 * `spec.sources[0].format`. A JSON Schema validator names the same place with a JSON Pointer
 * (`/spec/sources/0/format`); a missing field is named by the config as `parent.field` and by
 * the validator as the parent with the field's name beside it (docs/config.md, "Errors").
 */
#ifndef S3L_CONFIG_H
#define S3L_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/error.h"

/* The three document kinds (the `kind` field). */
enum s3l_config_kind {
    S3L_CONFIG_DESTINATION = 1,
    S3L_CONFIG_PIPELINE = 2,
    S3L_CONFIG_SINK = 3,
};

/* The set of documents of one or more files (opaque). */
struct s3l_config;

/* The `apiVersion` every document carries. */
#define S3L_CONFIG_API_VERSION "openetl.io/v1alpha1"

/*
 * A string setting that may come from a secret. value: the text (NULL when the setting is absent,
 * or when it names a secret that was not resolved because no lookup was given); secret: the
 * secret's name when the value came from `{ secret: NAME }`, else NULL. A caller that prints
 * settings prints the name, never a value whose secret is set.
 */
struct s3l_config_str {
    const char *value;
    const char *secret;
};

/* spec.config.aws of a Destination. Absent strings have value NULL; duration_seconds 0 when not
 * set (900..43200 otherwise, STS AssumeRole's DurationSeconds range). */
struct s3l_config_aws {
    struct s3l_config_str role, external_id, session_name, sts_endpoint;
    int64_t duration_seconds;
};

/* A Destination document's spec (the Parquet table destination). Sizes in bytes, 0 when not set;
 * path_style 1 (true), -1 (false) or 0 (not set: path-style exactly when an endpoint is given);
 * compression_level 0 when not set. */
struct s3l_config_destination {
    const char *connector; /* "s3" */
    struct s3l_config_str url, region, endpoint, access_key_id, secret_access_key, session_token;
    int path_style;
    struct s3l_config_aws aws;
    uint64_t file_size, row_group_size;
    struct s3l_config_str compression, sse, sse_kms_key_id, storage_class, checksum;
    int compression_level;
};

/* One entry of spec.sources. files and exclude are as written, except that relative paths are
 * joined to the document's directory. schema_file (a path, joined the same way) or schema_json
 * (the inline column list as JSON text, the form s3l_schema_from_json reads) or neither. Integer
 * and size settings are 0 when not set, bool-like ones -1 (not set), 0 or 1; csv_delimiter 0 when
 * not set. Enumerated settings are NULL when not set. */
struct s3l_config_source {
    const char *name;
    const char *const *files;
    size_t n_files;
    const char *const *exclude;
    size_t n_exclude;
    const char *format;         /* ndjson, json, csv, debezium (NULL: ndjson) */
    const char *schema_file;
    const char *schema_json;
    int follow;
    const char *missing;        /* fail, skip */
    uint64_t infer_rows;
    uint64_t max_record_size;   /* bytes */
    char csv_delimiter;
    int nested_as_json;
    const char *bad_records;    /* fail, skip, dead-letter */
    const char *timestamp_unit; /* us, ns */
};

/* One entry of spec.streams: a source into a table. disposition is "append" (the only one). */
struct s3l_config_stream {
    const char *source, *table, *namespace_, *disposition;
};

/* A Pipeline document's spec. commit_interval_ns: -1 when not set (the runner's default, 1m). */
struct s3l_config_pipeline {
    const struct s3l_config_source *sources;
    size_t n_sources;
    const struct s3l_config_stream *streams;
    size_t n_streams;
    const char *destination;           /* spec.destination.name: a Destination's metadata.name */
    const char *destination_namespace; /* NULL when not set */
    const char *type_changes;          /* refuse, allow; NULL when not set */
    const char *delivery_require;      /* exactly_once, at_least_once, at_most_once; NULL */
    int64_t commit_interval_ns;
    int runner_inherit;                /* -1 not set, 0, 1 */
};

/* A Sink document's spec, in the raw-object connector's option names (issue 13). Sizes in bytes
 * and the interval in ns, 0 when not set. */
struct s3l_config_sink {
    const char *connector; /* "s3" */
    struct s3l_config_str bucket, key_prefix, region, endpoint_override, access_key_id,
        secret_access_key, session_token, commit_group, delivery_guarantee, compression,
        content_type;
    uint64_t rollover_bytes, part_size;
    int64_t rollover_interval_ns;
};

/* One document: where it came from, its kind and name, and the spec of its kind (the other two
 * pointers NULL). file is the name given to s3l_config_add_*; index counts from 1 in its file. */
struct s3l_config_doc {
    const char *file;
    size_t index;
    enum s3l_config_kind kind;
    const char *name;
    const struct s3l_config_destination *destination;
    const struct s3l_config_pipeline *pipeline;
    const struct s3l_config_sink *sink;
};

/* Which check a document failed: reading the file, its YAML or JSON syntax, the JSON Schema of
 * its kind (what any JSON Schema 2020-12 validator finds too), the checks beyond the schema
 * (references between fields, inline column types), or its secrets (missing, unreadable, or a
 * value the field's rule refuses). */
enum s3l_config_check {
    S3L_CONFIG_CHECK_READ = 1,
    S3L_CONFIG_CHECK_SYNTAX,
    S3L_CONFIG_CHECK_SCHEMA,
    S3L_CONFIG_CHECK_REFERENCES,
    S3L_CONFIG_CHECK_SECRETS,
};

/* One invalid document: file and index (from 1; 0 when the file itself could not be read or is
 * not UTF-8),
 * path (dotted; "" for the document as a whole) and message, the full line
 * "FILE (document N): PATH: TEXT". code is S3L_EINVALID_CONFIG, or the callback's or the read's
 * code (NOT_FOUND, IO, NOMEM ...); check says which check failed. */
struct s3l_config_problem {
    const char *file;
    size_t index;
    const char *path;
    const char *message;
    int code;
    enum s3l_config_check check;
};

/* The name of a check, for messages and JSON: "read", "syntax", "schema", "references",
 * "secrets"; "unknown" for anything else. Never NULL. */
const char *s3l_config_check_name(enum s3l_config_check check);

/*
 * Looks up a secret for the config. name is the NAME of `{ secret: NAME }` (letters, digits and
 * _). On success sets *value to a NUL-terminated copy the config takes over (allocated with
 * s3l_malloc; the config wipes and frees it) and returns 0. A secret that does not exist returns
 * S3L_ENOT_FOUND; any other failure its code. err may say where it looked (never a value).
 */
struct s3l_config_secrets {
    int (*lookup)(void *ctx, const char *name, char **value, struct s3l_error *err);
    void *ctx;
};

#define S3L_CONFIG_OPTIONS_VERSION 1

/* Options of s3l_config_add_text and s3l_config_add_file. version: S3L_CONFIG_OPTIONS_VERSION.
 * secrets: the lookup, or NULL to leave secrets unresolved (validation only: the views then give
 * the secret's name with a NULL value). */
struct s3l_config_options {
    int version;
    const struct s3l_config_secrets *secrets;
};

/* A new, empty config in *out (free with s3l_config_free). S3L_ENOMEM. */
int s3l_config_new(struct s3l_config **out);
/* Frees the config, its documents and views, wiping the secret values first. NULL is a no-op. */
void s3l_config_free(struct s3l_config *c);

/*
 * Parses text (len bytes, not necessarily NUL-terminated) as the documents of a file named file:
 * JSON (one document) when file ends in ".json", else YAML (YAML 1.2 core schema; several
 * documents separated by `---`). Relative paths in a Pipeline are taken relative to file's
 * directory. Each document is checked against the schema of its kind (a document whose kind is
 * none of the three is checked against the Destination schema, so its `kind` is what is named),
 * then its cross references (stream sources, duplicate names, inline column types), then its
 * secrets are resolved and the resolved values checked by the same rules (their values are not
 * shown). Valid documents are added; each invalid one is recorded as a problem
 * (s3l_config_problem). Returns 0 when every document was valid, S3L_EINVALID_CONFIG when one
 * was not (err: the first problem's message), S3L_ENOMEM, or S3L_EINVALID_ARGUMENT for a bad
 * options version. Rules: JSON Schema 2020-12 (validation order as Ajv 8 reports its first
 * error: type, const/enum, if/then/else, string, number, list, then required, unknown and listed
 * properties), YAML 1.2.2 section 10.3 (core schema) for plain scalars.
 */
int s3l_config_add_text(struct s3l_config *c, const char *text, size_t len, const char *file,
                        const struct s3l_config_options *opts, struct s3l_error *err);

/*
 * Parses text (len bytes, UTF-8, not necessarily NUL-terminated) as the SQL binding of the
 * raw-object connector's sinks (issue 13): one or more statements, separated by `;` (a trailing
 * one is optional),
 *     CREATE TABLE [IF NOT EXISTS] name (column STRING) WITH (key = value, ...)
 * Identifiers unquoted (compared case-insensitively), "quoted" or `quoted` (a doubled quote is
 * one); values 'strings' ('' is one ') or decimal integers; comments -- to the end of the line
 * and / * ... * /; keywords in any case. Keys: connector (required, 's3'), bucket (required),
 * key_prefix, region, endpoint_override, rollover_bytes, rollover_interval, part_size,
 * commit_group, delivery_guarantee, compression, content_type: the Sink document's spec.config
 * names (docs/config.md), sizes and durations as there ('16MiB' or 16777216, '30s'). Each
 * statement becomes a Sink document of c (kind S3L_CONFIG_SINK, name: the table's name as
 * written without its quotes, file: file, index: the statement's number from 1), checked by the
 * Sink schema like a YAML one. Invalid SQL is a problem (s3l_config_problem, check SYNTAX for
 * text that is not a statement, SCHEMA for a value) whose message names the place and the word:
 * "FILE:LINE:COLUMN: at WORD: WHAT" (line and column from 1, columns in characters); parsing
 * stops at the first one: an unknown option or a credential (access keys are never options: a
 * statement is printed and hashed), an option given twice, a column list other than exactly one
 * STRING column, a part_size under 5 MiB (5242880 bytes), no bucket, a connector other than 's3',
 * a value the Sink schema refuses, an unclosed string, name or comment, no statement at all.
 * Returns 0 when every statement was added, S3L_EINVALID_CONFIG (err: the problem's message),
 * S3L_EINVALID_ARGUMENT for a NULL c or text, or a bad options version; S3L_ENOMEM. file names
 * the text in messages (NULL: "(sql)").
 */
int s3l_config_add_sql(struct s3l_config *c, const char *text, size_t len, const char *file,
                       const struct s3l_config_options *opts, struct s3l_error *err);

/* As s3l_config_add_text over the contents of the file at path (at most 16 MiB). A file that
 * cannot be read is a problem with index 0 and the read's code (NOT_FOUND, PERMISSION_DENIED,
 * IO, TOO_LARGE), which is also returned. */
int s3l_config_add_file(struct s3l_config *c, const char *path,
                        const struct s3l_config_options *opts, struct s3l_error *err);

/* The valid documents added so far, in order (i < s3l_config_count). */
size_t s3l_config_count(const struct s3l_config *c);
const struct s3l_config_doc *s3l_config_doc(const struct s3l_config *c, size_t i);
/* The first document of kind named name, or NULL. */
const struct s3l_config_doc *s3l_config_find(const struct s3l_config *c, enum s3l_config_kind kind,
                                             const char *name);

/* The problems recorded so far, in order (i < s3l_config_problem_count). */
size_t s3l_config_problem_count(const struct s3l_config *c);
const struct s3l_config_problem *s3l_config_problem(const struct s3l_config *c, size_t i);

/* The JSON Schema of a kind, as shipped in schemas/<kind>.schema.json, byte for byte
 * (NUL-terminated; *len without the NUL). NULL for an unknown kind. */
const char *s3l_config_schema(enum s3l_config_kind kind, size_t *len);
/* The kind named "destination", "pipeline" or "sink" (lower case, as `config-schema` takes it),
 * or 0. */
enum s3l_config_kind s3l_config_kind_from_name(const char *name);

/*
 * Sizes and durations as the command line writes them, shared by the CLI's options and the
 * documents so both accept the same text.
 * s3l_parse_size: digits, optional spaces, then an optional suffix, case-insensitive: B; K, KiB,
 * M, MiB, G, GiB, T, TiB (powers of 1024, IEC 80000-13); KB, MB, GB, TB (powers of 1000, SI).
 * "256MiB" = 268435456. Returns false (and leaves *out) on anything else or on overflow of 64 bits.
 * s3l_parse_duration: digits then ms, s (also the default without a unit), m or min, or h, case-
 * insensitive: "500ms", "30s", "1m". In ns into *out_ns; false on anything else or overflow.
 */
bool s3l_parse_size(const char *s, uint64_t *out);
/* As s3l_parse_size, telling why it failed: 0 parsed, -1 not a size, 1 a size too large for 64
 * bits (so a caller can say "too large" rather than "expected a size"). */
int s3l_parse_size_ex(const char *s, uint64_t *out);
bool s3l_parse_duration(const char *s, int64_t *out_ns);

#endif
