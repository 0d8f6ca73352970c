/*
 * config: the internal header of the config-document module (docs/internals/config.md). Text
 * becomes jansson values (yaml.c), values are checked against the shipped JSON Schemas by a small
 * interpreter of the keywords those schemas use (validate.c), and valid documents become the
 * typed views of include/s3l/config.h (extract.c); config.c holds the documents, the problems and
 * the secrets.
 */
#ifndef S3L_CONFIG_INT_H
#define S3L_CONFIG_INT_H

#include <jansson.h>

#include "s3l/config.h"
#include "util/util.h"

/* The longest path a message names (the schemas nest a few levels deep). */
#define S3L__CFG_PATH_MAX 256

/* The schema texts, generated at build time from schemas/KIND.schema.json (cmake/embed.cmake). */
extern const char s3l__config_schema_destination[];
extern const size_t s3l__config_schema_destination_len;
extern const char s3l__config_schema_pipeline[];
extern const size_t s3l__config_schema_pipeline_len;
extern const char s3l__config_schema_sink[];
extern const size_t s3l__config_schema_sink_len;

/*
 * Parses text as a stream of documents: JSON (exactly one value) when json is set, else YAML 1.2
 * (core schema; aliases and tags other than !!str are refused). On success *docs is an array of
 * *n new references (free each with json_decref, the array with s3l_free). On a syntax error
 * returns S3L_EINVALID_CONFIG with *bad_index the document (from 1) it is in and err's message
 * "line L, column C: WHAT"; S3L_ENOMEM.
 */
int s3l__cfg_parse(const char *text, size_t len, bool json, json_t ***docs, size_t *n,
                   size_t *bad_index, struct s3l_error *err);

/* A place in a document whose value came from a secret: checked values there are never shown. */
struct s3l__cfg_redact {
    const char *path;
    const char *secret;
};

/* The outcome of one check: the path of the first failure (dotted) and its text. */
struct s3l__cfg_verdict {
    char path[S3L__CFG_PATH_MAX];
    char text[S3L_ERROR_MESSAGE_MAX];
};

/*
 * Checks doc against schema (a whole-document schema with local $defs), stopping at the first
 * failure in the order Ajv 8 reports it (docs/internals/config.md). Returns 0 when valid, 1 when
 * not (v filled), S3L_ENOMEM, or S3L_EINTERNAL for a schema using a keyword it does not know.
 * Values at redact's paths are never quoted in v->text.
 */
int s3l__cfg_validate(json_t *schema, json_t *doc, const struct s3l__cfg_redact *redact,
                      size_t n_redact, struct s3l__cfg_verdict *v);

/* Appends ".key" (or "key" at the root) or "[i]" to a path of length *len in buf (cap bytes). */
void s3l__cfg_path_key(char *buf, size_t cap, size_t *len, const char *key);
void s3l__cfg_path_index(char *buf, size_t cap, size_t *len, size_t i);

/* A resolved secret, owned by the config (value wiped on free). */
struct s3l__cfg_secret {
    char *name;
    char *value;
};

/*
 * Builds the typed view of a valid document into out, its strings and arrays in arena. dir is
 * the document's directory ("" for none), for relative paths. secrets: the resolved values by
 * name (NULL values when not resolved). Returns 0, 1 with v filled for a failure of the checks
 * the schema cannot express (stream sources, duplicate names, column types, a delimiter of more
 * than one byte), or S3L_ENOMEM.
 */
int s3l__cfg_extract(json_t *doc, enum s3l_config_kind kind, const char *dir,
                     const struct s3l__cfg_secret *secrets, size_t n_secrets,
                     struct s3l_arena *arena, struct s3l_config_doc *out,
                     struct s3l__cfg_verdict *v);

/* config.c, for sql.c: records a problem whose message is msg, whole (returns code); and adds
 * one document built as JSON, checked as a document of a file is (add_doc), then named name
 * (not NULL: instead of its metadata.name). Returns 0, 1 (invalid: v, *code, *check set) or a
 * code. */
struct s3l_config;
int s3l__cfg_add_problem_msg(struct s3l_config *c, const char *file, size_t index,
                             const char *path, const char *msg, int code,
                             enum s3l_config_check check, struct s3l_error *err);
int s3l__cfg_add_json(struct s3l_config *c, json_t *doc, const char *file, size_t index,
                      const char *name, const struct s3l_config_options *opts,
                      struct s3l__cfg_verdict *v, int *code, enum s3l_config_check *check);

#endif
