/*
 * A run of the pipeline over the real parts: opens the store, checks that no other pipeline
 * landed these inputs already, and runs the runner's loop (runner.c) with the table side
 * (table.c) as its destination and a source per input (source.c), the schema declared or
 * inferred and grown (growth.c). Tears the parts down at the end.
 */
#include <string.h>

#include "commit/commit.h"
#include "runner.h"
#include "s3l/destination.h"
#include "s3l/input.h"

/* ---- The run ------------------------------------------------------------------------------ */

/* Opens a store of the run with the run's access options (commit/access.c). */
int s3l__pipeline_store_open(const struct s3l_pipeline_options *opts, const char *url,
                             bool create, struct s3l_store **out, struct s3l_error *err)
{
    const struct s3l__store_access a = {opts->endpoint,    opts->region,      opts->path_style,
                                        opts->s3,          opts->credentials, opts->sse,
                                        opts->sse_kms_key_id, opts->storage_class};
    return s3l__store_access_open(&a, url, create, out, err);
}

void s3l__pipeline_store_free(struct s3l_store *store)
{
    s3l__store_access_free(store);
}

static int open_store(struct s3l__run *r, const char *url, struct s3l_error *err)
{
    return s3l__pipeline_store_open(r->o, url, true, &r->store, err);
}

/* Sets up table k of the run for the source options o. */
static int table_init(struct s3l__run *r, size_t k, const struct s3l_pipeline_options *o,
                      struct s3l_error *err)
{
    struct s3l__glue *g = &r->tables[k];
    g->o = o;
    g->run = r;
    g->stats = r->stats;
    int rc = s3l_input_format_parse(o->input_format ? o->input_format : "ndjson", &g->fmt, err);
    if (rc == 0)
        rc = s3l_dest_table_path(o->ns, o->table, &g->tpath, err);
    if (rc == 0 && o->schema && !(g->schema = s3l_schema_copy(o->schema)))
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory copying the schema");
    /* An at_least_once source's rows carry _openetl_id (ident.c): the declared schema gets the
     * column, or must declare it uuid. */
    if (rc == 0 && g->schema && s3l__ident_kind(o))
        rc = s3l__ident_schema(g->schema, g->tpath, err);
    return rc;
}

/* Refuses inputs another pipeline landed in the same table (landed.c), table by table. */
static int check_landed(struct s3l__run *r, const struct s3l_input_position *pos, const int *fds,
                        size_t n, struct s3l_error *err)
{
    int rc = 0;
    s3l__glue_read_ahead(r, pos, n); /* the listings below and the open's checkpoint at once */
    for (size_t i = 0; rc == 0 && i < n;) {
        size_t k = r->input_table[i], j = i;
        while (j < n && r->input_table[j] == k)
            j++;
        rc = s3l__check_landed_elsewhere(r->store, r->tables[k].tpath, r->id, pos + i, fds + i,
                                         j - i, err);
        i = j;
    }
    return rc;
}

/* The values ignored by every table's converters, and the tables' parts freed. */
static void tables_free(struct s3l__run *r)
{
    for (size_t k = 0; r->tables && k < r->n_tables; k++) {
        struct s3l__glue *g = &r->tables[k];
        r->stats->values_ignored += g->ignored;
        if (g->lanes)
            r->stats->values_ignored += s3l__lanes_ignored(g->lanes);
        else if (g->conv)
            r->stats->values_ignored += s3l_converter_ignored(g->conv);
        s3l__lanes_free(g->lanes); /* joins the workers before their sinks go away */
        g->lanes = NULL;
    }
}

/* Follow mode: input i (the next one) was added and belongs to source src, which feeds table
 * plan->src_table[src] (s3l__runner_env.input_added). S3L_ENOMEM. */
static int input_added(void *ctx, size_t i, size_t src, struct s3l_error *err)
{
    struct s3l__run *r = ctx;
    size_t *v = s3l_realloc(r->input_table, (i + 1) * sizeof(*v));
    if (!v)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory adding an input");
    r->input_table = v;
    const struct s3l_pipeline_options **o = s3l_realloc(r->input_opts, (i + 1) * sizeof(*o));
    if (!o)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory adding an input");
    r->input_opts = o;
    v[i] = r->plan->src_table[src];
    o[i] = &r->plan->src[src];
    r->n_inputs = i + 1;
    return 0;
}

int s3l__glue_run(const struct s3l_pipeline_options *opts, const struct s3l__run_plan *plan,
                  const char *url, const char *id, struct s3l_input_position *pos, const int *fds,
                  size_t n, struct s3l_pipeline_stats *stats, enum s3l_pipeline_side *side,
                  struct s3l_error *err)
{
    struct s3l__run r;
    memset(&r, 0, sizeof(r));
    r.o = opts;
    r.id = id;
    r.stats = stats;
    r.n_tables = plan->n_tables;
    r.n_inputs = n;
    r.plan = plan;
    *side = S3L_SIDE_CONFIG;
    const struct s3l_pipeline_options **iopts = s3l_calloc(n ? n : 1, sizeof(*iopts));
    r.tables = s3l_calloc(r.n_tables, sizeof(*r.tables));
    r.input_table = s3l_calloc(n ? n : 1, sizeof(*r.input_table));
    int rc = iopts && r.tables && r.input_table ? 0
                                                : s3l_error_set(err, S3L_ENOMEM, "out of memory");
    if (rc == 0)
        memcpy(r.input_table, plan->input_table, n * sizeof(*r.input_table));
    for (size_t k = 0; rc == 0 && k < r.n_tables; k++)
        rc = table_init(&r, k, &plan->src[plan->table_src[k]], err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        iopts[i] = &plan->src[plan->input_src[i]];
    r.input_opts = iopts;
    if (rc == 0) {
        *side = S3L_SIDE_DESTINATION;
        rc = open_store(&r, url, err);
    }
    for (size_t k = 0; rc == 0 && k < r.n_tables; k++)
        r.tables[k].store = r.store;
    /* An id given by the caller is their decision; a derived one follows the inputs' paths. */
    if (rc == 0 && !opts->pipeline_id && (rc = check_landed(&r, pos, fds, n, err)) != 0) {
        /* Only the refusal (an input another pipeline landed) is about the inputs; a failure
         * listing the markers or reading a checkpoint is the store's (missing bucket, wrong
         * secret, unreachable endpoint), and keeps its own exit code. */
        *side = rc == S3L_EINVALID_INPUT ? S3L_SIDE_INPUT : S3L_SIDE_DESTINATION;
    }
    if (rc == 0) {
        struct s3l__runner_env env = {&s3l__glue_dest_ops, &r, s3l__glue_source_open, &r,
                                      s3l__now_ns, 0, iopts, plan->input_table, plan->n_tables,
                                      plan->src, plan->n_src, plan->src_table, input_added};
        rc = s3l__runner_loop(opts, &env, pos, fds, n, stats, side, err);
        tables_free(&r);
        if (rc && r.dest)
            s3l_dest_abort(r.dest);
    }
    for (size_t k = 0; r.tables && k < r.n_tables; k++) {
        struct s3l__glue *g = &r.tables[k];
        s3l__lanes_free(g->lanes);
        s3l_converter_free(g->conv);
        s3l_free(g->sinks);
        s3l_schema_free(g->schema);
        s3l_schema_free(g->grown);
        s3l_free(g->tpath);
    }
    s3l_dest_free(r.dest);
    if (r.store)
        s3l__store_access_counts(r.store, &stats->requests); /* the abort's deletes included */
    s3l__store_access_free(r.store);
    s3l_free(r.tables);
    s3l_free(r.input_table);
    s3l_free(r.input_opts); /* iopts, grown by input_added in follow mode */
    return rc;
}
