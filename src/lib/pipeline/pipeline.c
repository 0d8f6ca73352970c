/*
 * s3l_pipeline_run: checks the options, opens the inputs, derives the pipeline id, and hands
 * over to the runner's loop with the real sources and destination (glue.c and its parts).
 *
 * Everything that can be refused without touching the destination is refused here first: a
 * replace or merge disposition (issue 3, item 6: plain files cannot replace or merge atomically),
 * bad options, missing or unreadable inputs.
 */
#include <string.h>

#include "os/os.h"
#include "runner.h"
#include "s3l/destination.h"

static int check_options(const struct s3l_pipeline_options *o, struct s3l_error *err)
{
    if (!o || o->version != S3L_PIPELINE_OPTIONS_VERSION)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "pipeline options: version %d, expected %d (call "
                             "s3l_pipeline_options_init)",
                             o ? o->version : -1, S3L_PIPELINE_OPTIONS_VERSION);
    if (o->disposition == S3L_DISPOSITION_REPLACE)
        return s3l_error_set(err, S3L_EUNSUPPORTED,
                             "disposition replace is refused before any data moves: plain Parquet "
                             "files cannot replace a table atomically (readers would see old and "
                             "new files mixed, or none); append is the only disposition, use a "
                             "table format such as Iceberg to replace");
    if (o->disposition == S3L_DISPOSITION_MERGE)
        return s3l_error_set(err, S3L_EUNSUPPORTED,
                             "disposition merge is refused before any data moves: plain Parquet "
                             "files cannot merge or upsert rows (files are immutable and readers "
                             "know no deletes); append is the only disposition, use a table "
                             "format such as Iceberg to merge");
    if (o->disposition != S3L_DISPOSITION_APPEND)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "unknown disposition %d", o->disposition);
    if (o->n_sources && (!o->name || !*o->name))
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "a pipeline of sources needs a name");
    if (!o->n_sources && (!o->inputs || o->n_inputs == 0))
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "at least one input is required");
    if (o->pipeline_id && !s3l_uuid_valid(o->pipeline_id))
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "pipeline id %s is not a UUID",
                             o->pipeline_id);
    if (o->timestamp_unit != S3L_UNIT_MICRO && o->timestamp_unit != S3L_UNIT_NANO)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "timestamp unit: expected us or ns");
    if (o->lanes < 1 || o->lanes > 64)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "lanes %u: expected 1..64", o->lanes);
    if (o->max_record_size < 16)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "max record size %zu is too small",
                             o->max_record_size);
    return 0;
}

/* What each source needs of its own: a table and a known format. */
static int check_source(const struct s3l_pipeline_options *all, size_t i,
                        struct s3l_error *err)
{
    const struct s3l_pipeline_options *o = &all[i];
    if (!o->table || !*o->table)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "a table name is required");
    const char *f = o->input_format ? o->input_format : "ndjson";
    if (strcmp(f, "ndjson") && strcmp(f, "json") && strcmp(f, "csv") && strcmp(f, "debezium"))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "input format %s: expected ndjson, json, csv or debezium", f);
    if (o->follow && strcmp(f, "json") == 0)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "%s%s%sfollow: a JSON array (input format json) has no end after "
                             "which records can be appended; follow NDJSON or CSV files",
                             o->source_name ? "source " : "", o->source_name ? o->source_name : "",
                             o->source_name ? ": " : "");
    return 0;
}

static bool same_table(const struct s3l_pipeline_options *a, const struct s3l_pipeline_options *b)
{
    return strcmp(a->table, b->table) == 0 && strcmp(a->ns ? a->ns : "", b->ns ? b->ns : "") == 0;
}

static bool same_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Whether two declared schemas (or none) are the same columns: 1 yes, 0 no, or S3L_ENOMEM. */
static int same_schema(const struct s3l_schema *a, const struct s3l_schema *b)
{
    if (!a || !b)
        return a == b;
    char *ja = NULL, *jb = NULL;
    size_t la = 0, lb = 0;
    int rc = s3l_schema_to_json(a, &ja, &la);
    if (rc == 0)
        rc = s3l_schema_to_json(b, &jb, &lb);
    if (rc == 0)
        rc = la == lb && memcmp(ja, jb, la) == 0;
    s3l_free(ja);
    s3l_free(jb);
    return rc;
}

/*
 * Source b lands in the table of an earlier source a: one stream, one converter, one schema
 * (inferred from the first records of either, grown by the other's keys), so what decides how
 * records become rows must be the same: the format, the declared schema (or none), the input
 * settings the reader and inference take, follow mode, and whether rows carry _openetl_id
 * (at_least_once). Refused otherwise (S3L_EINVALID_CONFIG), naming both sources and the setting.
 */
static int check_shared(const struct s3l_pipeline_options *a, const struct s3l_pipeline_options *b,
                        struct s3l_error *err)
{
    const char *what = NULL;
    int sch = same_schema(a->schema, b->schema);
    if (sch < 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory comparing schemas");
    if (!same_str(a->input_format ? a->input_format : "ndjson",
                  b->input_format ? b->input_format : "ndjson"))
        what = "format (one table's rows come through one reader format and converter)";
    else if (!sch)
        what = "schema (declare the same columns in both, or infer both)";
    else if (a->follow != b->follow)
        what = "follow";
    else if (a->nested_as_json != b->nested_as_json)
        what = "nestedAsJson";
    else if (a->timestamp_unit != b->timestamp_unit)
        what = "timestampUnit";
    else if (a->max_record_size != b->max_record_size)
        what = "maxRecordSize";
    else if (a->csv_delimiter != b->csv_delimiter)
        what = "csvDelimiter";
    else if (a->infer_rows != b->infer_rows)
        what = "inferRows";
    else if ((s3l__ident_kind(a) != NULL) != (s3l__ident_kind(b) != NULL))
        what = "delivery of their kinds (the rows of an at_least_once source carry _openetl_id, "
               "the others' do not)";
    if (!what)
        return 0;
    return s3l_error_set(err, S3L_EINVALID_CONFIG,
                         "table %s%s%s: sources %s and %s both land in it but differ in %s; "
                         "sources into one table must read their records the same way: give "
                         "them the same setting, or each its own table",
                         b->ns ? b->ns : "", b->ns ? "/" : "", b->table,
                         a->source_name ? a->source_name : "?",
                         b->source_name ? b->source_name : "?", what);
}

/* The tables of the sources (one per distinct namespace and table, in order of first source):
 * *src_table per source, *table_src per table its first source. S3L_ENOMEM, check_shared's. */
static int map_tables(const struct s3l_pipeline_options *src, size_t n_src, size_t **src_table,
                      size_t **table_src, size_t *n_tables, struct s3l_error *err)
{
    *src_table = s3l_calloc(n_src ? n_src : 1, sizeof(**src_table));
    *table_src = s3l_calloc(n_src ? n_src : 1, sizeof(**table_src));
    *n_tables = 0;
    if (!*src_table || !*table_src)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory starting the pipeline");
    for (size_t s = 0; s < n_src; s++) {
        size_t t = 0;
        while (t < *n_tables && !same_table(&src[(*table_src)[t]], &src[s]))
            t++;
        if (t == *n_tables)
            (*table_src)[(*n_tables)++] = s;
        else {
            int rc = check_shared(&src[(*table_src)[t]], &src[s], err);
            if (rc)
                return rc;
        }
        (*src_table)[s] = t;
    }
    return 0;
}

/* Opens every input; on failure closes the ones opened. */
static int open_inputs(const char *const *inputs, size_t n, struct s3l_input_position *pos,
                       int *fds, struct s3l_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int rc = 0;
        if (s3l__object_input_is(inputs[i]))
            fds[i] = -1, rc = s3l__object_input_position(inputs[i], &pos[i], err);
        else
            rc = s3l_input_open(inputs[i], &pos[i], &fds[i], err);
        for (size_t k = 0; rc == 0 && k < i; k++)
            if (strcmp(pos[k].path, pos[i].path) == 0)
                rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "input %s is given twice (as %s)",
                                   inputs[i], pos[i].path);
            else if (pos[k].replayable && pos[i].replayable && pos[k].dev == pos[i].dev &&
                     pos[k].ino == pos[i].ino)
                rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                                   "input %s is given twice (a hard link to %s)", inputs[i],
                                   pos[k].path);
        if (rc) {
            for (size_t k = 0; k <= i; k++) {
                struct s3l_error ignored = {0}; /* the open's error is the one reported */
                if (fds[k] > 0)
                    s3l__os_close(fds[k], inputs[k], &ignored);
                s3l_input_position_cleanup(&pos[k]);
            }
            return rc;
        }
    }
    return 0;
}

/* An object prefix is read as NDJSON lines, to its end (docs/internals/pipeline.md). */
static int check_objects(const struct s3l_pipeline_options *src, const size_t *input_src,
                         const struct s3l_input_position *pos, size_t n, struct s3l_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const struct s3l_pipeline_options *o = &src[input_src[i]];
        const char *f = o->input_format ? o->input_format : "ndjson";
        if (!pos[i].object)
            continue;
        if (strcmp(f, "ndjson") != 0)
            return s3l_error_set(err, S3L_EUNSUPPORTED,
                                 "input %s: an object prefix is read as NDJSON (one record per "
                                 "line), not as %s; give --input-format ndjson",
                                 pos[i].path, f);
        if (o->follow)
            return s3l_error_set(err, S3L_EUNSUPPORTED,
                                 "input %s: an object prefix is not followed; rerun the command "
                                 "to land the objects put since (only they are read)",
                                 pos[i].path);
    }
    return 0;
}

/* The pipeline id: the caller's, the named pipeline's, or the one over the table and inputs. */
static int derive_id(const struct s3l_pipeline_options *opts, const char *url,
                     const struct s3l_input_position *pos, size_t n,
                     char id[S3L_UUID_STR_LEN + 1], struct s3l_error *err)
{
    if (opts->pipeline_id) {
        for (size_t i = 0; i <= S3L_UUID_STR_LEN; i++) /* ids are lowercase everywhere */
            id[i] = (char)((opts->pipeline_id[i] >= 'A' && opts->pipeline_id[i] <= 'F')
                               ? opts->pipeline_id[i] + 32
                               : opts->pipeline_id[i]);
        return 0;
    }
    if (opts->n_sources)
        return s3l_pipeline_id_named(url, opts->ns, opts->name, id, err);
    const char **paths = s3l_calloc(n ? n : 1, sizeof(*paths));
    char *tpath = NULL;
    if (!paths)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory starting the pipeline");
    for (size_t i = 0; i < n; i++)
        paths[i] = pos[i].path;
    /* The table path as the destination builds it (its names checked there). */
    int rc = s3l_dest_table_path(opts->ns, opts->table, &tpath, err);
    if (rc == 0)
        rc = s3l_pipeline_id(url, tpath, paths, n, id, err);
    s3l_free(tpath);
    s3l_free(paths);
    return rc;
}

int s3l_pipeline_run(const struct s3l_pipeline_options *opts, struct s3l_pipeline_stats *stats,
                     enum s3l_pipeline_side *side, struct s3l_error *err)
{
    struct s3l_pipeline_stats dummy_stats;
    enum s3l_pipeline_side dummy_side;
    if (!stats)
        stats = &dummy_stats;
    if (!side)
        side = &dummy_side;
    memset(stats, 0, sizeof(*stats));
    *side = S3L_SIDE_CONFIG;
    int rc = check_options(opts, err);
    if (rc)
        return rc;
    struct s3l_pipeline_options *src = NULL;
    const char **inputs = NULL;
    size_t *input_src = NULL, n_src = 0, n = 0;
    rc = s3l__run_sources(opts, &src, &n_src, &inputs, &input_src, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; rc == 0 && i < n_src; i++)
        rc = check_source(src, i, err);
    size_t *src_table = NULL, *table_src = NULL, *input_table = NULL, n_tables = 0;
    if (rc == 0)
        rc = map_tables(src, n_src, &src_table, &table_src, &n_tables, err);
    if (rc == 0 && !(input_table = s3l_calloc(n ? n : 1, sizeof(*input_table))))
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory starting the pipeline");
    for (size_t i = 0; rc == 0 && i < n; i++)
        input_table[i] = src_table[input_src[i]];
    char *url = NULL;
    if (rc == 0)
        rc = s3l_url_canonical(opts->url ? opts->url : "lake", &url, err);
    struct s3l_input_position *pos = rc ? NULL : s3l_calloc(n ? n : 1, sizeof(*pos));
    int *fds = rc ? NULL : s3l_calloc(n ? n : 1, sizeof(*fds));
    if (rc == 0 && (!pos || !fds))
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory starting the pipeline");
    if (rc == 0) {
        *side = S3L_SIDE_INPUT;
        rc = open_inputs(inputs, n, pos, fds, err);
        if (rc == 0 && (rc = check_objects(src, input_src, pos, n, err)) != 0) {
            for (size_t i = 0; i < n; i++) {
                struct s3l_error ignored = {0};
                if (fds[i] > 0)
                    s3l__os_close(fds[i], inputs[i], &ignored);
                s3l_input_position_cleanup(&pos[i]);
            }
        }
    }
    if (rc == 0) {
        char id[S3L_UUID_STR_LEN + 1];
        *side = S3L_SIDE_CONFIG;
        rc = derive_id(opts, url, pos, n, id, err);
        struct s3l__run_plan plan = {src,       n_src,       input_src, table_src,
                                      n_tables, input_table, src_table};
        if (rc == 0)
            rc = s3l__delivery_gate(opts, &plan, pos, n, err);
        if (rc == 0)
            rc = s3l__glue_run(opts, &plan, url, id, pos, fds, n, stats, side, err);
        for (size_t i = 0; i < n; i++) {
            struct s3l_error ignored = {0}; /* inputs are only read: a close error loses nothing */
            if (fds[i] > 0)
                s3l__os_close(fds[i], inputs[i], &ignored);
            s3l_input_position_cleanup(&pos[i]);
        }
    }
    s3l_free(fds);
    s3l_free(pos);
    s3l_free(url);
    s3l_free(src);
    s3l_free(inputs);
    s3l_free(input_src);
    s3l_free(src_table);
    s3l_free(table_src);
    s3l_free(input_table);
    return rc;
}
