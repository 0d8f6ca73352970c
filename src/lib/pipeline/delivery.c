/*
 * The delivery gate (issue 12, item 5): every source kind declares what it can deliver
 * (its capability record: name, delivery, needs), and a run that requires more than its weakest
 * source delivers is refused at start, before any data moves, naming the source, its kind and
 * level, and the setting that would accept it. Files are replayed by byte offset from the
 * committed position (exactly once, docs/design.md section 3); stdin and pipes cannot be
 * replayed (at most once); a source that may send rows again after a restart is at least once.
 */
#include <string.h>

#include "runner.h"

static const struct s3l_source_kind builtin[] = {
    {"files", S3L_DELIVERY_EXACTLY_ONCE,
     "regular files, read from the byte offset the last commit recorded (not rewritten or "
     "truncated in place)", NULL},
    {"stdin", S3L_DELIVERY_AT_MOST_ONCE,
     "nothing it can replay: rows read after the last commit are lost on a crash (resend from "
     "the printed committed offset with --stdin-offset)", NULL},
    {"pipe", S3L_DELIVERY_AT_MOST_ONCE,
     "nothing it can replay: a FIFO or device read as a stream, as stdin", NULL},
    {"s3_ndjson_source", S3L_DELIVERY_EXACTLY_ONCE,
     "s3:ListBucket, s3:GetObject: NDJSON objects under a prefix, resumed from the checkpoint's "
     "object, ETag and byte offset (include/s3l/object_source.h)", NULL},
};
#define N_BUILTIN (sizeof(builtin) / sizeof(builtin[0]))
#define MAX_REGISTERED 16

static const struct s3l_source_kind *registered[MAX_REGISTERED];
static size_t n_registered;

const char *s3l_delivery_name(enum s3l_delivery d)
{
    switch (d) {
    case S3L_DELIVERY_AT_MOST_ONCE:
        return "at_most_once";
    case S3L_DELIVERY_AT_LEAST_ONCE:
        return "at_least_once";
    case S3L_DELIVERY_EXACTLY_ONCE:
        return "exactly_once";
    default:
        return "none";
    }
}

enum s3l_delivery s3l_delivery_parse(const char *name)
{
    for (int d = S3L_DELIVERY_AT_MOST_ONCE; name && d <= S3L_DELIVERY_EXACTLY_ONCE; d++)
        if (strcmp(name, s3l_delivery_name((enum s3l_delivery)d)) == 0)
            return (enum s3l_delivery)d;
    return S3L_DELIVERY_NONE;
}

int s3l_source_kinds(int (*cb)(void *ctx, const struct s3l_source_kind *kind), void *ctx)
{
    for (size_t i = 0; i < N_BUILTIN; i++) {
        int rc = cb(ctx, &builtin[i]);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < n_registered; i++) {
        int rc = cb(ctx, registered[i]);
        if (rc)
            return rc;
    }
    return 0;
}

const struct s3l_source_kind *s3l_source_kind_find(const char *name)
{
    for (size_t i = 0; name && i < N_BUILTIN; i++)
        if (strcmp(builtin[i].name, name) == 0)
            return &builtin[i];
    for (size_t i = 0; name && i < n_registered; i++)
        if (strcmp(registered[i]->name, name) == 0)
            return registered[i];
    return NULL;
}

int s3l_source_kind_register(const struct s3l_source_kind *kind)
{
    if (!kind || !kind->name || s3l_source_kind_find(kind->name))
        return S3L_EEXISTS;
    if (n_registered == MAX_REGISTERED)
        return S3L_ENOMEM;
    registered[n_registered++] = kind;
    return 0;
}

/* The kind of input i of a source: the source's own, else by what the input is. */
static const struct s3l_source_kind *kind_of(const struct s3l_pipeline_options *src,
                                             const struct s3l_input_position *pos)
{
    if (src->kind)
        return s3l_source_kind_find(src->kind);
    if (pos->replayable)
        return &builtin[0];
    return strcmp(pos->path, "-") == 0 ? &builtin[1] : &builtin[2];
}

int s3l__delivery_gate(const struct s3l_pipeline_options *opts,
                       const struct s3l__run_plan *plan, const struct s3l_input_position *pos,
                       size_t n, struct s3l_error *err)
{
    for (size_t s = 0; s < plan->n_src; s++)
        if (plan->src[s].kind && !s3l_source_kind_find(plan->src[s].kind))
            return s3l_error_set(err, S3L_EINVALID_CONFIG, "source %s: unknown source kind %s",
                                 plan->src[s].source_name ? plan->src[s].source_name : "",
                                 plan->src[s].kind);
    for (size_t s = 0; s < plan->n_src; s++) {
        const struct s3l_source_kind *k = s3l__ident_kind(&plan->src[s]);
        if (k && (!k->position_fields || !k->position_fields[0]))
            return s3l_error_set(err, S3L_EINVALID_CONFIG,
                                 "source %s: kind %s is at_least_once but names no position "
                                 "fields, so a record sent again cannot get the same "
                                 "_openetl_id (struct s3l_source_kind.position_fields)",
                                 plan->src[s].source_name ? plan->src[s].source_name : "",
                                 k->name);
    }
    if (opts->delivery_require == S3L_DELIVERY_NONE)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const struct s3l_pipeline_options *src = &plan->src[plan->input_src[i]];
        const struct s3l_source_kind *k = kind_of(src, &pos[i]);
        if (k->delivery >= opts->delivery_require)
            continue;
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "source %s (table %s, input %s) is %s (%s: %s), weaker than the "
                             "pipeline requires (%s); refused before any data moves. To accept "
                             "it, set delivery: { require: %s } in the Pipeline's spec",
                             src->source_name ? src->source_name : src->table, src->table,
                             pos[i].path, s3l_delivery_name(k->delivery), k->name, k->needs,
                             s3l_delivery_name(opts->delivery_require),
                             s3l_delivery_name(k->delivery));
    }
    return 0;
}
