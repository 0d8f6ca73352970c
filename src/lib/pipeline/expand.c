/*
 * The sources of a run: a Pipeline document's file lists expanded (globs and excludes) into
 * paths, and the per-source options the runner's parts read (each source's table, format,
 * schema and input settings over the run's own options). A run without sources (write) is one
 * source made of the run's table and inputs, so both go through the same runner.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "os/os.h"
#include "runner.h"

struct paths {
    char **v;
    size_t n, cap;
};

static int add_path(void *ctx, const char *path)
{
    struct paths *p = ctx;
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->v[i], path) == 0)
            return 0;
    if (s3l__array_reserve(&p->v, &p->cap, p->n + 1, sizeof(*p->v), 16))
        return S3L_ENOMEM;
    if (!(p->v[p->n] = s3l_strdup(path)))
        return S3L_ENOMEM;
    p->n++;
    return 0;
}

static bool has_glob(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

static bool excluded(const char *path, const char *const *exclude, size_t n_exclude)
{
    for (size_t i = 0; i < n_exclude; i++)
        if (fnmatch(exclude[i], path, FNM_PATHNAME) == 0)
            return true;
    return false;
}

void s3l_pipeline_paths_free(char **paths, size_t n)
{
    for (size_t i = 0; paths && i < n; i++)
        s3l_free(paths[i]);
    s3l_free(paths);
}

int s3l_pipeline_expand(const char *const *patterns, size_t n, const char *const *exclude,
                        size_t n_exclude, char ***out, size_t *n_out, struct s3l_error *err)
{
    struct paths all = {0}, kept = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        struct s3l__os_stat st;
        struct s3l_error tmp = {0};
        const char *p = patterns[i];
        if (strcmp(p, "-") == 0 || !has_glob(p) || s3l__os_stat(p, &st, &tmp) == 0) {
            /* A plain path (or one that exists although it has glob characters) is itself; a
             * missing one is left to opening, which names it. */
            rc = add_path(&all, p);
            continue;
        }
        rc = s3l__os_glob(p, add_path, &all, err);
    }
    for (size_t i = 0; rc == 0 && i < all.n; i++)
        if (!excluded(all.v[i], exclude, n_exclude))
            rc = add_path(&kept, all.v[i]);
    s3l_pipeline_paths_free(all.v, all.n);
    if (rc) {
        s3l_pipeline_paths_free(kept.v, kept.n);
        return err->code ? rc : s3l_error_set(err, rc, "out of memory expanding a file list");
    }
    *out = kept.v;
    *n_out = kept.n;
    return 0;
}

/* The options of one source: the run's, with the source's table, inputs and settings. */
static void source_options(const struct s3l_pipeline_options *run,
                           const struct s3l_pipeline_source *src, struct s3l_pipeline_options *o)
{
    *o = *run;
    o->sources = NULL;
    o->n_sources = 0;
    o->table = src->table;
    o->source_name = src->name;
    o->kind = src->kind;
    if (src->ns)
        o->ns = src->ns;
    if (src->csv_delimiter)
        o->csv_delimiter = src->csv_delimiter;
    o->inputs = src->inputs;
    o->n_inputs = src->n_inputs;
    o->schema = src->schema;
    if (src->input_format)
        o->input_format = src->input_format;
    o->bad_records = src->bad_records;
    if (src->max_record_size)
        o->max_record_size = src->max_record_size;
    if (src->infer_rows)
        o->infer_rows = src->infer_rows;
    o->nested_as_json = src->nested_as_json;
    o->follow = src->follow;
    o->missing_skip = src->missing_skip;
    o->patterns = src->patterns;
    o->n_patterns = src->n_patterns;
    o->exclude = src->exclude;
    o->n_exclude = src->n_exclude;
    if (src->timestamp_unit != S3L_UNIT_SECOND)
        o->timestamp_unit = src->timestamp_unit;
}

int s3l__run_sources(const struct s3l_pipeline_options *opts,
                     struct s3l_pipeline_options **src_opts, size_t *n_src,
                     const char ***inputs, size_t **input_src, size_t *n_inputs,
                     struct s3l_error *err)
{
    size_t ns = opts->n_sources ? opts->n_sources : 1, ni = 0;
    for (size_t s = 0; s < opts->n_sources; s++)
        ni += opts->sources[s].n_inputs;
    if (!opts->n_sources)
        ni = opts->n_inputs;
    *src_opts = s3l_calloc(ns, sizeof(**src_opts));
    *inputs = s3l_calloc(ni ? ni : 1, sizeof(**inputs));
    *input_src = s3l_calloc(ni ? ni : 1, sizeof(**input_src));
    if (!*src_opts || !*inputs || !*input_src) {
        s3l_free(*src_opts);
        s3l_free(*inputs);
        s3l_free(*input_src);
        *src_opts = NULL;
        *inputs = NULL;
        *input_src = NULL;
        return s3l_error_set(err, S3L_ENOMEM, "out of memory starting the pipeline");
    }
    size_t k = 0;
    for (size_t s = 0; s < ns; s++) {
        struct s3l_pipeline_options *o = &(*src_opts)[s];
        if (opts->n_sources)
            source_options(opts, &opts->sources[s], o);
        else
            *o = *opts;
        for (size_t i = 0; i < o->n_inputs; i++) {
            (*inputs)[k] = o->inputs[i];
            (*input_src)[k++] = s;
        }
    }
    *n_src = ns;
    *n_inputs = ni;
    return 0;
}
