/*
 * The sink's public calls (include/s3l/ndjson_sink.h): option checks, the interval's state
 * machine (begin, write, prepare), the lines, and commit/abort of committables decoded whole
 * before anything is done. The text sink's parts are in text.c.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "os/os.h"
#include "sink/sink.h"

static int failed(struct s3l_sink *s, struct s3l_error *err)
{
    return s3l_error_set(err, S3L_ESTATE, "sink: failed earlier (%s); the engine must restore it",
                         s->failure);
}

/* Records the first failure: the sink refuses every later call. */
static int fail(struct s3l_sink *s, int rc, struct s3l_error *err)
{
    s3l__twopc_drop(s); /* the two-phase sink's unprepared upload: aborted */
    if (!s->failed) {
        s->failed = rc;
        snprintf(s->failure, sizeof(s->failure), "%.32s%s%.400s", s3l_error_name(rc),
                 err && err->message[0] ? ": " : "", err ? err->message : "");
    }
    return rc;
}

/* The names' common start, the key prefix's trailing slashes cut: text sink "<key_prefix>/part-"
 * or "<key_prefix>/sub<i>-part-"; two-phase sink "<key_prefix>/sub<N>-<run>-". */
static int make_prefix(struct s3l_sink *s, const struct s3l_sink_options *o, struct s3l_error *err)
{
    const char *kp = o->key_prefix ? o->key_prefix : "";
    size_t n = strlen(kp);
    while (n && kp[n - 1] == '/')
        n--;
    struct s3l_buf b;
    s3l_buf_init(&b, S3L_COMMITTABLE_KEY_MAX);
    int rc = 0;
    if (n)
        rc = s3l_buf_printf(&b, "%.*s/", (int)n, kp);
    bool twopc = o->delivery == S3L_SINK_EXACTLY_ONCE;
    if (!rc && twopc)
        rc = s3l_buf_printf(&b, "sub%u-%s-", (unsigned)o->subtask, s->run);
    else if (!rc && o->parallelism > 1)
        rc = s3l_buf_printf(&b, "sub%u-", (unsigned)o->subtask);
    if (!rc && !twopc)
        rc = s3l_buf_append_str(&b, "part-");
    if (!rc && !s3l_store_key_valid((const char *)b.ptr))
        rc = S3L_EINVALID_CONFIG;
    if (rc) {
        s3l_buf_free(&b);
        if (rc == S3L_ENOMEM)
            return s3l_error_set(err, rc, "sink: out of memory");
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "sink: key_prefix '%s' makes keys the store refuses (empty, \".\" "
                             "or \"..\" segments, a leading '/', over %d bytes)",
                             kp, S3L_COMMITTABLE_KEY_MAX);
    }
    size_t len;
    return s3l_buf_detach(&b, (uint8_t **)&s->prefix, &len);
}

static int check_options(const struct s3l_sink_options *o, struct s3l_error *err)
{
    if (!o || o->version != S3L_SINK_OPTIONS_VERSION || !o->store)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "sink: options need version %d and a store", S3L_SINK_OPTIONS_VERSION);
    if (o->delivery != S3L_SINK_AT_MOST_ONCE && o->delivery != S3L_SINK_EXACTLY_ONCE)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: unknown delivery %d",
                             (int)o->delivery);
    if (o->parallelism > 1 && o->subtask >= o->parallelism)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "sink: subtask %u is not below parallelism %u", (unsigned)o->subtask,
                             (unsigned)o->parallelism);
    if (o->parallelism <= 1 && o->subtask != 0)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "sink: subtask %u needs parallelism above it", (unsigned)o->subtask);
    if (o->compression != S3L_SINK_COMPRESSION_NONE && o->compression != S3L_SINK_COMPRESSION_GZIP &&
        o->compression != S3L_SINK_COMPRESSION_ZSTD)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: unknown compression %d",
                             (int)o->compression);
    if (o->delivery == S3L_SINK_EXACTLY_ONCE && o->compression != S3L_SINK_COMPRESSION_NONE)
        return s3l_error_set(err, S3L_EUNSUPPORTED,
                             "sink: compression '%s' is the text sink's option; the two-phase "
                             "sink (delivery_guarantee 'exactly_once') writes plain .ndjson "
                             "objects",
                             o->compression == S3L_SINK_COMPRESSION_GZIP ? "gzip" : "zstd");
    if (o->rollover_interval_ms < 0)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "sink: rollover_interval below 0");
    if (o->delivery == S3L_SINK_EXACTLY_ONCE && !(s3l_store_caps(o->store) & S3L_STORE_CAP_STAGED))
        return s3l_error_set(err, S3L_EUNSUPPORTED,
                             "sink: the store (%s) has no staged uploads, which the two-phase "
                             "sink (delivery_guarantee 'exactly_once') commits",
                             s3l_store_backend(o->store));
    if (o->delivery == S3L_SINK_AT_MOST_ONCE &&
        !(s3l_store_caps(o->store) & S3L_STORE_CAP_PUT_IF_ABSENT))
        return s3l_error_set(err, S3L_EUNSUPPORTED,
                             "sink: the store (%s) has no put-if-absent, so a part could replace "
                             "an earlier run's",
                             s3l_store_backend(o->store));
    return 0;
}

int s3l_sink_open(const struct s3l_sink_options *o, struct s3l_sink **out, struct s3l_error *err)
{
    if (!out)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: NULL out");
    *out = NULL;
    int rc = check_options(o, err);
    if (rc)
        return rc;
    struct s3l_sink *s = s3l_calloc(1, sizeof(*s));
    if (!s)
        return s3l_error_set(err, S3L_ENOMEM, "sink: out of memory");
    s->store = o->store;
    s->delivery = o->delivery;
    s->rollover_bytes = o->rollover_bytes ? o->rollover_bytes : S3L_SINK_ROLLOVER_DEFAULT;
    s->rollover_ns = o->rollover_interval_ms * 1000000;
    s3l_buf_init(&s->buf, SIZE_MAX / 2);
    s->content_type = s3l_strdup(o->content_type ? o->content_type : "application/x-ndjson");
    if (!s->content_type)
        rc = s3l_error_set(err, S3L_ENOMEM, "sink: out of memory");
    s->suffix = "";
    s3l_buf_init(&s->zbuf, SIZE_MAX / 2);
    if (!rc && o->compression != S3L_SINK_COMPRESSION_NONE) {
        bool gz = o->compression == S3L_SINK_COMPRESSION_GZIP;
        s->suffix = gz ? ".gz" : ".zst";
        rc = s3l__codec_open(&s->codec, gz ? S3L_CODEC_GZIP : S3L_CODEC_ZSTD, 0, err);
        if (rc)
            s->codec.ops = NULL; /* nothing to close */
    }
    if (!rc && s->delivery == S3L_SINK_EXACTLY_ONCE)
        rc = s3l__twopc_open(s, o, err);
    if (!rc)
        rc = make_prefix(s, o, err);
    if (!rc && o->restore && s->delivery == S3L_SINK_AT_MOST_ONCE)
        rc = s3l__text_restore(s, err);
    if (rc) {
        s3l_sink_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int s3l_sink_begin(struct s3l_sink *s, uint64_t ckpt, struct s3l_error *err)
{
    if (!s)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: NULL sink");
    if (s->failed)
        return failed(s, err);
    if (s->begun)
        return s3l_error_set(err, S3L_ESTATE,
                             "sink: begin(%llu) while checkpoint %llu is begun and not prepared",
                             (unsigned long long)ckpt, (unsigned long long)s->ckpt);
    int rc = s->delivery == S3L_SINK_EXACTLY_ONCE ? s3l__twopc_begin(s, ckpt, err) : 0;
    if (rc)
        return rc;
    s->begun = true;
    s->ckpt = ckpt;
    return 0;
}

static bool due(const struct s3l_sink *s)
{
    if (s->buf.len == 0)
        return false;
    if (s->buf.len >= s->rollover_bytes)
        return true;
    return s->rollover_ns && s3l__os_now_ns() - s->oldest_ns >= s->rollover_ns;
}

int s3l_sink_write(struct s3l_sink *s, const void *record, size_t len, struct s3l_error *err)
{
    if (!s || (!record && len))
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: NULL argument");
    if (s->failed)
        return failed(s, err);
    if (!s->begun)
        return s3l_error_set(err, S3L_ESTATE, "sink: write before begin");
    s->seen++;
    int rc2 = s->delivery == S3L_SINK_EXACTLY_ONCE ? s3l__twopc_room(s, len, err) : 0;
    if (rc2) /* before the record's bytes are read */
        return fail(s, rc2, err);
    const uint8_t *r = record;
    const uint8_t *nl = len ? memchr(r, '\n', len) : NULL;
    if (nl && (size_t)(nl - r) != len - 1)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "sink: record %llu holds a newline at byte %zu (a record is one "
                             "line; it was not written)",
                             (unsigned long long)s->seen, (size_t)(nl - r));
    if (s->delivery == S3L_SINK_EXACTLY_ONCE) {
        int rc = s3l__twopc_write(s, r, len, !nl, err);
        if (rc)
            return fail(s, rc, err);
        s->records++;
        return 0;
    }
    if (s->buf.len == 0)
        s->oldest_ns = s3l__os_now_ns();
    size_t before = s->buf.len;
    int rc = s3l_buf_append(&s->buf, r, len);
    if (!rc && !nl)
        rc = s3l_buf_append_byte(&s->buf, '\n');
    if (rc) {
        s3l_buf_truncate(&s->buf, before);
        return s3l_error_set(err, rc, "sink: out of memory buffering record %llu",
                             (unsigned long long)s->seen);
    }
    s->records++;
    if (due(s) && (rc = s3l__text_flush(s, err)) != 0)
        return fail(s, rc, err);
    return 0;
}

int s3l_sink_poll(struct s3l_sink *s, struct s3l_error *err)
{
    if (!s)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: NULL sink");
    if (s->failed)
        return failed(s, err);
    int rc = 0;
    if (s->rollover_ns && due(s) && (rc = s3l__text_flush(s, err)) != 0)
        return fail(s, rc, err);
    return 0;
}

int s3l_sink_prepare(struct s3l_sink *s, uint64_t ckpt, uint8_t **out, size_t *out_len,
                     struct s3l_error *err)
{
    if (!s || !out || !out_len)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: NULL argument");
    if (s->failed)
        return failed(s, err);
    if (!s->begun)
        return s3l_error_set(err, S3L_ESTATE, "sink: prepare(%llu) with no checkpoint begun",
                             (unsigned long long)ckpt);
    if (ckpt != s->ckpt)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "sink: prepare(%llu) but begin announced checkpoint %llu",
                             (unsigned long long)ckpt, (unsigned long long)s->ckpt);
    int rc;
    if (s->delivery == S3L_SINK_EXACTLY_ONCE) {
        if ((rc = s3l__twopc_prepare(s, ckpt, out, out_len, err)) != 0)
            return fail(s, rc, err);
    } else {
        /* The text sink has no barrier hook: nothing is flushed, the committable is empty. */
        struct s3l_committable c = {.kind = S3L_COMMITTABLE_EMPTY, .checkpoint = ckpt};
        rc = s3l_committable_encode(&c, out, out_len, err);
    }
    if (!rc)
        s->begun = false;
    return rc;
}

/* Decodes, then acts: commit (abort false) or abort of one committable. */
static int settle(struct s3l_sink *s, const uint8_t *data, size_t len, bool abort,
                  struct s3l_error *err)
{
    if (!s)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: NULL sink");
    struct s3l_committable c;
    int rc = s3l_committable_decode(data, len, &c, err);
    if (rc)
        return rc;
    if (c.kind == S3L_COMMITTABLE_MULTIPART)
        rc = abort ? s3l__twopc_abort(s, &c, err) : s3l__twopc_commit(s, &c, err);
    s3l_committable_cleanup(&c);
    return rc;
}

int s3l_sink_commit(struct s3l_sink *s, const uint8_t *data, size_t len, struct s3l_error *err)
{
    return settle(s, data, len, false, err);
}

int s3l_sink_abort(struct s3l_sink *s, const uint8_t *data, size_t len, struct s3l_error *err)
{
    return settle(s, data, len, true, err);
}

int s3l_sink_commit_group(struct s3l_sink *s, const struct s3l_committable_bytes *c, size_t n,
                          size_t *done, struct s3l_error *err)
{
    if (done)
        *done = 0;
    if (!c && n)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: NULL committables");
    for (size_t i = 0; i < n; i++) {
        struct s3l_error e = {0};
        int rc = s3l_sink_commit(s, c[i].data, c[i].len, &e);
        if (rc)
            return s3l_error_set(err, rc, "commit_group: committable %zu of %zu: %s", i, n,
                                 e.message);
        if (done)
            *done = i + 1;
    }
    return 0;
}

int s3l_sink_close(struct s3l_sink *s, struct s3l_error *err)
{
    if (!s)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: NULL sink");
    if (s->failed)
        return failed(s, err);
    if (s->delivery == S3L_SINK_EXACTLY_ONCE) {
        if (s->up)
            return s3l_error_set(err, S3L_ESTATE,
                                 "sink: close with checkpoint %llu begun and %llu records not "
                                 "prepared; prepare and commit it first (free drops them)",
                                 (unsigned long long)s->ckpt, (unsigned long long)s->iv_records);
        return 0;
    }
    int rc = s3l__text_flush(s, err);
    return rc ? fail(s, rc, err) : 0;
}

int s3l_sink_flush(struct s3l_sink *s, struct s3l_error *err)
{
    if (!s)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: NULL sink");
    if (s->failed)
        return failed(s, err);
    if (s->delivery == S3L_SINK_EXACTLY_ONCE)
        return s3l_error_set(err, S3L_ESTATE,
                             "sink: flush of the two-phase sink: it publishes only by commit");
    int rc = s3l__text_flush(s, err);
    return rc ? fail(s, rc, err) : 0;
}

int s3l_sink_compression_parse(const char *name, enum s3l_sink_compression *out,
                               struct s3l_error *err)
{
    static const struct {
        const char *name;
        enum s3l_sink_compression c;
    } names[] = {
        {"none", S3L_SINK_COMPRESSION_NONE},
        {"gzip", S3L_SINK_COMPRESSION_GZIP},
        {"zstd", S3L_SINK_COMPRESSION_ZSTD},
    };
    if (!out)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "sink: NULL out");
    *out = S3L_SINK_COMPRESSION_NONE;
    if (!name || !*name)
        return 0;
    for (size_t i = 0; i < S3L_ARRAY_LEN(names); i++) {
        if (strcasecmp(name, names[i].name) == 0) {
            *out = names[i].c;
            return 0;
        }
    }
    return s3l_error_set(err, S3L_EINVALID_CONFIG,
                         "compression '%.64s': expected none, gzip or zstd", name);
}

const char *s3l_sink_run_id(const struct s3l_sink *s) { return s ? s->run : ""; }

void s3l_sink_stats(const struct s3l_sink *s, uint64_t *records, uint64_t *parts, uint64_t *bytes)
{
    if (records)
        *records = s ? s->records : 0;
    if (parts)
        *parts = s ? s->parts : 0;
    if (bytes)
        *bytes = s ? s->bytes : 0;
}

void s3l_sink_free(struct s3l_sink *s)
{
    if (!s)
        return;
    s3l__twopc_drop(s);
    s3l_buf_free(&s->buf);
    s3l_buf_free(&s->zbuf);
    if (s->codec.ops)
        s3l__codec_close(&s->codec);
    s3l_free(s->prefix);
    s3l_free(s->content_type);
    s3l_free(s);
}
