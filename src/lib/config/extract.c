/*
 * Valid documents into the typed views of include/s3l/config.h. The schema has already checked
 * every field's shape, so this file only converts (sizes and durations through the same parsers
 * as the command line, relative paths joined to the document's directory) and runs the checks a
 * JSON Schema cannot state: a stream's source must be a source of the document, source names and
 * (source, table) pairs are unique, inline columns must be a schema s3l_schema_from_json reads,
 * and a CSV delimiter follows --csv-delimiter's rule (util/delim.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_int.h"
#include "s3l/schema.h"

struct ex {
    struct s3l_arena *arena;
    const char *dir;
    const struct s3l__cfg_secret *secrets;
    size_t n_secrets;
    struct s3l__cfg_verdict *v;
    bool nomem;
};

static const char *copy_str(struct ex *x, const char *s)
{
    if (!s)
        return NULL;
    char *p = s3l_arena_strndup(x->arena, s, strlen(s));
    if (!p)
        x->nomem = true;
    return p;
}

static const char *text(struct ex *x, json_t *o, const char *key)
{
    return copy_str(x, json_string_value(json_object_get(o, key)));
}

/* A setting that may be { secret: NAME }: the value resolved earlier, or NULL if it was not. */
static struct s3l_config_str setting(struct ex *x, json_t *o, const char *key)
{
    struct s3l_config_str r = {NULL, NULL};
    json_t *n = json_object_get(o, key);
    if (json_is_string(n)) {
        r.value = copy_str(x, json_string_value(n));
    } else if (json_is_object(n)) {
        const char *name = json_string_value(json_object_get(n, "secret"));
        r.secret = copy_str(x, name);
        for (size_t i = 0; i < x->n_secrets; i++)
            if (strcmp(x->secrets[i].name, name) == 0)
                r.value = x->secrets[i].value;
    }
    return r;
}

/* A size: an integer (bytes), the CLI's text, or a secret holding that text; 0 when absent. The
 * schema's pattern admits only text s3l_parse_size reads without overflow. */
static uint64_t size_of(struct ex *x, json_t *o, const char *key)
{
    json_t *n = json_object_get(o, key);
    uint64_t v = 0;
    if (json_is_integer(n))
        return (uint64_t)json_integer_value(n);
    if (json_is_real(n))
        return (uint64_t)json_real_value(n);
    const char *s = json_is_object(n) ? setting(x, o, key).value : json_string_value(n);
    return s && s3l_parse_size(s, &v) ? v : 0;
}

static int64_t duration_of(json_t *o, const char *key, int64_t absent)
{
    int64_t v;
    const char *s = json_string_value(json_object_get(o, key));
    return s && s3l_parse_duration(s, &v) ? v : absent;
}

static int tristate(json_t *o, const char *key)
{
    json_t *n = json_object_get(o, key);
    return json_is_boolean(n) ? json_is_true(n) : -1;
}

static int64_t integer_of(json_t *o, const char *key)
{
    return (int64_t)json_number_value(json_object_get(o, key));
}

static int fail(struct ex *x, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct ex *x, const char *path, const char *fmt, ...)
{
    snprintf(x->v->path, sizeof(x->v->path), "%s", path);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->v->text, sizeof(x->v->text), fmt, ap);
    va_end(ap);
    return 1;
}

static int destination(struct ex *x, json_t *spec, struct s3l_config_doc *out)
{
    struct s3l_config_destination *d = s3l_arena_alloc(x->arena, sizeof(*d));
    if (!d)
        return S3L_ENOMEM;
    memset(d, 0, sizeof(*d));
    json_t *cf = json_object_get(spec, "config"), *aws = json_object_get(cf, "aws");
    d->connector = text(x, spec, "connector");
    d->url = setting(x, cf, "url");
    d->region = setting(x, cf, "region");
    d->endpoint = setting(x, cf, "endpoint");
    d->path_style = tristate(cf, "pathStyle");
    if (d->path_style < 0)
        d->path_style = 0;
    else if (d->path_style == 0)
        d->path_style = -1;
    d->access_key_id = setting(x, cf, "accessKeyId");
    d->secret_access_key = setting(x, cf, "secretAccessKey");
    d->session_token = setting(x, cf, "sessionToken");
    d->aws.role = setting(x, aws, "role");
    d->aws.external_id = setting(x, aws, "externalId");
    d->aws.session_name = setting(x, aws, "sessionName");
    d->aws.sts_endpoint = setting(x, aws, "stsEndpoint");
    d->aws.duration_seconds = integer_of(aws, "durationSeconds");
    d->file_size = size_of(x, cf, "fileSize");
    d->row_group_size = size_of(x, cf, "rowGroupSize");
    d->compression = setting(x, cf, "compression");
    d->compression_level = (int)integer_of(cf, "compressionLevel");
    d->sse = setting(x, cf, "sse");
    d->sse_kms_key_id = setting(x, cf, "sseKmsKeyId");
    d->storage_class = setting(x, cf, "storageClass");
    d->checksum = setting(x, cf, "checksum");
    out->destination = d;
    return 0;
}

static int sink(struct ex *x, json_t *spec, struct s3l_config_doc *out)
{
    struct s3l_config_sink *s = s3l_arena_alloc(x->arena, sizeof(*s));
    if (!s)
        return S3L_ENOMEM;
    memset(s, 0, sizeof(*s));
    json_t *cf = json_object_get(spec, "config");
    s->connector = text(x, spec, "connector");
    s->bucket = setting(x, cf, "bucket");
    s->key_prefix = setting(x, cf, "key_prefix");
    s->region = setting(x, cf, "region");
    s->endpoint_override = setting(x, cf, "endpoint_override");
    s->access_key_id = setting(x, cf, "access_key_id");
    s->secret_access_key = setting(x, cf, "secret_access_key");
    s->session_token = setting(x, cf, "session_token");
    s->commit_group = setting(x, cf, "commit_group");
    s->delivery_guarantee = setting(x, cf, "delivery_guarantee");
    s->compression = setting(x, cf, "compression");
    s->content_type = setting(x, cf, "content_type");
    s->rollover_bytes = size_of(x, cf, "rollover_bytes");
    s->part_size = size_of(x, cf, "part_size");
    /* The interval may come from a secret too: read it through the setting. */
    struct s3l_config_str iv = setting(x, cf, "rollover_interval");
    int64_t ns;
    s->rollover_interval_ns = iv.value && s3l_parse_duration(iv.value, &ns) ? ns : 0;
    out->sink = s;
    return 0;
}

/* A path as written, or joined to the document's directory when relative; "-" (stdin) as is. */
static const char *joined(struct ex *x, const char *p)
{
    if (!p || p[0] == '/' || !x->dir[0] || strcmp(p, "-") == 0)
        return copy_str(x, p);
    size_t n = strlen(x->dir) + strlen(p) + 2;
    char *r = s3l_arena_alloc(x->arena, n);
    if (!r) {
        x->nomem = true;
        return NULL;
    }
    snprintf(r, n, "%s%s%s", x->dir, x->dir[strlen(x->dir) - 1] == '/' ? "" : "/", p);
    return r;
}

static const char *const *paths(struct ex *x, json_t *list, size_t *n)
{
    *n = json_array_size(list);
    if (*n == 0)
        return NULL;
    const char **v = s3l_arena_alloc(x->arena, *n * sizeof(*v));
    if (!v) {
        x->nomem = true;
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < *n; i++)
        v[i] = joined(x, json_string_value(json_array_get(list, i)));
    return v;
}

/* An inline column list: kept as JSON text, and read once by the schema module to check it. */
static int inline_schema(struct ex *x, json_t *cols, size_t i, struct s3l_config_source *s)
{
    char *t = s3l__json_dumps(cols, JSON_COMPACT);
    if (!t)
        return S3L_ENOMEM;
    s->schema_json = copy_str(x, t);
    struct s3l_schema *sc = NULL;
    struct s3l_error e = {0};
    int rc = s3l_schema_from_json(t, strlen(t), &sc, &e);
    s3l_free(t);
    s3l_schema_free(sc);
    if (rc == S3L_ENOMEM)
        return rc;
    if (rc != 0) {
        char path[S3L__CFG_PATH_MAX];
        snprintf(path, sizeof(path), "spec.sources[%zu].schema", i);
        return fail(x, path, "%s", e.message);
    }
    return 0;
}

static int source(struct ex *x, json_t *o, size_t i, struct s3l_config_source *s)
{
    s->name = text(x, o, "name");
    s->files = paths(x, json_object_get(o, "files"), &s->n_files);
    s->exclude = paths(x, json_object_get(o, "exclude"), &s->n_exclude);
    s->format = text(x, o, "format");
    json_t *sch = json_object_get(o, "schema");
    if (json_is_string(sch))
        s->schema_file = joined(x, json_string_value(sch));
    else if (json_is_array(sch)) {
        int rc = inline_schema(x, sch, i, s);
        if (rc != 0)
            return rc;
    }
    s->follow = tristate(o, "follow");
    s->missing = text(x, o, "missing");
    s->infer_rows = (uint64_t)integer_of(o, "inferRows");
    s->max_record_size = size_of(x, o, "maxRecordSize");
    const char *d = json_string_value(json_object_get(o, "csvDelimiter")), *why = NULL;
    if (d && s3l__csv_delimiter_parse(d, &s->csv_delimiter, &why) != 0) {
        /* The schema's pattern admits the same texts; this is the rule itself (util/delim.c),
         * the one --csv-delimiter follows, for a document checked without its schema. */
        char path[S3L__CFG_PATH_MAX];
        snprintf(path, sizeof(path), "spec.sources[%zu].csvDelimiter", i);
        return fail(x, path, "%s", why);
    }
    s->nested_as_json = tristate(o, "nestedAsJson");
    s->bad_records = text(x, o, "badRecords");
    s->timestamp_unit = text(x, o, "timestampUnit");
    return 0;
}

static int sources(struct ex *x, json_t *list, struct s3l_config_pipeline *p)
{
    p->n_sources = json_array_size(list);
    struct s3l_config_source *v = s3l_arena_alloc(x->arena, p->n_sources * sizeof(*v));
    if (!v)
        return S3L_ENOMEM;
    memset(v, 0, p->n_sources * sizeof(*v));
    for (size_t i = 0; i < p->n_sources; i++) {
        int rc = source(x, json_array_get(list, i), i, &v[i]);
        if (rc != 0)
            return rc;
        for (size_t j = 0; j < i; j++) {
            if (v[i].name && v[j].name && strcmp(v[i].name, v[j].name) == 0) {
                char path[S3L__CFG_PATH_MAX];
                snprintf(path, sizeof(path), "spec.sources[%zu].name", i);
                return fail(x, path, "%s is also the name of spec.sources[%zu]", v[i].name, j);
            }
        }
    }
    p->sources = v;
    return 0;
}

static int streams(struct ex *x, json_t *list, struct s3l_config_pipeline *p)
{
    p->n_streams = json_array_size(list);
    if (p->n_streams == 0)
        return 0;
    struct s3l_config_stream *v = s3l_arena_alloc(x->arena, p->n_streams * sizeof(*v));
    if (!v)
        return S3L_ENOMEM;
    for (size_t i = 0; i < p->n_streams; i++) {
        json_t *o = json_array_get(list, i);
        v[i].source = text(x, o, "source");
        v[i].table = text(x, o, "table");
        v[i].namespace_ = text(x, o, "namespace");
        v[i].disposition = copy_str(x, "append");
        char path[S3L__CFG_PATH_MAX];
        bool known = false;
        for (size_t j = 0; j < p->n_sources && v[i].source; j++)
            known |= strcmp(p->sources[j].name, v[i].source) == 0;
        if (!known && v[i].source) {
            snprintf(path, sizeof(path), "spec.streams[%zu].source", i);
            return fail(x, path, "%s is not a source of this pipeline (spec.sources[].name)",
                        v[i].source);
        }
        for (size_t j = 0; j < i && v[i].table; j++) {
            if (strcmp(v[j].source, v[i].source) == 0 && strcmp(v[j].table, v[i].table) == 0 &&
                !strcmp(v[j].namespace_ ? v[j].namespace_ : "", v[i].namespace_ ? v[i].namespace_ : "")) {
                snprintf(path, sizeof(path), "spec.streams[%zu]", i);
                return fail(x, path, "the same source and table as spec.streams[%zu]", j);
            }
        }
    }
    p->streams = v;
    return 0;
}

static int pipeline(struct ex *x, json_t *spec, struct s3l_config_doc *out)
{
    struct s3l_config_pipeline *p = s3l_arena_alloc(x->arena, sizeof(*p));
    if (!p)
        return S3L_ENOMEM;
    memset(p, 0, sizeof(*p));
    int rc = sources(x, json_object_get(spec, "sources"), p);
    if (rc == 0)
        rc = streams(x, json_object_get(spec, "streams"), p);
    if (rc != 0)
        return rc;
    json_t *dst = json_object_get(spec, "destination"), *dl = json_object_get(spec, "delivery");
    p->destination = text(x, dst, "name");
    p->destination_namespace = text(x, dst, "namespace");
    p->type_changes = text(x, dst, "typeChanges");
    p->delivery_require = text(x, dl, "require");
    p->commit_interval_ns = duration_of(json_object_get(dl, "commit"), "interval", -1);
    p->runner_inherit = tristate(json_object_get(spec, "runner"), "inherit");
    out->pipeline = p;
    return 0;
}

int s3l__cfg_extract(json_t *doc, enum s3l_config_kind kind, const char *dir,
                     const struct s3l__cfg_secret *secrets, size_t n_secrets,
                     struct s3l_arena *arena, struct s3l_config_doc *out,
                     struct s3l__cfg_verdict *v)
{
    struct ex x = {arena, dir ? dir : "", secrets, n_secrets, v, false};
    out->kind = kind;
    out->name = text(&x, json_object_get(doc, "metadata"), "name");
    json_t *spec = json_object_get(doc, "spec");
    int rc = kind == S3L_CONFIG_DESTINATION ? destination(&x, spec, out)
             : kind == S3L_CONFIG_PIPELINE  ? pipeline(&x, spec, out)
                                            : sink(&x, spec, out);
    if (rc == 0 && x.nomem)
        rc = S3L_ENOMEM;
    return rc;
}
