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

/* What each source needs of its own: a table (not another source's) and a known format. */
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
    for (size_t k = 0; k < i; k++)
        if (strcmp(all[k].table, o->table) == 0 &&
            strcmp(all[k].ns ? all[k].ns : "", o->ns ? o->ns : "") == 0)
            return s3l_error_set(err, S3L_EUNSUPPORTED,
                                 "table %s%s%s: two sources land in it; each source has its own "
                                 "table for now (one stream per table)",
                                 o->ns ? o->ns : "", o->ns ? "/" : "", o->table);
    return 0;
}

/* Opens every input; on failure closes the ones opened. */
static int open_inputs(const char *const *inputs, size_t n, struct s3l_input_position *pos,
                       int *fds, struct s3l_error *err)
{
    for (size_t i = 0; i < n; i++) {
        int rc = s3l_input_open(inputs[i], &pos[i], &fds[i], err);
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
    }
    if (rc == 0) {
        char id[S3L_UUID_STR_LEN + 1];
        *side = S3L_SIDE_CONFIG;
        rc = derive_id(opts, url, pos, n, id, err);
        struct s3l__run_plan plan = {src, n_src, input_src};
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
    return rc;
}
