/*
 * A run of the pipeline over the real parts: opens the store, checks that no other pipeline
 * landed these inputs already, and runs the runner's loop (runner.c) with the table side
 * (table.c) as its destination and a source per input (source.c), the schema declared or
 * inferred and grown (growth.c). Tears the parts down at the end.
 */
#include <string.h>

#include "runner.h"
#include "s3l/destination.h"
#include "s3l/input.h"
#include "s3l/s3.h"
#include "s3l/store.h"

/* ---- The run ------------------------------------------------------------------------------ */

int s3l__glue_run(const struct s3l_pipeline_options *opts, const char *url, const char *id,
                  struct s3l_input_position *pos, const int *fds, size_t n,
                  struct s3l_pipeline_stats *stats, enum s3l_pipeline_side *side,
                  struct s3l_error *err)
{
    struct s3l__glue g;
    memset(&g, 0, sizeof(g));
    g.o = opts;
    g.id = id;
    g.stats = stats;
    *side = S3L_SIDE_CONFIG;
    int rc =
        s3l_input_format_parse(opts->input_format ? opts->input_format : "ndjson", &g.fmt, err);
    if (rc == 0)
        rc = s3l_dest_table_path(opts->ns, opts->table, &g.tpath, err);
    if (rc == 0 && opts->schema && !(g.schema = s3l_schema_copy(opts->schema)))
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory copying the schema");
    if (rc)
        goto out;
    *side = S3L_SIDE_DESTINATION;
    struct s3l_store_options so = {0};
    so.version = S3L_STORE_OPTIONS_VERSION;
    so.create = true;
    so.endpoint = opts->endpoint;
    so.region = opts->region;
    struct s3l_s3_config s3c = {0};
    struct s3l_s3_store_options s3o = {0};
    if (opts->path_style) {
        s3c.version = S3L_S3_CONFIG_VERSION;
        s3c.path_style = opts->path_style;
        s3o.version = S3L_S3_STORE_OPTIONS_VERSION;
        s3o.client = &s3c;
        so.s3 = &s3o;
    }
    if (opts->sse || opts->sse_kms_key_id || opts->storage_class) { /* encryption, class */
        s3o.version = S3L_S3_STORE_OPTIONS_VERSION;
        s3o.sse = opts->sse;
        s3o.sse_kms_key_id = opts->sse_kms_key_id;
        s3o.storage_class = opts->storage_class;
        so.s3 = &s3o;
    }
    rc = s3l_store_open(url, &so, &g.store, err);
    if (rc)
        goto out;
    /* An id given by the caller is their decision; a derived one follows the inputs' paths. */
    if (!opts->pipeline_id &&
        (rc = s3l__check_landed_elsewhere(g.store, g.tpath, id, pos, fds, n, err)) != 0) {
        /* Only the refusal (an input another pipeline landed) is about the inputs; a failure
         * listing the markers or reading a checkpoint is the store's (missing bucket, wrong
         * secret, unreachable endpoint), and keeps its own exit code. */
        *side = rc == S3L_EINVALID_INPUT ? S3L_SIDE_INPUT : S3L_SIDE_DESTINATION;
        goto out;
    }
    struct s3l__runner_env env = {&s3l__glue_dest_ops, &g, s3l__glue_source_open, &g,
                                  s3l__now_ns, 0};
    rc = s3l__runner_loop(opts, &env, pos, fds, n, stats, side, err);
    stats->values_ignored = g.ignored;
    if (g.lanes)
        stats->values_ignored += s3l__lanes_ignored(g.lanes);
    else if (g.conv)
        stats->values_ignored += s3l_converter_ignored(g.conv);
    s3l__lanes_free(g.lanes); /* joins the workers before their sinks go away */
    g.lanes = NULL;
    if (rc && g.dest)
        s3l_dest_abort(g.dest);
out:
    s3l_converter_free(g.conv);
    s3l_free(g.sinks);
    s3l_dest_free(g.dest);
    s3l_store_free(g.store);
    s3l_schema_free(g.schema);
    s3l_schema_free(g.grown);
    s3l_free(g.tpath);
    return rc;
}
