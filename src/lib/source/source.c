/*
 * The object source (include/s3l/object_source.h): the objects under a prefix, listed once at
 * open, ordered (order.c), each read through an NDJSON reader of the input module whose bytes
 * come from ranged GetObjects of chunk_bytes (the reader's read function below), so memory is
 * a chunk and the reader's buffer whatever the object's size. A resumed object is read from its
 * recorded offset by a ranged GET (the reader's seek), after a HeadObject that proves it is the
 * object the checkpoint saw (same ETag); a compressed one is decompressed from its start and the
 * bytes before the offset dropped (input/unpack.c), which costs a re-read of its compressed
 * prefix. Every GET's ETag must be the object's first one, so an object replaced while it is
 * read stops the source instead of mixing two versions.
 */
#include <stdlib.h>
#include <string.h>

#include "input/input.h"
#include "source/source.h"
#include "util/util.h"

struct object {
    char *key;
    uint64_t size;
    char etag[132]; /* its first GET's ETag (or the state's, resuming); "" before */
};

struct s3l_object_source {
    struct s3l_store *store;
    size_t chunk;
    size_t max_record;
    struct object *objs; /* to read, in order */
    size_t n_objs;
    size_t next_obj;     /* index of the object open (or to open next) */
    char **done;         /* keys fully read: the state's done plus those read since */
    size_t n_done, cap_done;
    /* the object open */
    struct s3l_reader *reader;
    struct object *cur;
    char etag[132];      /* ETag of the first GET (or the state's, resuming) */
    uint64_t pos;        /* next raw byte to GET */
    uint8_t *chunk_data; /* the last GET's bytes (s3l_free) */
    size_t chunk_len, chunk_off;
    uint64_t resume_offset, resume_line; /* where the state left the object open first */
    int failed;          /* a failure after which nothing can be read: returned again */
    struct s3l_error failure;
};

static int nomem(struct s3l_error *err)
{
    return s3l_error_set(err, S3L_ENOMEM, "out of memory in the object source");
}

struct listing {
    struct object *objs;
    size_t n, cap;
    int failed;
};

static int collect(void *ctx, const struct s3l_object_info *info)
{
    struct listing *l = ctx;
    if (!s3l_object_key_readable(info->key))
        return 0;
    if (s3l__array_reserve(&l->objs, &l->cap, l->n + 1, sizeof(*l->objs), 64))
        return l->failed = S3L_ENOMEM;
    if (!(l->objs[l->n].key = s3l_strdup(info->key)))
        return l->failed = S3L_ENOMEM;
    l->objs[l->n].etag[0] = 0;
    l->objs[l->n++].size = info->size;
    return 0;
}

static int by_order(const void *a, const void *b)
{
    return s3l_object_key_compare(((const struct object *)a)->key,
                                  ((const struct object *)b)->key);
}

static int add_done(struct s3l_object_source *s, const char *key)
{
    if (s3l__array_reserve(&s->done, &s->cap_done, s->n_done + 1, sizeof(*s->done), 64))
        return S3L_ENOMEM;
    if (!(s->done[s->n_done] = s3l_strdup(key)))
        return S3L_ENOMEM;
    s->n_done++;
    return 0;
}

/* The listing minus what the state records as done, ordered; the state's done keys are kept
 * (also those no longer listed: a state never forgets an object it read). */
static int plan(struct s3l_object_source *s, struct listing *l, struct s3l__source_state *st)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (s3l__source_state_done(st, l->objs[i].key))
            s3l_free(l->objs[i].key);
        else
            l->objs[k++] = l->objs[i];
    }
    l->n = k;
    if (l->n > 1)
        qsort(l->objs, l->n, sizeof(*l->objs), by_order);
    s->objs = l->objs;
    s->n_objs = l->n;
    l->objs = NULL;
    for (size_t i = 0; i < st->n_done; i++)
        if (add_done(s, st->done[i]))
            return S3L_ENOMEM;
    return 0;
}

/* The object the state left open: listed (else it is gone), the first one, and the same
 * version (HeadObject's ETag), so that it is resumed and never read again from its start. */
static int check_current(struct s3l_object_source *s, const struct s3l__source_state *st,
                         struct s3l_error *err)
{
    size_t i = 0;
    while (i < s->n_objs && strcmp(s->objs[i].key, st->cur_key) != 0)
        i++;
    if (i == s->n_objs)
        return s3l_error_set(err, S3L_ECONFLICT,
                             "object %s, read up to byte offset %llu at the checkpoint, is gone: "
                             "its remaining lines cannot be read (resume from a new state to "
                             "go on without them)",
                             st->cur_key, (unsigned long long)st->cur_offset);
    struct s3l_object_info info = {0};
    int rc = s3l_store_stat(s->store, st->cur_key, &info, err);
    if (rc)
        return rc;
    if (strcmp(info.etag, st->cur_etag) != 0)
        return s3l_error_set(err, S3L_ECONFLICT,
                             "object %s was replaced since the checkpoint (ETag %s, was %s at "
                             "byte offset %llu): it is not read again; remove it, or put the new "
                             "version under a new key",
                             st->cur_key, info.etag, st->cur_etag,
                             (unsigned long long)st->cur_offset);
    /* The object in progress comes first, whatever the order says of it now. */
    struct object cur = s->objs[i];
    memmove(s->objs + 1, s->objs, i * sizeof(*s->objs));
    s->objs[0] = cur;
    memcpy(s->etag, st->cur_etag, sizeof(s->etag));
    memcpy(s->objs[0].etag, st->cur_etag, sizeof(s->objs[0].etag));
    s->resume_offset = st->cur_offset;
    s->resume_line = st->cur_line;
    return 0;
}

int s3l_object_source_open(const struct s3l_object_source_options *o,
                           struct s3l_object_source **out, struct s3l_error *err)
{
    if (!o || o->version != S3L_OBJECT_SOURCE_OPTIONS_VERSION || !o->store)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "object source: options need version %d and a store",
                             S3L_OBJECT_SOURCE_OPTIONS_VERSION);
    if (o->chunk_bytes && o->chunk_bytes < S3L_OBJECT_SOURCE_CHUNK_MIN)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "object source: chunk_bytes %zu is under the minimum, %u bytes",
                             o->chunk_bytes, S3L_OBJECT_SOURCE_CHUNK_MIN);
    struct s3l__source_state st = {0};
    int rc = o->state ? s3l__source_state_decode(o->state, o->state_len, &st, err) : 0;
    if (rc)
        return rc;
    struct s3l_object_source *s = s3l_calloc(1, sizeof(*s));
    if (!s) {
        s3l__source_state_cleanup(&st);
        return nomem(err);
    }
    s->store = o->store;
    s->chunk = o->chunk_bytes ? o->chunk_bytes : S3L_OBJECT_SOURCE_CHUNK_DEFAULT;
    s->max_record = o->max_record_bytes ? o->max_record_bytes : S3L_DEFAULT_MAX_RECORD_BYTES;
    struct listing l = {0};
    rc = s3l_store_list(o->store, o->prefix ? o->prefix : "", collect, &l, err);
    if (rc == S3L_ENOMEM || l.failed)
        rc = nomem(err);
    if (rc == 0)
        rc = plan(s, &l, &st) ? nomem(err) : 0;
    if (rc == 0 && st.cur_key)
        rc = check_current(s, &st, err);
    for (size_t i = 0; i < l.n && l.objs; i++)
        s3l_free(l.objs[i].key);
    s3l_free(l.objs);
    s3l__source_state_cleanup(&st);
    if (rc) {
        s3l_object_source_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* ---- the bytes of the object open: ranged GETs ------------------------------------------- */

static int get_chunk(struct s3l_object_source *s, struct s3l_error *err)
{
    uint64_t left = s->cur->size - s->pos;
    size_t n = (size_t)S3L_MIN((uint64_t)s->chunk, left);
    struct s3l_object_info info = {0};
    uint8_t *data = NULL;
    size_t got = 0;
    int rc = s3l_store_get(s->store, s->cur->key, s->pos, n, n, &data, &got, &info, err);
    if (rc == S3L_ENOT_FOUND)
        return s3l_error_prefix(err, "object %s went away while it was read", s->cur->key);
    if (rc)
        return rc;
    if (s->etag[0] == 0) {
        memcpy(s->etag, info.etag, sizeof(s->etag));
        memcpy(s->cur->etag, info.etag, sizeof(s->cur->etag));
    }
    if (strcmp(info.etag, s->etag) != 0 || (got == 0 && n > 0)) {
        s3l_free(data);
        return s3l_error_set(err, S3L_ECONFLICT,
                             "object %s was replaced while it was read (ETag %s, was %s, at byte "
                             "offset %llu): its lines are not mixed with another version's",
                             s->cur->key, info.etag, s->etag, (unsigned long long)s->pos);
    }
    s3l_free(s->chunk_data);
    s->chunk_data = data;
    s->chunk_len = got;
    s->chunk_off = 0;
    s->pos += got;
    return 0;
}

static int obj_read(void *ctx, void *dst, size_t want, size_t *got, struct s3l_error *err)
{
    struct s3l_object_source *s = ctx;
    *got = 0;
    if (s->chunk_off == s->chunk_len) {
        if (s->pos >= s->cur->size)
            return 0; /* the listed size read: the end */
        int rc = get_chunk(s, err);
        if (rc)
            return rc;
    }
    size_t n = S3L_MIN(want, s->chunk_len - s->chunk_off);
    memcpy(dst, s->chunk_data + s->chunk_off, n);
    s->chunk_off += n;
    *got = n;
    return 0;
}

static int obj_seek(void *ctx, uint64_t offset, struct s3l_error *err)
{
    struct s3l_object_source *s = ctx;
    if (offset > s->cur->size)
        return s3l_error_set(err, S3L_ECONFLICT,
                             "object %s is %llu bytes, shorter than the checkpoint's offset %llu",
                             s->cur->key, (unsigned long long)s->cur->size,
                             (unsigned long long)offset);
    s->pos = offset;
    return 0;
}

static void close_object(struct s3l_object_source *s)
{
    s3l_reader_free(s->reader);
    s->reader = NULL;
    s3l_free(s->chunk_data);
    s->chunk_data = NULL;
    s->chunk_len = s->chunk_off = 0;
    s->cur = NULL;
}

static int open_object(struct s3l_object_source *s, struct s3l_error *err)
{
    s->cur = &s->objs[s->next_obj];
    s->pos = 0;
    bool resumed = s->next_obj == 0 && s->resume_line > 0;
    if (!resumed)
        s->etag[0] = 0; /* the first GET's ETag is the object's */
    struct s3l_reader_options ro = {
        .version = S3L_READER_OPTIONS_VERSION,
        .format = S3L_INPUT_NDJSON,
        .name = s->cur->key,
        .max_record_bytes = s->max_record,
        .block_bytes = S3L_MIN(s->chunk, (size_t)S3L_DEFAULT_BLOCK_BYTES),
        .start_offset = resumed ? s->resume_offset : 0,
        .start_line = resumed ? s->resume_line : 0,
        .compression = s3l__input_compression_of(s->cur->key),
        .read = obj_read,
        .seek = obj_seek,
        .io_ctx = s,
    };
    int rc = s3l_reader_open(-1, &ro, &s->reader, err);
    if (rc)
        close_object(s);
    return rc;
}

static int next_line(struct s3l_object_source *s, struct s3l_object_line *out,
                     struct s3l_error *err)
{
    while (s->next_obj < s->n_objs) {
        int rc = s->reader ? 0 : open_object(s, err);
        if (rc)
            return rc;
        struct s3l_record rec;
        rc = s3l__reader_next_raw(s->reader, &rec, err);
        if (rc == 1) {
            out->data = rec.raw;
            out->len = rec.raw_len;
            out->key = s->cur->key;
            out->line = rec.line;
            out->offset = rec.offset;
            out->end_offset = rec.end_offset;
            return 1;
        }
        if (rc < 0)
            return rc;
        if (add_done(s, s->cur->key))
            return nomem(err);
        close_object(s);
        s->next_obj++;
    }
    return 0;
}

int s3l_object_source_next(struct s3l_object_source *s, struct s3l_object_line *out,
                           struct s3l_error *err)
{
    memset(out, 0, sizeof(*out));
    if (s->failed) {
        if (err && !err->code)
            *err = s->failure;
        return s->failed;
    }
    int rc = next_line(s, out, err);
    if (rc < 0 && !(rc == S3L_EINVALID_INPUT && s->reader && !s3l_reader_broken(s->reader))) {
        /* Only a line over max_record_bytes is skipped by the next call; after anything else
         * (corrupt compressed data, a store failure, a replaced object) the source stops. */
        s->failed = rc;
        if (err)
            s->failure = *err;
        else
            s3l_error_set(&s->failure, rc, "object source: %s", s3l_strerror(rc));
    }
    return rc;
}

bool s3l_object_source_failed(const struct s3l_object_source *s)
{
    return s->failed != 0;
}

int s3l_object_source_state(const struct s3l_object_source *s, char **json, size_t *len,
                            struct s3l_error *err)
{
    const char *key = NULL;
    uint64_t off = 0, line = 1;
    if (s->reader && s->etag[0]) {
        /* (An object open before its first GET has no ETag yet and nothing consumed: it is
         * not in progress.) */
        key = s->cur->key;
        off = s3l_reader_offset(s->reader);
        line = s3l_reader_line(s->reader);
    } else if (s->next_obj == 0 && s->n_objs > 0 && s->resume_line > 0) {
        key = s->objs[0].key; /* resumed, nothing read yet: the state as it was given */
        off = s->resume_offset;
        line = s->resume_line;
    }
    return s3l__source_state_encode((const char *const *)s->done, s->n_done, key, s->etag, off,
                                    line, json, len, err);
}

/* ---- the bytes of one object, for another reader (the pipeline's object input) ---------- */

int s3l__object_source_select(struct s3l_object_source *s, size_t k, struct s3l__object_io *io,
                              struct s3l_error *err)
{
    if (k >= s->n_objs || s->failed)
        return s3l_error_set(err, S3L_EINTERNAL, "object source: object %zu of %zu selected", k,
                             s->n_objs);
    close_object(s);
    s->next_obj = k;
    s->cur = &s->objs[k];
    s->pos = 0;
    memcpy(s->etag, s->cur->etag, sizeof(s->etag));
    bool resumed = k == 0 && s->resume_line > 0;
    memset(io, 0, sizeof(*io));
    io->key = s->cur->key;
    io->start_offset = resumed ? s->resume_offset : 0;
    io->start_line = resumed ? s->resume_line : 1;
    io->compression = s3l__input_compression_of(s->cur->key);
    io->read = obj_read;
    io->seek = obj_seek;
    io->ctx = s;
    return 0;
}

const char *s3l__object_source_key(const struct s3l_object_source *s, size_t k)
{
    return k < s->n_objs ? s->objs[k].key : NULL;
}

int s3l__object_source_state_at(const struct s3l_object_source *s, size_t k, uint64_t offset,
                                uint64_t line, char **json, size_t *len, struct s3l_error *err)
{
    if (k > s->n_objs)
        k = s->n_objs;
    size_t n = s->n_done + k;
    const char **done = s3l_calloc(n ? n : 1, sizeof(*done));
    if (!done)
        return nomem(err);
    for (size_t i = 0; i < s->n_done; i++)
        done[i] = s->done[i];
    for (size_t i = 0; i < k; i++)
        done[s->n_done + i] = s->objs[i].key;
    /* Nothing of object k consumed (offset 0): it is not in progress, as in
     * s3l_object_source_state; else its first GET gave its ETag. */
    bool cur = k < s->n_objs && offset > 0;
    if (cur && !s->objs[k].etag[0]) {
        s3l_free(done);
        return s3l_error_set(err, S3L_EINTERNAL, "object source: %s consumed before a GET",
                             s->objs[k].key);
    }
    int rc = s3l__source_state_encode(done, n, cur ? s->objs[k].key : NULL,
                                      cur ? s->objs[k].etag : "", offset, line ? line : 1, json,
                                      len, err);
    s3l_free(done);
    return rc;
}

size_t s3l_object_source_count(const struct s3l_object_source *s)
{
    return s->n_objs;
}

void s3l_object_source_free(struct s3l_object_source *s)
{
    if (!s)
        return;
    close_object(s);
    for (size_t i = 0; i < s->n_objs; i++)
        s3l_free(s->objs[i].key);
    s3l_free(s->objs);
    for (size_t i = 0; i < s->n_done; i++)
        s3l_free(s->done[i]);
    s3l_free(s->done);
    s3l_free(s);
}
