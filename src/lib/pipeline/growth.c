/*
 * The runner's schema growth: the schema an inferred run starts with, and the moment it grows.
 * The schema is inferred from the first records of the first input that has any (the source
 * side samples them), fitted to the table's schema record (schema/compat.c: recorded columns
 * keep their types where the values fit, so a column null in the whole sample keeps its recorded
 * type). A column that was null in the whole sample, and a key first seen after it, wait for
 * their first typed value: the record that brings one grows the schema here; the source holds
 * it and asks the runner for a barrier, the runner commits the epoch before it and asks the
 * table side to grow (table.c), and the record is converted under the grown schema. Never a
 * guessed type.
 */
#include <string.h>

#include "runner.h"
#include "schema/schema_int.h"

/* Lays the declared types of hint over the inferred schema s (see runner.h). 0 or S3L_ENOMEM. */
static int apply_hint(struct s3l_schema *s, const struct s3l_schema *hint)
{
    for (size_t i = 0; hint && i < hint->n_fields; i++) {
        const struct s3l_field *h = &hint->fields[i];
        int at = s3l_schema_find(s, h->name, strlen(h->name));
        if (at < 0) {
            if (s3l__schema_add_field(s, h, NULL) != 0)
                return S3L_ENOMEM;
            continue;
        }
        struct s3l_type t;
        if (s3l__type_copy(&t, &h->type) != 0)
            return S3L_ENOMEM;
        s3l__type_cleanup(&s->fields[at].type);
        s->fields[at].type = t;
    }
    return 0;
}

/* The _openetl_id column of at_least_once rows, uuid (ident.c), laid over s. 0 or S3L_ENOMEM. */
static int ident_hint(struct s3l_schema *s, const char *table)
{
    struct s3l_schema *h = s3l_schema_new();
    struct s3l_error e = {0};
    int rc = h ? s3l__ident_schema(h, table, &e) : S3L_ENOMEM;
    if (rc == 0)
        rc = apply_hint(s, h);
    s3l_schema_free(h);
    return rc;
}

int s3l__glue_sample_schema(struct s3l__glue *g, struct s3l_infer *inf,
                            const struct s3l_schema *hint, struct s3l_error *err)
{
    struct s3l_schema *inferred = NULL, *rec = NULL;
    int rc = s3l_infer_schema(inf, &inferred);
    if (rc == 0)
        rc = apply_hint(inferred, hint);
    if (rc == 0 && s3l__ident_kind(g->o)) /* at_least_once rows (all of the table's, pipeline.c) */
        rc = ident_hint(inferred, g->tpath);
    if (rc) {
        s3l_schema_free(inferred);
        return s3l_error_set(err, rc, "out of memory inferring the schema of %s", g->tpath);
    }

    rc = s3l__glue_read_record(g, &rec, err);
    if (rc == 0 && rec) {
        rc = s3l__schema_fit_sample(rec, inferred, g->fmt == S3L_INPUT_CSV, err);
        s3l_schema_free(inferred);
        inferred = rec;
    }
    if (rc) {
        s3l_schema_free(inferred);
        return rc;
    }
    g->schema = inferred;
    g->grow = true;
    return 0;
}

int s3l__glue_schema_from_record(struct s3l__glue *g, bool *found, struct s3l_error *err)
{
    struct s3l_schema *rec = NULL;
    *found = false;
    int rc = s3l__glue_read_record(g, &rec, err);
    if (rc || !rec)
        return rc;
    *found = true;
    g->schema = rec;
    if (s3l__ident_kind(g->o) && (rc = s3l__ident_schema(rec, g->tpath, err)) != 0)
        return rc; /* a record of before, without the ids' column, grows by it here */
    g->grow = true;
    return s3l__glue_open_stream(g, err);
}

int s3l__glue_check_growth(struct s3l__glue *g, const struct s3l_record *rec,
                           struct s3l_error *err)
{
    if (!g->grow || !g->stream)
        return 0;
    /* A copy of the schema grown by the keys of rec that it lacks and whose value has a type (a
     * null, an empty array or an object of nulls says nothing yet), top-level or nested in a
     * struct, or NULL when there are none. */
    struct s3l_infer_options io = {S3L_INFER_OPTIONS_VERSION, g->o->nested_as_json,
                                   g->o->timestamp_unit};
    s3l_schema_free(g->grown);
    g->grown = NULL;
    if (s3l_infer_grow(g->schema, rec, &io, &g->grown, NULL) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory growing the schema of %s", g->tpath);
    return g->grown != NULL;
}
