/*
 * An object prefix as an input of the pipeline (`s3land write --table T s3://bucket/prefix/`,
 * or file:///dir/prefix/; issue 13, Build item 4's last sentence). The prefix is one input: its
 * objects are read in the object source's order (include/s3l/object_source.h), each through the
 * pipeline's own source (source.c: reader, sample, converter, spans, lanes) over the object
 * source's ranged GETs, and its position in the checkpoint is the object source's state: the
 * objects fully read and (key, ETag, offset, line) of the one in progress. So an epoch's commit
 * point records exactly which objects and how far, a rerun resumes mid-object by a ranged GET
 * after a HeadObject that proves the object unchanged, and an object is never landed twice.
 *
 * While the prefix is read, the runner's offset of it is (index of the object in this run's
 * order << S3L_OBJECT_INPUT_SHIFT) + the decompressed offset in that object, so it only grows;
 * s3l_positions_to_json turns it back into the state (s3l__object_input_json). The listing (the
 * object source) is made when the input is first opened and lives with its position
 * (object_ctx) for the run, so the commit after the last read still knows the keys.
 * docs/internals/pipeline.md "Object prefixes" has the rules.
 */
#include <string.h>

#include <jansson.h>

#include "runner.h"
#include "s3l/object_source.h"
#include "source/source.h"

#define OFFSET_MASK ((UINT64_C(1) << S3L_OBJECT_INPUT_SHIFT) - 1)
#define MAX_OBJECTS (UINT64_C(1) << (64 - S3L_OBJECT_INPUT_SHIFT - 1))

struct s3l__object_input {
    struct s3l_store *store;
    struct s3l_object_source *src;
    char *root; /* the store's canonical URL: an object's name is root/key */
};

void s3l__object_input_free(struct s3l__object_input *oi)
{
    if (!oi)
        return;
    s3l_object_source_free(oi->src);
    s3l__pipeline_store_free(oi->store);
    s3l_free(oi->root);
    s3l_free(oi);
}

bool s3l__object_input_is(const char *input)
{
    return strncmp(input, "s3://", 5) == 0 || strncmp(input, "file://", 7) == 0;
}

/* The store root and key prefix of a canonical input URL: root is up to its last '/'. */
static int split(const char *url, char **root, const char **prefix, struct s3l_error *err)
{
    const char *slash = strrchr(url, '/');
    size_t len = (size_t)(slash - url);
    if (!(*root = s3l_strndup(url, len)))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening %s", url);
    *prefix = slash + 1;
    return 0;
}

int s3l__object_input_position(const char *input, struct s3l_input_position *pos,
                               struct s3l_error *err)
{
    memset(pos, 0, sizeof(*pos));
    /* s3://bucket[/dir/]prefix, file:///dir/[prefix]: the store is rooted at the URL up to its
     * last '/' after the bucket (or the directory), the rest is a key prefix, matched as a
     * string (ListObjectsV2's Prefix): "logs/" and "logs/part-" both work. */
    const char *rest = input + (input[0] == 's' ? 5 : 7);
    const char *slash = strrchr(rest, '/');
    if (input[0] == 's' && !slash)
        slash = rest + strlen(rest); /* s3://bucket: every object of the bucket */
    if (!slash || slash == rest)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "input %s: expected s3://bucket/prefix or file:///dir/prefix (an "
                             "object prefix; a trailing '/' reads every object under the folder)",
                             input);
    char *root = s3l_strndup(input, (size_t)(slash - input)), *canon = NULL;
    if (!root)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening %s", input);
    const char *prefix = *slash ? slash + 1 : "";
    int rc = s3l_url_canonical(root, &canon, err);
    if (rc) {
        s3l_free(root);
        return s3l_error_prefix(err, "input %s", input);
    }
    size_t n = strlen(canon) + strlen(prefix) + 2;
    pos->path = s3l_malloc(n);
    if (pos->path)
        snprintf(pos->path, n, "%s/%s", canon, prefix);
    s3l_free(root);
    s3l_free(canon);
    if (!pos->path)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening %s", input);
    pos->replayable = true;
    pos->object = true;
    pos->line = 1;
    return 0;
}

int s3l__object_input_verify(const struct s3l_input_position *recorded,
                             const struct s3l_input_position *current, struct s3l_error *err)
{
    if (recorded->object && current->object) {
        if (strcmp(recorded->path, current->path) != 0)
            return s3l_error_set(err, S3L_EINVALID_INPUT, "input %s is not the prefix %s",
                                 current->path, recorded->path);
        return 0; /* its objects are proved by their ETags when the source opens */
    }
    return s3l_error_set(err, S3L_EINVALID_INPUT,
                         "input %s was recorded as %s and is now %s; refusing to guess where to "
                         "resume",
                         current->path, recorded->object ? "an object prefix" : "a file",
                         current->object ? "an object prefix" : "a file");
}

/* ---- The position in the checkpoint ---------------------------------------------------------- */

struct json_t *s3l__object_input_json(const struct s3l_input_position *p)
{
    char *text = NULL;
    size_t len = 0;
    uint64_t off = p->offset, line = p->line ? p->line : 1;
    if (p->object_ctx) {
        size_t k = (size_t)(p->offset >> S3L_OBJECT_INPUT_SHIFT);
        off = p->offset & OFFSET_MASK;
        struct s3l_error e = {0};
        if (s3l__object_source_state_at(p->object_ctx->src, k, off, line, &text, &len, &e))
            return NULL;
        if (off == 0 || k >= s3l_object_source_count(p->object_ctx->src))
            off = 0, line = 1;
    } else if (p->object_state && !(text = s3l_strdup(p->object_state))) {
        return NULL;
    }
    bool nomem = false;
    json_t *state = text ? s3l__json_loadb(text, strlen(text), 0, NULL, &nomem) : json_null();
    s3l_free(text);
    json_t *o = json_object();
    int bad = !state || !o;
    if (!bad) {
        bad |= json_object_set_new(o, "path", json_string(p->path));
        bad |= json_object_set_new(o, "replayable", json_true());
        bad |= json_object_set_new(o, "dev", json_integer(0));
        bad |= json_object_set_new(o, "ino", json_integer(0));
        bad |= json_object_set_new(o, "offset", json_integer((json_int_t)off));
        bad |= json_object_set_new(o, "sha256", json_string(""));
        bad |= json_object_set_new(o, "line", json_integer((json_int_t)line));
        bad |= json_object_set(o, "object_source", state);
    }
    json_decref(state);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int s3l__object_input_parse(struct json_t *o, size_t i, struct s3l_input_position *p,
                            struct s3l_error *err)
{
    json_t *path = json_object_get(o, "path"), *st = json_object_get(o, "object_source");
    json_t *off = json_object_get(o, "offset"), *line = json_object_get(o, "line");
    if (!json_is_string(path) || !(json_is_object(st) || json_is_null(st)) ||
        !json_is_integer(off) || json_integer_value(off) < 0 || !json_is_integer(line) ||
        json_integer_value(line) < 1)
        return s3l_error_set(err, S3L_ECORRUPT,
                             "checkpoint input %zu: an object prefix needs string \"path\", "
                             "integers \"offset\" >= 0 and \"line\" >= 1 and \"object_source\" "
                             "(an object source state, or null)",
                             i);
    p->object = true;
    p->replayable = true;
    p->offset = (uint64_t)json_integer_value(off);
    p->line = (uint64_t)json_integer_value(line);
    if (!(p->path = s3l_strdup(json_string_value(path))))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading the checkpoint");
    if (json_is_null(st))
        return p->offset == 0 ? 0
                              : s3l_error_set(err, S3L_ECORRUPT,
                                              "checkpoint input %zu (%s): \"offset\" %llu without "
                                              "an object source state",
                                              i, p->path, (unsigned long long)p->offset);
    char *text = s3l__json_dumps(st, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!text)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading the checkpoint");
    /* Taken whole or refused: the state is decoded here once, so a corrupt one stops the run
     * before anything is read. */
    struct s3l__source_state dec;
    int rc = s3l__source_state_decode(text, strlen(text), &dec, err);
    if (rc == 0) {
        if (dec.cur_key ? dec.cur_offset != p->offset : p->offset != 0)
            rc = s3l_error_set(err, S3L_ECORRUPT,
                               "checkpoint input %zu (%s): \"offset\" %llu is not the object "
                               "source state's",
                               i, p->path, (unsigned long long)p->offset);
        s3l__source_state_cleanup(&dec);
    } else {
        s3l_error_prefix(err, "checkpoint input %zu (%s)", i, p->path);
    }
    if (rc == 0 && !(p->object_state = s3l_strdup(text)))
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory reading the checkpoint");
    s3l_free(text);
    return rc;
}

/* ---- The source: the objects one after the other ----------------------------------------- */

struct osrc {
    struct s3l__source base;
    void *ctx; /* the run (struct s3l__run), for s3l__glue_source_open_io */
    size_t i;  /* the input */
    struct s3l_input_position *pos;
    struct s3l__object_input *oi;
    size_t k, n;                    /* the object read (k of n) */
    struct s3l__source *inner;      /* the pipeline's source over object k */
    struct s3l_input_position ipos; /* object k as its source sees it: path root/key */
    uint64_t off, line;             /* where object k is */
    uint64_t bytes;                 /* bytes of the objects before k */
    const volatile sig_atomic_t *stop;
};

static void close_inner(struct osrc *s)
{
    if (s->inner) {
        s->bytes += s->inner->ops->bytes(s->inner);
        s->inner->ops->free(s->inner);
        s->inner = NULL;
    }
    s3l_input_position_cleanup(&s->ipos);
}

static int open_inner(struct osrc *s, struct s3l_error *err)
{
    struct s3l__object_io io;
    int rc = s3l__object_source_select(s->oi->src, s->k, &io, err);
    if (rc)
        return rc;
    size_t n = strlen(s->oi->root) + strlen(io.key) + 2;
    if (!(s->ipos.path = s3l_malloc(n)))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening %s", io.key);
    snprintf(s->ipos.path, n, "%s/%s", s->oi->root, io.key);
    s->ipos.replayable = true;
    s->ipos.compression = (uint8_t)io.compression;
    s->ipos.offset = s->off = io.start_offset;
    s->ipos.line = s->line = io.start_line;
    struct s3l__source_io sio = {io.read, io.seek, io.ctx};
    return s3l__glue_source_open_io(s->ctx, s->i, &s->ipos, io.start_offset, &sio, &s->inner, err);
}

static uint64_t enc(size_t k, uint64_t off)
{
    return ((uint64_t)k << S3L_OBJECT_INPUT_SHIFT) + off;
}

static int on_next(struct s3l__source *base, unsigned lane, uint64_t max_rows,
                   uint64_t *offset_after, uint64_t *line_after, struct s3l_slice *raw,
                   enum s3l__source_signal *signal, struct s3l_error *err)
{
    struct osrc *s = (struct osrc *)base;
    for (;;) {
        if (s->k >= s->n) {
            *offset_after = enc(s->n, 0);
            *line_after = 1;
            *signal = S3L__SOURCE_END;
            return 0;
        }
        if (!s->inner) {
            if (s->stop && *s->stop) {
                /* Nothing new is opened after a stop request (the runner then stops). */
                *offset_after = enc(s->k, s->off);
                *line_after = s->line;
                *signal = S3L__SOURCE_IDLE;
                return 0;
            }
            int rc = open_inner(s, err);
            if (rc)
                return rc;
        }
        uint64_t off = s->off, line = s->line;
        *signal = S3L__SOURCE_END;
        int rc = s->inner->ops->next(s->inner, lane, max_rows, &off, &line, raw, signal, err);
        if (off > OFFSET_MASK)
            return s3l_error_set(err, S3L_ETOO_LARGE,
                                 "%s: over 1 TiB decompressed, which an object prefix's position "
                                 "cannot record",
                                 s->ipos.path);
        s->off = off;
        s->line = line;
        if (rc == 0 && *signal == S3L__SOURCE_END) {
            close_inner(s); /* object k read to its end: done */
            s->k++;
            s->off = 0;
            s->line = 1;
            continue;
        }
        *offset_after = enc(s->k, off);
        *line_after = line;
        return rc;
    }
}

static uint64_t on_bytes(struct s3l__source *base)
{
    struct osrc *s = (struct osrc *)base;
    return s->bytes + (s->inner ? s->inner->ops->bytes(s->inner) : 0);
}

static bool on_holds(struct s3l__source *base)
{
    struct osrc *s = (struct osrc *)base;
    return s->inner && s->inner->ops->holds && s->inner->ops->holds(s->inner);
}

static void on_free(struct s3l__source *base)
{
    struct osrc *s = (struct osrc *)base;
    close_inner(s);
    s3l_free(s);
}

static const struct s3l__source_ops object_ops = {on_next, on_bytes, on_free, on_holds};

/* The listing of the prefix, once per run: the store (the run's S3 options) and the source. */
static int open_listing(const struct s3l_pipeline_options *o, struct s3l_input_position *pos,
                        struct s3l_error *err)
{
    struct s3l__object_input *oi = s3l_calloc(1, sizeof(*oi));
    const char *prefix = NULL;
    if (!oi)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening %s", pos->path);
    int rc = split(pos->path, &oi->root, &prefix, err);
    if (rc == 0)
        rc = s3l__pipeline_store_open(o, oi->root, false, &oi->store, err);
    if (rc == 0) {
        struct s3l_object_source_options so = {0};
        so.version = S3L_OBJECT_SOURCE_OPTIONS_VERSION;
        so.store = oi->store;
        so.prefix = prefix;
        so.max_record_bytes = o->max_record_size;
        so.state = pos->object_state;
        so.state_len = pos->object_state ? strlen(pos->object_state) : 0;
        rc = s3l_object_source_open(&so, &oi->src, err);
    }
    if (rc == 0 && s3l_object_source_count(oi->src) >= MAX_OBJECTS)
        rc = s3l_error_set(err, S3L_ETOO_LARGE,
                           "input %s: %zu objects, over the %llu an "
                           "object prefix's position can record",
                           pos->path, s3l_object_source_count(oi->src),
                           (unsigned long long)MAX_OBJECTS);
    if (rc) {
        s3l__object_input_free(oi);
        return s3l_error_prefix(err, "input %s", pos->path);
    }
    pos->object_ctx = oi;
    return 0;
}

int s3l__object_input_open(void *ctx, size_t i, struct s3l_input_position *pos, uint64_t offset,
                           const struct s3l_pipeline_options *o, struct s3l__source **out,
                           struct s3l_error *err)
{
    if (!pos->object_ctx) {
        int rc = open_listing(o, pos, err);
        if (rc)
            return rc;
    }
    struct osrc *s = s3l_calloc(1, sizeof(*s));
    if (!s)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening %s", pos->path);
    s->base.ops = &object_ops;
    s->ctx = ctx;
    s->i = i;
    s->pos = pos;
    s->oi = pos->object_ctx;
    s->n = s3l_object_source_count(s->oi->src);
    s->k = (size_t)(offset >> S3L_OBJECT_INPUT_SHIFT); /* 0 at the run's first open */
    s->off = offset & OFFSET_MASK;
    s->line = pos->line ? pos->line : 1;
    s->stop = o->stop;
    *out = &s->base;
    return 0;
}
