/*
 * The reader framework every input format runs on: the block buffer (read in block_bytes
 * pieces, compacted so that it never holds more than one record plus two blocks), the record
 * positions (byte offsets and line numbers, kept for every record so that the runner can
 * checkpoint and resume), resumption at a byte offset (seek, or read and drop on a pipe), sticky
 * failures, and the public s3l_reader_* calls, which reach the format through its table
 * (input.h, struct s3l__input_format): NDJSON and JSON arrays in json/reader.c, CSV in csv/csv.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "input/input.h"
#include "os/os.h"

typedef unsigned long long ull;

void s3l__jscan_init(struct s3l__jscan *s, size_t max_values)
{
    memset(s, 0, sizeof(*s));
    s->max_values = max_values ? max_values : SIZE_MAX / sizeof(struct s3l_value);
    s3l_arena_init(&s->arena, 64 * 1024);
}

void s3l__jscan_cleanup(struct s3l__jscan *s)
{
    s3l_free(s->tape);
    s3l_arena_free(&s->arena);
    s->tape = NULL;
    s->n = s->cap = 0;
}

int s3l_input_format_parse(const char *name, enum s3l_input_format *out, struct s3l_error *err)
{
    if (name && (strcmp(name, "ndjson") == 0 || strcmp(name, "jsonl") == 0))
        *out = S3L_INPUT_NDJSON;
    else if (name && strcmp(name, "json") == 0)
        *out = S3L_INPUT_JSON;
    else if (name && strcmp(name, "csv") == 0)
        *out = S3L_INPUT_CSV;
    else if (name && strcmp(name, "debezium") == 0)
        *out = S3L_INPUT_DEBEZIUM;
    else
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "input format \"%s\": expected ndjson (or jsonl), json, csv or "
                             "debezium",
                             name ? name : "");
    return 0;
}

int s3l_csv_delimiter_parse(const char *text, char *out, struct s3l_error *err)
{
    const char *why = NULL;
    int rc = s3l__csv_delimiter_parse(text, out, &why);
    if (rc)
        return s3l_error_set(err, rc, "CSV delimiter \"%s\": %s", text ? text : "", why);
    return 0;
}

int s3l__reader_fatal(struct s3l_reader *r, struct s3l_error *err, int code)
{
    r->sticky = code;
    if (err && err->code)
        r->sticky_err = *err;
    else
        s3l_error_set(&r->sticky_err, code, "%s: %s", r->name, s3l_strerror(code));
    return code;
}

/* The input's raw bytes: from the caller's read function when it gave one, else the fd. */
static int raw_read(struct s3l_reader *r, void *dst, size_t want, size_t *got,
                    struct s3l_error *err)
{
    if (!r->opt.read)
        return s3l__os_read(r->fd, dst, want, got, r->name, err);
    *got = 0;
    int rc = r->opt.read(r->opt.io_ctx, dst, want, got, err);
    if (rc == 0 && *got > want)
        return s3l_error_set(err, S3L_EINTERNAL, "%s: the read function gave more than asked",
                             r->name);
    return rc;
}

int s3l__reader_fill(struct s3l_reader *r, struct s3l_error *err)
{
    if (r->eof)
        return 0;
    if (r->head > 0) {
        size_t keep = r->buf.len - r->head;
        memmove(r->buf.ptr, r->buf.ptr + r->head, keep);
        r->base += r->head;
        r->scan_pos -= r->head;
        r->buf.len = keep;
        r->head = 0;
    }
    size_t want = S3L_MIN(r->opt.block_bytes, r->buf.max - r->buf.len);
    if (r->opt.end_offset && !r->unpack) {
        /* The caller's end (opt.end_offset): what lies past it is not read yet. */
        uint64_t at = r->base + r->buf.len;
        if (at >= r->opt.end_offset) {
            r->eof = true;
            return 0;
        }
        want = (size_t)S3L_MIN((uint64_t)want, r->opt.end_offset - at);
    }
    if (want == 0)
        return s3l__reader_fatal(
            r, err, s3l_error_set(err, S3L_EINTERNAL, "%s: read buffer full", r->name));
    if (s3l_buf_reserve(&r->buf, want) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "%s: out of memory for the read buffer", r->name);
    /* A quiet stream hands control back within idle_ms (a file is always readable), so that
     * the caller can commit by time or see a stop request while no byte comes. */
    if (r->opt.idle_ms > 0 && !r->opt.read && !s3l__os_wait_readable(r->fd, r->opt.idle_ms))
        return S3L_READER_IDLE;
    size_t n = 0;
    int rc;
    if (r->unpack) {
        rc = s3l__unpack_read(r->unpack, raw_read, r, r->name, r->buf.ptr + r->buf.len, want,
                              &n, err);
        if (rc < 0)
            return s3l__reader_fatal(r, err, rc); /* corrupt: nothing after it can be read */
        r->cut = rc == 0 && s3l__unpack_cut(r->unpack);
        rc = 0;
    } else {
        rc = raw_read(r, r->buf.ptr + r->buf.len, want, &n, err);
    }
    if (rc && r->opt.read) {
        /* The read function's own error (a store's, naming the object) is kept as it is. */
        if (err && !err->code)
            s3l_error_set(err, rc, "read %s at byte offset %llu", r->name,
                          (ull)(r->base + r->buf.len));
        return s3l__reader_fatal(r, err, rc);
    }
    if (rc) {
        int e = err ? err->sys_errno : 0;
        s3l_error_clear(err);
        s3l_error_set_errno(err, S3L_EIO, e, "read %s at byte offset %llu", r->name,
                            (ull)(r->base + r->buf.len));
        return s3l__reader_fatal(r, err, S3L_EIO);
    }
    if (n == 0) {
        r->eof = true;
        return 0;
    }
    r->buf.len += n;
    r->buf.ptr[r->buf.len] = 0;
    return 1;
}

int s3l__reader_skip_bom(struct s3l_reader *r, struct s3l_error *err)
{
    if (r->started)
        return 0;
    while (r->buf.len < 3 && !r->eof) {
        int rc = s3l__reader_fill(r, err);
        if (rc < 0 || rc == S3L_READER_IDLE)
            return rc; /* idle: the check is made again at the next call */
    }
    r->started = true;
    if (r->buf.len >= 3 && memcmp(r->buf.ptr, "\xEF\xBB\xBF", 3) == 0) {
        r->head = r->scan_pos = 3;
        r->offset = r->base + 3;
    }
    return 0;
}

void s3l__reader_record(const struct s3l_reader *r, struct s3l_record *rec, size_t start,
                        size_t end, uint64_t line)
{
    rec->values = NULL;
    rec->n_values = 0;
    rec->line = line;
    rec->offset = r->base + start;
    rec->end_offset = r->base + end;
    rec->raw = (const char *)r->buf.ptr + start;
    rec->raw_len = end - start;
    rec->source = r->name;
}

static size_t skip_space(const char *p, size_t i, size_t n)
{
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    return i;
}

enum s3l__sniff s3l__input_sniff(const char *p, size_t n)
{
    size_t i = skip_space(p, 0, n);
    if (i == n)
        return S3L__SNIFF_UNKNOWN;
    if (p[i] == '[') {
        size_t j = skip_space(p, i + 1, n);
        if (j == n || strchr("{[]\"-0123456789tfn", p[j]))
            return S3L__SNIFF_JSON;
        return S3L__SNIFF_UNKNOWN;
    }
    if (p[i] == '{') {
        size_t j = skip_space(p, i + 1, n);
        if (j < n && p[j] != '"' && p[j] != '}')
            return S3L__SNIFF_UNKNOWN;
        const char *nl = memchr(p + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - p) : n;
        while (e > i && (p[e - 1] == ' ' || p[e - 1] == '\t' || p[e - 1] == '\r'))
            e--;
        return e - 1 > i && p[e - 1] == '}' ? S3L__SNIFF_NDJSON : S3L__SNIFF_JSON;
    }
    const char *nl = memchr(p + i, '\n', n - i);
    size_t e = nl ? (size_t)(nl - p) : n;
    for (size_t k = i; k < e; k++)
        if (p[k] == ',' || p[k] == ';' || p[k] == '\t' || p[k] == '|')
            return S3L__SNIFF_CSV;
    return S3L__SNIFF_UNKNOWN;
}

bool s3l__input_hint(struct s3l_error *err, enum s3l_input_format in_force, const char *p,
                     size_t n)
{
    if (!err || !err->code || !p)
        return false;
    enum s3l__sniff seen = s3l__input_sniff(p, n);
    const char *hint = NULL;
    if (seen == S3L__SNIFF_CSV && in_force != S3L_INPUT_CSV)
        hint = "; the input starts like CSV: give --input-format csv";
    else if (seen == S3L__SNIFF_JSON && in_force == S3L_INPUT_NDJSON)
        hint = "; the input starts like JSON that is not one object per line (a JSON array, or "
               "objects spread over lines): give --input-format json";
    else if ((seen == S3L__SNIFF_JSON || seen == S3L__SNIFF_NDJSON) && in_force == S3L_INPUT_CSV)
        hint = "; the input starts like JSON, not CSV: give --input-format ndjson (one object per "
               "line) or json (an array)";
    if (!hint)
        return false;
    size_t len = strlen(err->message);
    snprintf(err->message + len, sizeof(err->message) - len, "%s", hint);
    return true;
}

/* The formats by enum s3l_input_format. */
static const struct s3l__input_format *const formats[] = {
    [S3L_INPUT_NDJSON] = &s3l__ndjson_format,
    [S3L_INPUT_JSON] = &s3l__json_format,
    [S3L_INPUT_CSV] = &s3l__csv_format,
    [S3L_INPUT_DEBEZIUM] = &s3l__debezium_format,
};

static int seek_to(struct s3l_reader *r, struct s3l_error *err)
{
    uint64_t off = r->opt.start_offset;
    if (!r->unpack && r->opt.read) {
        if (r->opt.seek)
            return r->opt.seek(r->opt.io_ctx, off, err);
    } else if (!r->unpack) {
        int rc = s3l__os_seek(r->fd, off, r->name, err);
        if (rc <= 0)
            return rc; /* seeked, or failed; 1 is a pipe: read and drop below */
    }
    /* A pipe, or a compressed input (decompressed from its start): read and drop the bytes
     * before the offset. */
    uint64_t left = off;
    while (left > 0) {
        if (r->head == r->buf.len) {
            int rc = s3l__reader_fill(r, err);
            if (rc < 0)
                return rc;
            if (rc == S3L_READER_IDLE)
                continue; /* the bytes resent before the offset are still to come */
            if (rc == 0)
                return s3l_error_set(err, S3L_EIO, "%s ends before byte offset %llu", r->name,
                                     (ull)off);
        }
        size_t n = (size_t)S3L_MIN((uint64_t)(r->buf.len - r->head), left);
        r->head += n;
        left -= n;
    }
    return 0;
}

int s3l_reader_open(int fd, const struct s3l_reader_options *opt, struct s3l_reader **out,
                    struct s3l_error *err)
{
    if (!opt || opt->version != S3L_READER_OPTIONS_VERSION || opt->format < S3L_INPUT_NDJSON ||
        opt->format > S3L_INPUT_DEBEZIUM || opt->compression < S3L_INPUT_PLAIN ||
        opt->compression > S3L_INPUT_ZSTD)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "reader options: bad version or format");
    if (opt->csv_delimiter == '"' || opt->csv_delimiter == '\n' || opt->csv_delimiter == '\r')
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "CSV delimiter: a quote or a line break cannot separate fields");
    struct s3l_reader *r = s3l_calloc(1, sizeof(*r));
    if (!r || !(r->name = s3l_strdup(opt->name ? opt->name : "input"))) {
        s3l_free(r);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening a reader");
    }
    r->opt = *opt;
    r->opt.name = r->name;
    if (!r->opt.max_record_bytes)
        r->opt.max_record_bytes = S3L_DEFAULT_MAX_RECORD_BYTES;
    if (!r->opt.block_bytes)
        r->opt.block_bytes = S3L_DEFAULT_BLOCK_BYTES;
    r->fd = fd;
    r->line = opt->start_line ? opt->start_line : 1;
    r->line_start = opt->start_offset; /* resumed mid-line: columns count from the offset */
    s3l_buf_init(&r->buf, r->opt.max_record_bytes + 2 * r->opt.block_bytes);
    r->fmt = formats[opt->format];
    s3l__jscan_init(&r->scan, r->opt.max_record_bytes / 2 + 16);
    int rc = 0;
    if (opt->compression != S3L_INPUT_PLAIN &&
        (rc = s3l__unpack_new(opt->compression, &r->unpack, err)) != 0) {
        s3l_reader_free(r);
        return rc;
    }
    if (opt->start_offset > 0) {
        rc = seek_to(r, err);
        if (r->buf.len == 0)
            r->base = opt->start_offset; /* seeked; else base + head is the offset already */
        r->scan_pos = r->head;
        r->offset = opt->start_offset;
        r->started = true;
    } else if (opt->resume) {
        r->started = true; /* no byte order mark in the middle of a stream */
    }
    if (rc == 0 && r->fmt->open)
        rc = r->fmt->open(r, err);
    if (rc) {
        s3l_reader_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int s3l_reader_next(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    memset(rec, 0, sizeof(*rec));
    rec->source = r->name;
    if (r->sticky) {
        if (err && !err->code)
            *err = r->sticky_err;
        return r->sticky;
    }
    int rc = r->started ? 0 : s3l__reader_skip_bom(r, err);
    if (rc != 0)
        return rc;
    return r->fmt->next(r, rec, err);
}

int s3l__reader_next_raw(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    r->defer = r->opt.format == S3L_INPUT_NDJSON;
    int rc = s3l_reader_next(r, rec, err);
    r->defer = false;
    return rc;
}

int s3l__reader_scan(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    if (rec->values || !r->fmt->scan)
        return 1;
    return r->fmt->scan(r, rec, err);
}

bool s3l_reader_broken(const struct s3l_reader *r)
{
    return r->sticky == S3L_EINVALID_INPUT || r->sticky == S3L_ETOO_LARGE;
}

uint64_t s3l_reader_offset(const struct s3l_reader *r)
{
    return r->offset;
}

uint64_t s3l_reader_raw_offset(const struct s3l_reader *r)
{
    return r->unpack ? s3l__unpack_raw_offset(r->unpack) : 0;
}

bool s3l_reader_cut(const struct s3l_reader *r)
{
    return r->cut;
}

uint64_t s3l_reader_line(const struct s3l_reader *r)
{
    return r->line;
}

int s3l_reader_schema_hint(const struct s3l_reader *r, struct s3l_schema **out)
{
    *out = NULL;
    return r->fmt->hint ? r->fmt->hint(r, out) : 0;
}

uint64_t s3l_reader_skipped(const struct s3l_reader *r)
{
    return r->fmt->skipped ? r->fmt->skipped(r) : 0;
}

void s3l_reader_free(struct s3l_reader *r)
{
    if (!r)
        return;
    if (r->fmt && r->fmt->cleanup)
        r->fmt->cleanup(r);
    s3l__jscan_cleanup(&r->scan);
    s3l__unpack_free(r->unpack);
    s3l_free(r->span_lens);
    s3l_buf_free(&r->buf);
    s3l_free(r->name);
    s3l_free(r);
}
