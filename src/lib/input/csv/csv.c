/*
 * The CSV reader (RFC 4180): a header row naming the columns, then one record per row. Fields
 * may be quoted (section 2, rules 5-7): a quoted field holds delimiters, line breaks and doubled
 * quotes. Rows end with CRLF or LF. An empty unquoted field is null, a quoted empty field ("") is
 * the empty string. A quote inside an unquoted field is taken literally (common in the wild);
 * text after a closing quote is an error. Each row becomes a tape shaped like a JSON object whose
 * values are text (S3L_VALUE_TEXT), so inference and conversion treat both formats alike.
 * The header is kept so that a reader resumed at a byte offset knows the columns. The format runs
 * on the input framework (input/input.h) and is called only through its table, s3l__csv_format.
 */
#include <string.h>

#include "input/input.h"

typedef unsigned long long ull;

static int ensure(struct s3l_value **arr, size_t *cap, size_t need)
{
    return need <= *cap ? 0 : s3l__array_reserve(arr, cap, need, sizeof(**arr), 16);
}

/* Splits one row s[0..n) into r->cfields. Returns the field count, or a negative code. */
static long split(struct s3l_reader *r, const char *s, size_t n, uint64_t line, uint64_t offset,
                  struct s3l_error *err)
{
    char delim = r->opt.csv_delimiter;
    size_t i = 0, count = 0;
    for (;;) {
        if (ensure(&r->cfields, &r->cfields_cap, count + 1) != 0)
            return s3l_error_set(err, S3L_ENOMEM, "%s line %llu: out of memory", r->name,
                                 (ull)line);
        struct s3l_value *f = &r->cfields[count++];
        memset(f, 0, sizeof(*f));
        f->pos = (uint32_t)i;
        if (i < n && s[i] == '"') {
            size_t j = i + 1, k;
            bool doubled = false;
            for (;;) {
                const char *q = memchr(s + j, '"', n - j);
                if (!q)
                    return s3l_error_set(err, S3L_EINVALID_INPUT,
                                         "%s line %llu, field %zu (byte offset %llu): expected a "
                                         "closing quote", r->name, (ull)line, count,
                                         (ull)(offset + i));
                k = (size_t)(q - s);
                if (k + 1 < n && s[k + 1] == '"') {
                    doubled = true;
                    j = k + 2;
                    continue;
                }
                break;
            }
            f->kind = S3L_VALUE_STRING;
            f->flags = S3L_VALUE_TEXT;
            f->str = s + i + 1;
            f->len = (uint32_t)(k - i - 1);
            if (doubled) {
                char *o = s3l_arena_alloc(&r->scan.arena, f->len + 1);
                if (!o)
                    return s3l_error_set(err, S3L_ENOMEM, "%s line %llu: out of memory",
                                         r->name, (ull)line);
                size_t m = 0;
                for (size_t x = 0; x < f->len; x++) {
                    o[m++] = f->str[x];
                    if (f->str[x] == '"')
                        x++; /* "" is one quote (RFC 4180 section 2, rule 7) */
                }
                f->str = o;
                f->len = (uint32_t)m;
            }
            i = k + 1;
            if (i < n && s[i] != delim)
                return s3l_error_set(err, S3L_EINVALID_INPUT,
                                     "%s line %llu, field %zu (byte offset %llu): expected the "
                                     "delimiter or the end of the row after a closing quote",
                                     r->name, (ull)line, count, (ull)(offset + i));
        } else {
            const char *d = memchr(s + i, delim, n - i);
            size_t k = d ? (size_t)(d - s) : n;
            if (k > i) {
                f->kind = S3L_VALUE_STRING;
                f->flags = S3L_VALUE_TEXT;
                f->str = s + i;
                f->len = (uint32_t)(k - i);
            }
            i = k;
        }
        if (i >= n)
            return (long)count;
        i++; /* the delimiter */
    }
}

/*
 * The delimiter of a header row: ',' when one occurs outside quotes (or no candidate does), else
 * the most frequent of ';', tab and '|' outside quotes (in that order on a tie). Semicolons are
 * what spreadsheets write where the decimal separator is a comma; tabs are TSV.
 */
static char detect_delimiter(const char *s, size_t n)
{
    static const char cand[] = {',', ';', '\t', '|'};
    size_t count[4] = {0};
    bool quoted = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            quoted = !quoted;
        else if (!quoted)
            for (int k = 0; k < 4; k++)
                count[k] += s[i] == cand[k];
    }
    int best = 0;
    if (count[0] == 0)
        for (int k = 1; k < 4; k++)
            if (count[k] > count[best])
                best = k;
    return cand[best];
}

static int set_header(struct s3l_reader *r, const char *text, size_t len, uint64_t line,
                      struct s3l_error *err)
{
    if (!r->opt.csv_delimiter)
        r->opt.csv_delimiter = detect_delimiter(text, len);
    size_t bad;
    if (!s3l__utf8_valid((const uint8_t *)text, len, &bad))
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "%s line %llu, column %zu: the header is not valid UTF-8", r->name,
                             (ull)line, bad + 1);
    if (!(r->header = s3l_strndup(text, len)) || !(r->header_names = s3l_malloc(len + 1)))
        return s3l_error_set(err, S3L_ENOMEM, "%s: out of memory for the header", r->name);
    r->header_len = len;
    long n = split(r, r->header, len, line, 0, err);
    if (n < 0)
        return (int)n;
    if (!(r->columns = s3l_calloc((size_t)n, sizeof(*r->columns))))
        return s3l_error_set(err, S3L_ENOMEM, "%s: out of memory for the header", r->name);
    char *o = r->header_names;
    for (long i = 0; i < n; i++) {
        const struct s3l_value *f = &r->cfields[i];
        if (f->kind == S3L_VALUE_NULL || f->len == 0)
            return s3l_error_set(err, S3L_EINVALID_INPUT,
                                 "%s line %llu: header field %ld is empty (every column needs a "
                                 "name)", r->name, (ull)line, i + 1);
        memcpy(o, f->str, f->len);
        struct s3l_value *c = &r->columns[i];
        c->kind = S3L_VALUE_STRING;
        c->str = o;
        c->len = f->len;
        o += f->len;
        for (long j = 0; j < i; j++)
            if (r->columns[j].len == c->len && memcmp(r->columns[j].str, c->str, c->len) == 0)
                return s3l_error_set(err, S3L_EINVALID_INPUT,
                                     "%s line %llu: header field %ld repeats the column name "
                                     "\"%.*s\"", r->name, (ull)line, i + 1, (int)c->len, c->str);
    }
    r->n_columns = (size_t)n;
    return 0;
}

static int csv_open(struct s3l_reader *r, struct s3l_error *err)
{
    r->cfield_start = true;
    if (r->opt.start_offset == 0 && !r->opt.resume)
        return 0;
    if (!r->opt.csv_header)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "%s: resuming a CSV input at byte offset %llu needs its header",
                             r->name, (ull)r->opt.start_offset);
    return set_header(r, r->opt.csv_header, r->opt.csv_header_len, 1, err);
}

static void csv_cleanup(struct s3l_reader *r)
{
    s3l_free(r->header);
    s3l_free(r->header_names);
    s3l_free(r->columns);
    s3l_free(r->cfields);
}

/* The row at head is over max_record_bytes (its bytes without the line end): fatal. rec then
 * covers no bytes and starts at the row: it names where the row is, and does not point into the
 * read buffer, which the refill that found the row too long may have moved (a header or blank
 * line before the row had left rec pointing into it). */
static int too_long(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    s3l__reader_record(r, rec, r->head, r->head, r->line);
    rec->raw = NULL;
    s3l_error_set(err, S3L_EINVALID_INPUT,
                  "%s line %llu (byte offset %llu): the row is longer than the maximum "
                  "record size (%zu bytes)", r->name, (ull)r->line,
                  (ull)(r->base + r->head), r->opt.max_record_bytes);
    return s3l__reader_fatal(r, err, S3L_EINVALID_INPUT);
}

/* Finds the end of the row at head: 1 with *end at its '\n' (or the input's end), 0 at the end
 * of the input, S3L_READER_IDLE when a quiet stream gave no byte within idle_ms, < 0 on failure.
 * Resumable: the quote state survives refills and idle answers. */
static int row_end(struct s3l_reader *r, struct s3l_record *rec, size_t *end,
                   struct s3l_error *err)
{
    char delim = r->opt.csv_delimiter;
    for (;;) {
        const uint8_t *p = r->buf.ptr;
        size_t i = r->scan_pos, n = r->buf.len;
        while (i < n) {
            uint8_t c = p[i];
            if (r->cin_quotes) {
                const uint8_t *q = memchr(p + i, '"', n - i);
                if (!q) {
                    i = n;
                    break;
                }
                i = (size_t)(q - p) + 1;
                r->cin_quotes = false;
                r->cafter_quote = true;
                continue;
            }
            i++;
            if (c == '"' && (r->cfield_start || r->cafter_quote)) {
                r->cin_quotes = true;
                r->cafter_quote = r->cfield_start = false;
                continue;
            }
            r->cafter_quote = false;
            if (c == (uint8_t)delim) {
                r->cfield_start = true;
            } else if (c == '\n') {
                r->cfield_start = true;
                r->scan_pos = i;
                *end = i - 1;
                /* A row found whole in the buffer is held to the limit too, as NDJSON lines are
                 * (the line end and a CR before it not counted): the check below sees only rows
                 * whose end is not in the buffer yet. */
                if (*end - r->head - (*end > r->head && p[*end - 1] == '\r') >
                    r->opt.max_record_bytes)
                    return too_long(r, rec, err);
                return 1;
            } else {
                r->cfield_start = false;
            }
        }
        r->scan_pos = n;
        if (n - r->head > r->opt.max_record_bytes)
            return too_long(r, rec, err);
        int rc = s3l__reader_fill(r, err);
        if (rc < 0 || rc == S3L_READER_IDLE)
            return rc; /* idle: the scan state is kept, the next call goes on from scan_pos */
        if (rc == 0) {
            /* A compressed input cut inside its last member: an unterminated last row may be
             * cut too; it is left unread (the next run reads it once the member is whole). */
            if (r->cut && r->head < r->buf.len) {
                r->head = r->scan_pos = r->buf.len;
                return 0;
            }
            if (r->cin_quotes) {
                s3l_error_set(err, S3L_EINVALID_INPUT,
                              "%s line %llu (byte offset %llu): a quoted field is not closed "
                              "before the end of the input", r->name, (ull)r->line,
                              (ull)(r->base + r->head));
                return s3l__reader_fatal(r, err, S3L_EINVALID_INPUT);
            }
            if (r->head == r->buf.len)
                return 0;
            *end = r->buf.len;
            r->scan_pos = r->buf.len;
            r->cfield_start = true;
            r->cafter_quote = false;
            if (*end - r->head > r->opt.max_record_bytes)
                return too_long(r, rec, err);
            return 1;
        }
    }
}

static int build_tape(struct s3l_reader *r, size_t nf, struct s3l_record *rec,
                      struct s3l_error *err)
{
    if (ensure(&r->scan.tape, &r->scan.cap, 1 + 2 * nf) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "%s line %llu: out of memory", r->name,
                             (ull)rec->line);
    struct s3l_value *t = r->scan.tape;
    memset(&t[0], 0, sizeof(t[0]));
    t[0].kind = S3L_VALUE_OBJECT;
    t[0].len = (uint32_t)nf;
    t[0].end = (uint32_t)(1 + 2 * nf);
    for (size_t i = 0; i < nf; i++) {
        t[1 + 2 * i] = r->columns[i];
        t[1 + 2 * i].pos = r->cfields[i].pos;
        t[1 + 2 * i].end = (uint32_t)(2 + 2 * i);
        t[2 + 2 * i] = r->cfields[i];
        t[2 + 2 * i].end = (uint32_t)(3 + 2 * i);
    }
    r->scan.n = 1 + 2 * nf;
    rec->values = t;
    rec->n_values = r->scan.n;
    return 1;
}

static int csv_next(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    for (;;) {
        size_t end = 0;
        int rc = row_end(r, rec, &end, err);
        if (rc != 1)
            return rc;
        size_t start = r->head, next = end < r->buf.len ? end + 1 : end;
        uint64_t line = r->line;
        s3l__reader_record(r, rec, start, next, line);
        /* Count every line end in the row: quoted fields may hold some. */
        const uint8_t *p = r->buf.ptr + start, *e = r->buf.ptr + next;
        while (p < e && (p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
            r->line++;
            p++;
        }
        r->head = r->scan_pos = next;
        r->offset = r->base + next;
        size_t len = end - start;
        if (len && rec->raw[len - 1] == '\r')
            len--;
        rec->raw_len = len;
        if (len == 0)
            continue; /* a blank line */
        size_t bad;
        if (!s3l__utf8_valid((const uint8_t *)rec->raw, len, &bad))
            return s3l_error_set(err, S3L_EINVALID_INPUT,
                                 "%s line %llu, column %zu (byte offset %llu): expected valid "
                                 "UTF-8", r->name, (ull)line, bad + 1, (ull)(rec->offset + bad));
        s3l_arena_reset(&r->scan.arena);
        if (!r->columns) {
            enum s3l__sniff seen = s3l__input_sniff(rec->raw, len);
            if (seen == S3L__SNIFF_JSON || seen == S3L__SNIFF_NDJSON) {
                /* A JSON line would be taken for a header of odd column names (or fail on its
                 * quotes), and the rows would land wrong or not at all. */
                s3l_error_set(err, S3L_EINVALID_INPUT,
                              "%s line %llu: expected a CSV header row, got what looks like JSON",
                              r->name, (ull)line);
                s3l__input_hint(err, S3L_INPUT_CSV, rec->raw, len);
                return s3l__reader_fatal(r, err, S3L_EINVALID_INPUT);
            }
            rc = set_header(r, rec->raw, len, line, err);
            if (rc)
                return s3l__reader_fatal(r, err, rc);
            continue;
        }
        long nf = split(r, rec->raw, len, line, rec->offset, err);
        if (nf < 0)
            return (int)nf;
        if ((size_t)nf != r->n_columns)
            return s3l_error_set(err, S3L_EINVALID_INPUT,
                                 "%s line %llu (byte offset %llu): expected %zu fields (as in the "
                                 "header), got %ld", r->name, (ull)line, (ull)rec->offset,
                                 r->n_columns, nf);
        return build_tape(r, (size_t)nf, rec, err);
    }
}

const char *s3l_reader_csv_header(const struct s3l_reader *r, size_t *len)
{
    *len = r->header ? r->header_len : 0;
    return r->header;
}

char s3l_reader_csv_delimiter(const struct s3l_reader *r)
{
    return r->opt.format == S3L_INPUT_CSV ? r->opt.csv_delimiter : 0;
}

/* The format's table (input.h): rows are always scanned, so there is no scan step. */
const struct s3l__input_format s3l__csv_format = {
    .name = "csv", .open = csv_open, .next = csv_next, .cleanup = csv_cleanup,
};
