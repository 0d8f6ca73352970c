/*
 * The debezium format: one Debezium change event per line (the JSON that Kafka Connect's
 * JsonConverter writes of a record's value, as a file or console sink gives it), each rewritten
 * into the tape of one flat row. Lines are framed and scanned by the NDJSON format
 * (s3l__ndjson_format: the same offsets, limits and messages), then read here as Debezium's
 * envelope (Debezium's connector documentation, "Data change events"):
 *   {"before": {...}|null, "after": {...}|null, "source": {...}, "op": "c", "ts_ms": ...}
 * or wrapped with its Connect schema (value.converter.schemas.enable=true):
 *   {"schema": {"type": "struct", "fields": [...]}, "payload": {the envelope}}.
 * op "c" (create) and "r" (a snapshot's read) are inserts, "u" an update, "d" a delete; "t"
 * (truncate) is refused naming the line, as is any other op. A tombstone -- the null value
 * Debezium sends after a delete for Kafka's log compaction (tombstones.on.delete), written as
 * the line `null`, or {"schema": null, "payload": null} with the wrapper -- is skipped and
 * counted (s3l_reader_skipped). The row is `after` (for a delete `before`, which holds what the
 * database logged of the old row: the key columns under PostgreSQL's default replica identity,
 * every column under FULL) plus _openetl_op, _openetl_seq and _openetl_id (ident.c).
 */
#include <stdio.h>
#include <string.h>

#include "input/debezium/debezium.h"

typedef unsigned long long ull;

/* A bad event: a record error (not sticky; the next line is read normally). */
static int bad(const struct s3l_record *rec, uint32_t pos, const char *what,
               struct s3l_error *err)
{
    return s3l_error_set(err, S3L_EINVALID_INPUT,
                         "%s line %llu, column %llu (byte offset %llu): expected %s", rec->source,
                         (ull)rec->line, (ull)pos + 1, (ull)(rec->offset + pos), what);
}

static bool null_line(const char *p, size_t n)
{
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    while (n && (*p == ' ' || *p == '\t'))
        p++, n--;
    return n == 4 && memcmp(p, "null", 4) == 0;
}

static int reserve(struct s3l__dbz *d, size_t need)
{
    return need <= d->cap ? 0 : s3l__array_reserve(&d->tape, &d->cap, need, sizeof(*d->tape), 64);
}

static const struct s3l__dbz_col *find_col(const struct s3l__dbz *d, const struct s3l_value *key,
                                           size_t guess)
{
    if (guess < d->n_cols && d->cols[guess].name_len == key->len &&
        memcmp(d->cols[guess].name, key->str, key->len) == 0)
        return &d->cols[guess];
    for (size_t c = 0; c < d->n_cols; c++)
        if (d->cols[c].name_len == key->len && memcmp(d->cols[c].name, key->str, key->len) == 0)
            return &d->cols[c];
    return NULL;
}

static bool reserved(const struct s3l_value *key)
{
    return key->len >= 9 && memcmp(key->str, "_openetl_", 9) == 0;
}

/* Appends a (key, value) member of new text to the row. */
static int put_member(struct s3l__dbz *d, const char *key, const char *val, size_t len, bool num)
{
    struct s3l_value *t = &d->tape[d->n];
    t[0] = (struct s3l_value){S3L_VALUE_STRING, 0, (uint32_t)strlen(key), (uint32_t)d->n + 1, 0,
                              key};
    char *s = s3l_arena_strndup(&d->arena, val, len);
    if (!s)
        return S3L_ENOMEM;
    t[1] = (struct s3l_value){num ? S3L_VALUE_NUMBER : S3L_VALUE_STRING,
                              num ? S3L_VALUE_INT : 0, (uint32_t)len, (uint32_t)d->n + 2, 0, s};
    d->n += 2;
    d->tape[0].len++;
    return 0;
}

/* Copies the image object v[img]'s members into the row, rewriting typed scalars. */
static int copy_image(struct s3l__dbz *d, const struct s3l_record *rec, size_t img,
                      struct s3l_error *err)
{
    const struct s3l_value *v = rec->values;
    size_t m = 0;
    for (size_t i = img + 1; i < v[img].end; i = v[i + 1].end, m++) {
        if (reserved(&v[i]))
            return bad(rec, v[i].pos, "no column named _openetl_*: those names are the ones "
                       "this format adds", err);
        size_t at = d->n, sub = v[i + 1].end - (i + 1);
        d->tape[at] = v[i];
        d->tape[at].end = (uint32_t)at + 1;
        const struct s3l__dbz_col *col = find_col(d, &v[i], m);
        if (col && col->conv != S3L__DBZ_COPY && sub == 1) {
            const char *what = NULL;
            int rc = s3l__dbz_rewrite(d, col, v, i + 1, &d->tape[at + 1], &what);
            if (rc == S3L_EINVALID_INPUT) {
                char msg[200];
                snprintf(msg, sizeof(msg), "%s in column \"%.*s\"", what, (int)v[i].len,
                         v[i].str);
                return bad(rec, v[i + 1].pos, msg, err);
            }
            if (rc)
                return s3l_error_set(err, rc, "%s line %llu: out of memory", rec->source,
                                     (ull)rec->line);
            d->tape[at + 1].end = (uint32_t)at + 2;
        } else {
            /* The subtree as it is, its end indexes moved to where it now starts. */
            memcpy(&d->tape[at + 1], &v[i + 1], sub * sizeof(*v));
            int64_t shift = (int64_t)(at + 1) - (int64_t)(i + 1);
            for (size_t k = 0; k < sub; k++)
                d->tape[at + 1 + k].end = (uint32_t)((int64_t)d->tape[at + 1 + k].end + shift);
        }
        d->n = at + 1 + sub;
        d->tape[0].len++;
    }
    return 0;
}

/* The op of the envelope v[env]: 'c', 'r', 'u' or 'd', or an error naming the line. */
static int read_op(const struct s3l_record *rec, size_t env, char *op, struct s3l_error *err)
{
    const struct s3l_value *v = rec->values;
    size_t o = s3l__dbz_member(v, env, "op");
    if (!o || v[o].kind != S3L_VALUE_STRING)
        return bad(rec, o ? v[o].pos : v[env].pos,
                   "a Debezium change event: an object with \"op\" (a string), \"before\" and "
                   "\"after\", or {\"schema\": ..., \"payload\": ...} holding one", err);
    if (v[o].len == 1 && v[o].str[0] == 't')
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "%s line %llu, column %llu (byte offset %llu): a truncate event (op "
                             "\"t\"): a truncated table cannot be landed as rows; expected op "
                             "\"c\", \"r\", \"u\" or \"d\" (remove the line, or skip it with "
                             "--bad-records skip)", rec->source, (ull)rec->line,
                             (ull)v[o].pos + 1, (ull)(rec->offset + v[o].pos));
    if (v[o].len != 1 || !strchr("crud", v[o].str[0]))
        return bad(rec, v[o].pos, "op \"c\", \"r\", \"u\" or \"d\"", err);
    *op = v[o].str[0];
    return 0;
}

/* The envelope's Connect schema into d->cols (none without the wrapper) and the hint. */
static int read_types(struct s3l__dbz *d, const struct s3l_record *rec, size_t sch,
                      struct s3l_error *err)
{
    d->n_cols = 0;
    const char *what = NULL;
    int rc = sch && rec->values[sch].kind == S3L_VALUE_OBJECT
                 ? s3l__dbz_read_schema(d, rec->values, sch, &what)
                 : 0;
    if (rc == S3L_EINVALID_INPUT)
        return bad(rec, rec->values[sch].pos, what, err);
    if (rc == 0)
        rc = s3l__dbz_hint_add(d, d->n_cols > 0);
    if (rc)
        return s3l_error_set(err, rc, "%s line %llu: out of memory", rec->source, (ull)rec->line);
    return 0;
}

/* Rewrites rec (a scanned event) into the row: 1, 2 for a tombstone, or an error. */
static int build(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    struct s3l__dbz *d = r->dbz;
    const struct s3l_value *v = rec->values;
    size_t env = 0, sch = 0, payload = s3l__dbz_member(v, 0, "payload");
    if (payload && !s3l__dbz_member(v, 0, "op")) {
        if (v[payload].kind == S3L_VALUE_NULL)
            return 2;
        if (v[payload].kind != S3L_VALUE_OBJECT)
            return bad(rec, v[payload].pos, "\"payload\": a Debezium change event", err);
        env = payload;
        sch = s3l__dbz_member(v, 0, "schema");
    }
    char op = 0;
    int rc = read_op(rec, env, &op, err);
    if (rc == 0)
        rc = read_types(d, rec, sch, err);
    if (rc)
        return rc;
    size_t img = s3l__dbz_member(v, env, op == 'd' ? "before" : "after");
    if (!img || v[img].kind != S3L_VALUE_OBJECT)
        return bad(rec, img ? v[img].pos : v[env].pos,
                   op == 'd' ? "\"before\": an object (a delete's old row, at least its key)"
                             : "\"after\": an object (the new row)", err);
    size_t src = s3l__dbz_member(v, env, "source");
    if (src && v[src].kind != S3L_VALUE_OBJECT)
        src = 0;
    s3l_arena_reset(&d->arena);
    if (reserve(d, (v[img].end - img) + 8))
        return s3l_error_set(err, S3L_ENOMEM, "%s line %llu: out of memory", rec->source,
                             (ull)rec->line);
    d->tape[0] = (struct s3l_value){S3L_VALUE_OBJECT, 0, 0, 0, v[img].pos, NULL};
    d->n = 1;
    if ((rc = copy_image(d, rec, img, err)) != 0)
        return rc;
    char seq[24], id[37];
    int seq_len = snprintf(seq, sizeof(seq), "%lld",
                           (long long)s3l__dbz_seq(v, src, (int64_t)rec->offset));
    static const char *const names[] = {['c'] = "insert", ['r'] = "insert", ['u'] = "update",
                                        ['d'] = "delete"};
    const char *opname = names[(unsigned char)op];
    rc = s3l__dbz_id(d, v, env, src, op, id);
    if (rc == 0)
        rc = put_member(d, "_openetl_op", opname, strlen(opname), false);
    if (rc == 0)
        rc = put_member(d, "_openetl_seq", seq, (size_t)seq_len, true);
    if (rc == 0)
        rc = put_member(d, "_openetl_id", id, 36, false);
    if (rc)
        return s3l_error_set(err, rc, "%s line %llu: out of memory", rec->source, (ull)rec->line);
    d->tape[0].end = (uint32_t)d->n;
    rec->values = d->tape;
    rec->n_values = d->n;
    return 1;
}

static int dbz_open(struct s3l_reader *r, struct s3l_error *err)
{
    struct s3l__dbz *d = s3l_calloc(1, sizeof(*d));
    if (!d)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening %s", r->name);
    s3l_arena_init(&d->arena, 16 * 1024);
    s3l_buf_init(&d->name, 2 * r->opt.max_record_bytes + 4096);
    r->dbz = d;
    return 0;
}

static int dbz_next(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    for (;;) {
        r->defer = true;
        int rc = s3l__ndjson_format.next(r, rec, err);
        r->defer = false;
        if (rc != 1)
            return rc;
        if (null_line(rec->raw, rec->raw_len)) {
            r->dbz->tombstones++;
            continue;
        }
        rc = s3l__ndjson_format.scan(r, rec, err);
        if (rc == 1)
            rc = build(r, rec, err);
        if (rc == 2) {
            r->dbz->tombstones++;
            continue;
        }
        return rc;
    }
}

static void dbz_cleanup(struct s3l_reader *r)
{
    struct s3l__dbz *d = r->dbz;
    if (!d)
        return;
    s3l_free(d->tape);
    s3l_arena_free(&d->arena);
    s3l_buf_free(&d->name);
    s3l_schema_free(d->hint);
    s3l_free(d->cols);
    s3l_free(d);
    r->dbz = NULL;
}

static int dbz_hint(const struct s3l_reader *r, struct s3l_schema **out)
{
    *out = NULL;
    if (!r->dbz->hint)
        return 0;
    *out = s3l_schema_copy(r->dbz->hint);
    return *out ? 0 : S3L_ENOMEM;
}

static uint64_t dbz_skipped(const struct s3l_reader *r)
{
    return r->dbz->tombstones;
}

const struct s3l__input_format s3l__debezium_format = {
    .name = "debezium", .open = dbz_open, .next = dbz_next, .cleanup = dbz_cleanup,
    .hint = dbz_hint, .skipped = dbz_skipped,
};
