/*
 * NDJSON spans: many whole lines handed over at once (s3l__reader_next_lines), then consumed line
 * by line (s3l__lines_next), possibly on another thread after a copy. The runner's per-record work
 * (a call through the source, the reader and the runner's loop for every line) was a tenth of a
 * whole `s3land write`, and copying lines one by one into the lanes' batches cost the reading
 * thread more than the lanes saved; a span costs one call and, for a lane, one memcpy.
 *
 * A span holds only lines the per-record reader (reader.c, ndjson_next) would return the same way:
 * each at most max_record_bytes long, ended by a line feed or by the end of the input. Anything
 * else (a line over the limit, the rest of one being skipped, a sticky failure) is left to
 * s3l__reader_next_raw, which reports it exactly as before.
 */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "input/json/json.h"

/* Lines of a span at most (blank ones included): bounds the lengths array (32 KiB). */
#define SPAN_LINES 8192

/* What find_span found from the reader's head. */
struct found {
    size_t end;           /* just after the last row's line (meaningful when rows > 0) */
    uint64_t rows;        /* rows in [head, end) */
    uint64_t lines;       /* line feeds in [head, end) */
    size_t blank_end;     /* no row: just after the whole blank lines at head (0: none) */
    uint64_t blank_lines; /* line feeds in [head, blank_end) */
    bool too_long;        /* stopped at a line over max_record_bytes */
};

/*
 * The line feeds of [base, end), 64 bytes at a time: a bit per byte (SSE2 compares where the
 * compiler has them; else eight bytes at a time), so that a span's lines are found without a
 * call to memchr per line (which cost ~2.5% of a run on 92-byte lines).
 */
struct nl_iter {
    const char *base; /* the 64 bytes mask covers */
    const char *end;
    uint64_t mask;    /* line feeds of [base, base + 64) not returned yet */
};

static inline uint64_t nl_mask64(const char *p)
{
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n');
    uint64_t m0 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const void *)p), nl));
    uint64_t m1 = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const void *)(p + 16)), nl));
    uint64_t m2 = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const void *)(p + 32)), nl));
    uint64_t m3 = (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const void *)(p + 48)), nl));
    return m0 | m1 << 16 | m2 << 32 | m3 << 48;
#else
    uint64_t m = 0;
    for (int i = 0; i < 64; i++)
        m |= (uint64_t)(p[i] == '\n') << i;
    return m;
#endif
}

/* Loads the mask of the 64 bytes at it->base (fewer at the end: the rest reads as no line feed). */
static inline void nl_load(struct nl_iter *it)
{
    if (it->end - it->base >= 64) {
        it->mask = nl_mask64(it->base);
        return;
    }
    char tail[64] = {0};
    memcpy(tail, it->base, (size_t)(it->end - it->base));
    it->mask = nl_mask64(tail);
}

/* The next line feed, or NULL when [base, end) holds no more. */
static inline const char *nl_next(struct nl_iter *it)
{
    while (it->mask == 0) {
        it->base += 64;
        if (it->base >= it->end)
            return NULL;
        nl_load(it);
    }
    const char *nl = it->base + __builtin_ctzll(it->mask);
    it->mask &= it->mask - 1;
    return nl;
}

/* Looks for whole lines in the reader's buffer from head: up to max_rows rows, and past the
 * first row up to about max_bytes. A line not ended in the buffer ends the search (unless the
 * input ended: then it is the last line). */
static void find_span(const struct s3l_reader *r, uint64_t max_rows, size_t max_bytes,
                      struct found *f)
{
    const char *b = (const char *)r->buf.ptr;
    const char *q = b + r->head, *e = b + r->buf.len;
    size_t limit = r->opt.max_record_bytes;
    uint64_t lines = 0;
    uint32_t *lens = r->span_lens;
    size_t n = 0; /* lines looked at */
    memset(f, 0, sizeof(*f));
    struct nl_iter it = {q, e, 0};
    if (q < e)
        nl_load(&it);
    while (q < e && f->rows < max_rows && n < SPAN_LINES) {
        if (f->rows && (size_t)(q - (b + r->head)) >= max_bytes)
            break;
        const char *nl = nl_next(&it);
        if (!nl && !r->eof)
            break; /* the line goes on past the buffer */
        const char *le = nl ? nl : e, *next = nl ? nl + 1 : e;
        size_t len = (size_t)(le - q);
        if (len && le[-1] == '\r')
            len--;
        if (len > limit) {
            f->too_long = true;
            break;
        }
        if (nl)
            lines++;
        lens[n++] = (uint32_t)(next - q);
        if (s3l__is_row(q, q + len)) {
            f->rows++;
            f->end = (size_t)(next - b);
            f->lines = lines;
        } else if (!f->rows) {
            f->blank_end = (size_t)(next - b);
            f->blank_lines = lines;
        }
        q = next;
    }
}

int s3l__reader_next_lines(struct s3l_reader *r, uint64_t max_rows, size_t max_bytes,
                          struct s3l__lines *out, struct s3l_error *err)
{
    if (r->opt.format != S3L_INPUT_NDJSON || max_rows == 0)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "%s: spans of lines need NDJSON and at least one row", r->name);
    if (r->sticky || r->skipping)
        return S3L__READER_ONE;
    int rc = r->started ? 0 : s3l__reader_skip_bom(r, err);
    if (rc != 0)
        return rc;
    if (!r->span_lens && !(r->span_lens = s3l_malloc(SPAN_LINES * sizeof(uint32_t))))
        return s3l_error_set(err, S3L_ENOMEM, "%s: out of memory for a span of lines", r->name);
    for (;;) {
        struct found f;
        find_span(r, max_rows, max_bytes, &f);
        if (!f.rows && f.blank_end) { /* blank lines before anything else: consumed */
            r->head = r->scan_pos = f.blank_end;
            r->offset = r->base + f.blank_end;
            r->line += f.blank_lines;
            continue;
        }
        if (f.rows) {
            const char *b = (const char *)r->buf.ptr;
            out->p = b + r->head;
            out->end = b + f.end;
            out->offset = r->base + r->head;
            out->line = r->line;
            out->rows = f.rows;
            out->source = r->name;
            out->lens = r->span_lens; /* the blank lines at head were consumed above */
            r->head = r->scan_pos = f.end;
            r->offset = r->base + f.end;
            r->line += f.lines;
            return 1;
        }
        if (f.too_long)
            return S3L__READER_ONE;
        /* No whole line in the buffer. */
        if (r->eof)
            return r->head == r->buf.len ? 0 : S3L__READER_ONE;
        if (r->buf.len - r->head > r->opt.max_record_bytes)
            return S3L__READER_ONE; /* ndjson_next reports it without reading on */
        /* A quiet stream hands control back within idle_ms (the framework's fill waits). */
        rc = s3l__reader_fill(r, err);
        if (rc < 0 || rc == S3L_READER_IDLE)
            return rc;
    }
}

int s3l__lines_next(struct s3l__lines *s, struct s3l_record *rec)
{
    return s3l__lines_next_inline(s, rec);
}
