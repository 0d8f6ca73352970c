/*
 * A Pipeline document and its Destination as the runner's options (struct s3l_pipeline_options
 * with one struct s3l_pipeline_source per spec.sources entry), for `run`; the Destination's part
 * alone for `check` and `write` with --config. Field by field as docs/config.md describes them;
 * a setting the runner does not have yet is refused by name before anything runs, never ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int refuse(struct cli *c, const char *fmt, const char *a, const char *b)
{
    struct s3l_error e = {0};
    s3l_error_set(&e, S3L_EUNSUPPORTED, fmt, a, b);
    return cli_fail(c, e.code, &e, S3L_SIDE_CONFIG);
}

int cli_plan_destination(struct cli *c, const char *cmd, const struct cli_docs *d, bool inherit,
                         struct cli_run_plan *p)
{
    const struct s3l_config_destination *dc = d->destination->destination;
    const char *name = d->destination->name;
    s3l_pipeline_options_init(&p->o);
    p->url = dc->url.value;
    p->o.url = p->url;
    /* Additional checksums (x-amz-checksum-*): write has no option for them, and the test store
     * (Ceph RGW 16) ignores them, so a run could not show they are sent and checked. */
    if (dc->checksum.value)
        return refuse(c, "destination %s: spec.config.checksum %s is not supported: uploads "
                         "carry Content-MD5, which S3 and Ceph RGW check on every PutObject and "
                         "UploadPart; the additional checksums (x-amz-checksum-*) are not sent. "
                         "Remove it to run",
                      name, dc->checksum.value);
    /* Encryption and storage class: write's --sse, --sse-kms-key-id and --storage-class, checked
     * against the S3 API's lists before anything moves (sse.c), and sent on every object the run
     * writes or copies (storage class on data files only). */
    struct s3l_error e = {0};
    if (s3l_s3_sse_check(dc->sse.value, dc->sse_kms_key_id.value, dc->storage_class.value, &e))
        return cli_usage(c, cmd, "destination %s: spec.config (sse, sseKmsKeyId, storageClass): "
                                 "%s",
                         name, e.message);
    if (dc->compression.value && !cli_parse_codec(dc->compression.value, &p->o.codec))
        return cli_usage(c, cmd, "destination %s: spec.config.compression %s: expected zstd, "
                                 "snappy, gzip or none",
                         name, dc->compression.value);
    p->o.codec_level = dc->compression_level;
    if (dc->file_size)
        p->o.file_size = dc->file_size;
    if (dc->row_group_size)
        p->o.row_group_bytes = (size_t)dc->row_group_size;
    int ex = cli_doc_s3_options(c, cmd, d, inherit, &p->s3);
    if (ex)
        return ex;
    p->s3.opts.sse = dc->sse.value;
    p->s3.opts.sse_kms_key_id = dc->sse_kms_key_id.value;
    p->s3.opts.storage_class = dc->storage_class.value;
    p->o.s3 = &p->s3.opts;
    p->o.region = p->s3.cfg.region;
    p->o.endpoint = p->s3.cfg.endpoint;
    p->o.path_style = p->s3.cfg.path_style;
    return 0;
}

/* A schema file's columns into *out. Returns 0 or the exit code after reporting. */
static int schema_file(struct cli *c, const char *path, struct s3l_schema **out)
{
    struct s3l_error err = {0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        s3l_error_set_errno(&err, S3L_EINVALID_CONFIG, errno, "schema %s", path);
        return cli_fail(c, err.code, &err, S3L_SIDE_CONFIG);
    }
    char *text = malloc(16u << 20);
    size_t len = text ? fread(text, 1, 16u << 20, f) : 0;
    fclose(f);
    int rc = text ? s3l_schema_from_json(text, len, out, &err) : S3L_ENOMEM;
    free(text);
    if (rc) {
        s3l_error_prefix(&err, "schema %s", path);
        return cli_fail(c, rc, &err, S3L_SIDE_CONFIG);
    }
    return 0;
}

/* The table (and namespace) of source cs: its spec.streams entry, else its own name. */
static int source_table(struct cli *c, const struct s3l_config_pipeline *pc,
                        const struct s3l_config_source *cs, struct s3l_pipeline_source *s)
{
    s->table = cs->name;
    size_t found = 0;
    for (size_t i = 0; i < pc->n_streams; i++) {
        if (strcmp(pc->streams[i].source, cs->name) != 0)
            continue;
        if (found++)
            return refuse(c, "source %s: it feeds several streams (spec.streams); a source "
                             "lands in one table for now%s",
                          cs->name, "");
        s->table = pc->streams[i].table;
        s->ns = pc->streams[i].namespace_;
    }
    return 0;
}

static int source_settings(struct cli *c, const struct s3l_config_source *cs,
                           struct s3l_pipeline_source *s)
{
    s->name = cs->name;
    s->follow = cs->follow == 1;
    s->missing_skip = cs->missing && strcmp(cs->missing, "skip") == 0;
    s->input_format = cs->format;
    s->infer_rows = (size_t)cs->infer_rows;
    s->max_record_size = (size_t)cs->max_record_size;
    s->csv_delimiter = cs->csv_delimiter;
    s->nested_as_json = cs->nested_as_json == 1;
    if (cs->bad_records && strcmp(cs->bad_records, "skip") == 0)
        s->bad_records = S3L_BAD_RECORDS_SKIP;
    else if (cs->bad_records && strcmp(cs->bad_records, "dead-letter") == 0)
        s->bad_records = S3L_BAD_RECORDS_DEAD_LETTER;
    if (cs->timestamp_unit)
        s->timestamp_unit = strcmp(cs->timestamp_unit, "ns") == 0 ? S3L_UNIT_NANO
                                                                   : S3L_UNIT_MICRO;
    return 0;
}

/* Source i of the pipeline: settings, table, schema and expanded files. */
static int plan_source(struct cli *c, const struct s3l_config_pipeline *pc, size_t i,
                       struct cli_run_plan *p)
{
    const struct s3l_config_source *cs = &pc->sources[i];
    struct s3l_pipeline_source *s = &p->sources[i];
    int ex = source_settings(c, cs, s);
    if (ex == 0)
        ex = source_table(c, pc, cs, s);
    if (ex == 0 && cs->schema_file)
        ex = schema_file(c, cs->schema_file, &p->schemas[i]);
    struct s3l_error err = {0};
    if (ex == 0 && cs->schema_json) {
        int rc = s3l_schema_from_json(cs->schema_json, strlen(cs->schema_json), &p->schemas[i],
                                      &err);
        if (rc) {
            s3l_error_prefix(&err, "source %s: schema", cs->name);
            ex = cli_fail(c, rc, &err, S3L_SIDE_CONFIG);
        }
    }
    s->schema = p->schemas[i];
    if (ex)
        return ex;
    int rc = s3l_pipeline_expand(cs->files, cs->n_files, cs->exclude, cs->n_exclude,
                                 &p->paths[i], &p->n_paths[i], &err);
    if (rc) {
        s3l_error_prefix(&err, "source %s: files", cs->name);
        return cli_fail(c, rc, &err, S3L_SIDE_INPUT);
    }
    s->inputs = (const char *const *)p->paths[i];
    s->n_inputs = p->n_paths[i];
    /* Follow mode looks for new matches of the same globs while it runs. */
    s->patterns = (const char *const *)cs->files;
    s->n_patterns = cs->n_files;
    s->exclude = (const char *const *)cs->exclude;
    s->n_exclude = cs->n_exclude;
    return 0;
}

int cli_run_plan_build(struct cli *c, const char *cmd, const struct cli_docs *d,
                       struct cli_run_plan *p)
{
    const struct s3l_config_pipeline *pc = d->pipeline->pipeline;
    int ex = cli_plan_destination(c, cmd, d, pc->runner_inherit == 1, p);
    if (ex)
        return ex;
    p->n = pc->n_sources;
    p->sources = calloc(p->n ? p->n : 1, sizeof(*p->sources));
    p->paths = calloc(p->n ? p->n : 1, sizeof(*p->paths));
    p->n_paths = calloc(p->n ? p->n : 1, sizeof(*p->n_paths));
    p->schemas = calloc(p->n ? p->n : 1, sizeof(*p->schemas));
    if (!p->sources || !p->paths || !p->n_paths || !p->schemas)
        return cli_fail(c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
    for (size_t i = 0; ex == 0 && i < p->n; i++)
        ex = plan_source(c, pc, i, p);
    if (ex)
        return ex;
    p->o.sources = p->sources;
    p->o.n_sources = p->n;
    p->o.name = d->pipeline->name;
    p->o.ns = pc->destination_namespace;
    p->o.allow_type_changes = pc->type_changes && strcmp(pc->type_changes, "allow") == 0;
    if (pc->commit_interval_ns >= 0)
        p->o.commit_interval_ns = pc->commit_interval_ns;
    /* The delivery gate: exactly once unless the Pipeline accepts less (issue 12, item 5). */
    p->o.delivery_require = pc->delivery_require ? s3l_delivery_parse(pc->delivery_require)
                                                 : S3L_DELIVERY_EXACTLY_ONCE;
    return 0;
}

void cli_run_plan_free(struct cli_run_plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        if (p->paths)
            s3l_pipeline_paths_free(p->paths[i], p->n_paths[i]);
        if (p->schemas)
            s3l_schema_free(p->schemas[i]);
    }
    free(p->sources);
    free(p->paths);
    free(p->n_paths);
    free(p->schemas);
    memset(p, 0, sizeof(*p));
}

int cli_docs_open_store(struct cli *c, const char *cmd, const char *config,
                        const struct cli_secret_src *src, bool create, struct s3l_store **store,
                        char **url)
{
    struct cli_docs d;
    struct cli_run_plan p;
    memset(&p, 0, sizeof(p));
    const char *files[] = {config};
    int ex = cli_docs_load(c, cmd, files, 1, src, NULL, false, &d);
    if (ex)
        return ex;
    bool inherit = !d.pipeline || d.pipeline->pipeline->runner_inherit == 1;
    ex = cli_plan_destination(c, cmd, &d, inherit, &p);
    struct s3l_error err = {0};
    int rc = 0;
    if (ex == 0) {
        struct s3l_store_options so = {0};
        so.version = S3L_STORE_OPTIONS_VERSION;
        so.create = create;
        so.s3 = &p.s3.opts;
        rc = s3l_url_canonical(p.url, url, &err);
        if (rc == 0)
            rc = s3l_store_open(*url, &so, store, &err);
        if (rc) {
            s3l_free(*url);
            *url = NULL;
            ex = cli_fail(c, rc, &err, S3L_SIDE_DESTINATION);
        }
    }
    cli_docs_free(&d);
    return ex;
}
