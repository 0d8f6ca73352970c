/*
 * The json format's two readers on the input framework (input/reader.c): NDJSON (one object per
 * line, blank lines skipped; https://github.com/ndjson/ndjson-spec) and the streaming reader of
 * one JSON array of objects (or of top-level objects back to back), which finds each element's
 * extent with a resumable bracket matcher and only then scans it. Also record scanning with its
 * messages (line, column and byte offset of the offending byte), which the spans and the
 * converter's fast path share.
 */
#include <stdio.h>
#include <string.h>

#include "input/json/json.h"

typedef unsigned long long ull;

/* Counts the line ends in buf [from, to). */
static uint64_t count_lines(const struct s3l_reader *r, size_t from, size_t to)
{
    uint64_t n = 0;
    const uint8_t *p = r->buf.ptr + from, *end = r->buf.ptr + to;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

/*
 * The line and 1-based column (in bytes, counted from the start of that line) of byte pos of
 * rec's raw bytes: a record may span lines (a pretty-printed array element) and may start in the
 * middle of a line (an element after "[  ", whose line starts at input offset line_start).
 */
static void where(const struct s3l_record *rec, uint64_t line_start, size_t pos, uint64_t *line,
                  uint64_t *col)
{
    uint64_t l = rec->line;
    size_t last = SIZE_MAX;
    for (size_t i = 0; i < pos && i < rec->raw_len; i++)
        if (rec->raw[i] == '\n')
            l++, last = i;
    *line = l;
    if (last != SIZE_MAX)
        *col = pos - last;
    else
        *col = rec->offset - S3L_MIN(line_start, rec->offset) + pos + 1;
}

static int scan_error(const struct s3l__jscan *s, const struct s3l_record *rec,
                      uint64_t line_start, int rc, struct s3l_error *err)
{
    if (rc == S3L_ENOMEM)
        return s3l_error_set(err, S3L_ENOMEM, "%s line %llu: out of memory", rec->source,
                             (ull)rec->line);
    uint64_t line, col;
    where(rec, line_start, s->err_pos, &line, &col);
    return s3l_error_set(err, S3L_EINVALID_INPUT,
                         "%s line %llu, column %llu (byte offset %llu): expected %s", rec->source,
                         (ull)line, (ull)col, (ull)(rec->offset + s->err_pos),
                         s->err_what ? s->err_what : "valid JSON");
}

static const char *kind_name(unsigned kind)
{
    static const char *const names[] = {"null", "false", "true", "a number",
                                        "a string", "an array", "an object"};
    return kind < 7 ? names[kind] : "?";
}

/* The scanned tape as rec's record when it is an object: 1, or an error. */
static int take_object(const struct s3l__jscan *s, struct s3l_record *rec, uint64_t line_start,
                       struct s3l_error *err)
{
    if (s->tape[0].kind != S3L_VALUE_OBJECT) {
        uint64_t line, col;
        where(rec, line_start, s->tape[0].pos, &line, &col);
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "%s line %llu, column %llu (byte offset %llu): expected a JSON "
                             "object, got %s", rec->source, (ull)line, (ull)col,
                             (ull)(rec->offset + s->tape[0].pos), kind_name(s->tape[0].kind));
    }
    rec->values = s->tape;
    rec->n_values = s->n;
    return 1;
}

int s3l__record_scan(struct s3l__jscan *s, struct s3l_record *rec, uint64_t line_start,
                     struct s3l_error *err)
{
    int rc = s3l__json_scan(s, rec->raw, rec->raw_len);
    if (rc)
        return scan_error(s, rec, line_start, rc, err);
    return take_object(s, rec, line_start, err);
}

int s3l__line_scan(struct s3l__jscan *s, struct s3l_record *rec, struct s3l_error *err)
{
    int rc = s3l__record_scan(s, rec, rec->offset, err);
    if (rc == S3L_EINVALID_INPUT && rec->line == 1 && rec->offset <= 3)
        s3l__input_hint(err, S3L_INPUT_NDJSON, rec->raw, rec->raw_len);
    return rc;
}

/* Scans rec's raw bytes as one JSON object. 1 with the tape in rec, or an error. */
static int scan_object(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    return s3l__record_scan(&r->scan, rec, r->rec_line_start, err);
}

/*
 * A record over max_record_bytes starting at head, its line end not in sight: reported at once
 * (without reading on to find the line end, which may never come: /dev/zero), naming where the
 * record starts and the offset by which the limit was crossed. The bytes buffered so far are
 * consumed; the next calls skip the rest of the line (ndjson_skip).
 */
static int ndjson_too_long(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    uint64_t line = r->line, off = r->base + r->head;
    r->head = r->scan_pos = r->buf.len;
    r->skipping = true;
    r->skip_line = line;
    s3l__reader_record(r, rec, r->head, r->head, line);
    rec->offset = off;
    rec->raw = NULL;
    r->offset = rec->end_offset;
    return s3l_error_set(err, S3L_EINVALID_INPUT,
                         "%s line %llu (byte offset %llu): the record is longer than the maximum "
                         "record size (%zu bytes): no line end by byte offset %llu (reading on "
                         "skips the rest of the line)", r->name, (ull)line, (ull)off,
                         r->opt.max_record_bytes, (ull)rec->end_offset);
}

/*
 * Skips the rest of a line over the limit, reading at most max_record_bytes (and one block) per
 * call, so that a line that never ends costs each call bounded work and the caller keeps control
 * (it may stop or go on). 0 when the line ended (or the input did), else S3L_EINVALID_INPUT
 * saying how far the skip got; rec then covers the bytes skipped by this call.
 */
static int ndjson_skip(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    uint64_t from = r->base + r->head, budget = r->opt.max_record_bytes;
    for (;;) {
        const uint8_t *p = r->buf.ptr;
        const uint8_t *nl = r->head < r->buf.len
                                ? memchr(p + r->head, '\n', r->buf.len - r->head)
                                : NULL;
        if (nl) {
            r->head = r->scan_pos = (size_t)(nl - p) + 1;
            r->line = r->skip_line + 1;
            break;
        }
        r->head = r->scan_pos = r->buf.len;
        if (r->base + r->head - from > budget) {
            s3l__reader_record(r, rec, r->head, r->head, r->skip_line);
            rec->offset = from;
            rec->raw = NULL;
            r->offset = rec->end_offset;
            return s3l_error_set(err, S3L_EINVALID_INPUT,
                                 "%s line %llu (byte offset %llu): still skipping the record "
                                 "longer than the maximum record size (%zu bytes): no line end "
                                 "by byte offset %llu", r->name, (ull)r->skip_line, (ull)from,
                                 r->opt.max_record_bytes, (ull)rec->end_offset);
        }
        int rc = s3l__reader_fill(r, err);
        if (rc < 0 || rc == S3L_READER_IDLE)
            return rc; /* idle: still skipping; the next call goes on */
        if (rc == 0)
            break;
    }
    r->skipping = false;
    r->offset = r->base + r->head;
    return 0;
}

static int ndjson_next(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    if (r->skipping) {
        int rc = ndjson_skip(r, rec, err);
        if (rc)
            return rc;
    }
    for (;;) {
        const uint8_t *p = r->buf.ptr;
        const uint8_t *nl = r->scan_pos < r->buf.len
                                ? memchr(p + r->scan_pos, '\n', r->buf.len - r->scan_pos)
                                : NULL;
        size_t end, next;
        if (!nl) {
            r->scan_pos = r->buf.len;
            if (r->buf.len - r->head > r->opt.max_record_bytes)
                return ndjson_too_long(r, rec, err);
            if (!r->eof) {
                int rc = s3l__reader_fill(r, err);
                if (rc < 0 || rc == S3L_READER_IDLE)
                    return rc;
                continue;
            }
            if (r->head == r->buf.len)
                return 0;
            end = next = r->buf.len;
        } else {
            end = (size_t)(nl - p);
            next = end + 1;
        }
        size_t start = r->head;
        s3l__reader_record(r, rec, start, next, r->line);
        r->rec_line_start = rec->offset; /* a line is a record */
        r->head = r->scan_pos = next;
        r->offset = r->base + next;
        if (nl)
            r->line++;
        size_t len = end - start;
        if (len && p[end - 1] == '\r')
            len--;
        rec->raw_len = len;
        if (len > r->opt.max_record_bytes) {
            rec->raw = NULL;
            rec->raw_len = 0;
            return s3l_error_set(err, S3L_EINVALID_INPUT,
                                 "%s line %llu (byte offset %llu): the record is longer than the "
                                 "maximum record size (%zu bytes)", r->name, (ull)rec->line,
                                 (ull)rec->offset, r->opt.max_record_bytes);
        }
        if (!s3l__is_row(rec->raw, rec->raw + len))
            continue;
        return r->defer ? 1 : s3l__line_scan(&r->scan, rec, err);
    }
}

/* ---- one JSON array of objects ------------------------------------------------------------- */

/*
 * States: before '[' (or the first object), after '[', after an element, after ',', after ']';
 * J_OBJECTS reads top-level objects one after another (a file that is one object, such as a
 * GeoJSON FeatureCollection, or pretty-printed objects back to back); J_RESUME is where a reader
 * opened at an offset starts: ',' or ']' continue an array, '{' continues objects.
 */
enum { J_START, J_FIRST, J_AFTER, J_ELEMENT, J_DONE, J_OBJECTS, J_RESUME };

/* Moves head over whitespace (counting lines). 1 when a byte is at head, 0 at the end,
 * S3L_READER_IDLE (a quiet stream), < 0. */
static int skip_ws(struct s3l_reader *r, struct s3l_error *err)
{
    for (;;) {
        while (r->head < r->buf.len) {
            uint8_t c = r->buf.ptr[r->head];
            if (c == '\n')
                r->line++, r->line_start = r->base + r->head + 1;
            else if (c != ' ' && c != '\t' && c != '\r')
                return 1;
            r->head++;
        }
        r->scan_pos = r->head;
        int rc = s3l__reader_fill(r, err);
        if (rc <= 0 || rc == S3L_READER_IDLE)
            return rc;
    }
}

static int json_fatal(struct s3l_reader *r, struct s3l_error *err, const char *what)
{
    s3l_error_set(err, S3L_EINVALID_INPUT, "%s line %llu (byte offset %llu): expected %s", r->name,
                  (ull)r->line, (ull)(r->base + r->head), what);
    return s3l__reader_fatal(r, err, S3L_EINVALID_INPUT);
}

static int element_too_long(struct s3l_reader *r, struct s3l_error *err)
{
    s3l_error_set(err, S3L_EINVALID_INPUT,
                  "%s line %llu (byte offset %llu): the %s is longer than the maximum record "
                  "size (%zu bytes)", r->name, (ull)r->line, (ull)(r->base + r->head),
                  r->jstate == J_OBJECTS ? "top-level object" : "array element",
                  r->opt.max_record_bytes);
    return s3l__reader_fatal(r, err, S3L_EINVALID_INPUT);
}

/* Finds the end of the element at head (resumable across fills): 1 with *end,
 * S3L_READER_IDLE (a quiet stream: nothing consumed), or < 0. */
static int element_extent(struct s3l_reader *r, size_t *end, struct s3l_error *err)
{
    for (;;) {
        const uint8_t *p = r->buf.ptr;
        for (size_t i = r->scan_pos; i < r->buf.len; i++) {
            uint8_t c = p[i];
            if (r->jin_str) {
                if (r->jesc)
                    r->jesc = false;
                else if (c == '\\')
                    r->jesc = true;
                else if (c == '"') {
                    r->jin_str = false;
                    if (r->jdepth == 0) {
                        *end = i + 1;
                        return 1;
                    }
                }
                continue;
            }
            if (c == '"') {
                r->jin_str = true;
            } else if (c == '{' || c == '[') {
                r->jdepth++;
            } else if (c == '}' || c == ']') {
                if (r->jdepth == 0) { /* a scalar element ended by the array's ']' */
                    *end = i;
                    return 1;
                }
                if (--r->jdepth == 0) {
                    *end = i + 1;
                    return 1;
                }
            } else if (r->jdepth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\t' ||
                                          c == '\r')) {
                *end = i;
                return 1;
            }
        }
        r->scan_pos = r->buf.len;
        if (r->buf.len - r->head > r->opt.max_record_bytes)
            return element_too_long(r, err);
        int rc = s3l__reader_fill(r, err);
        if (rc < 0 || rc == S3L_READER_IDLE)
            return rc; /* idle: json_element starts over at the next call (nothing consumed) */
        if (rc == 0) {
            if (r->cut)
                return 0; /* a compressed input cut short: the element is left unread */
            if (r->jdepth == 0 && !r->jin_str) {
                *end = r->buf.len;
                return 1;
            }
            return json_fatal(r, err, "the rest of the array element (the input ended)");
        }
    }
}

static int json_element(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    size_t end = 0, used = 0, avail = r->buf.len - r->head;
    /* Optimistic single pass: scan the element straight from the buffer. It is complete when the
     * scan succeeds before the end of the buffered bytes (or at the end of the input); else
     * (an element cut by the block boundary, or a malformed one) the bracket matcher finds its
     * extent first, refilling as needed, and the element is scanned again. */
    int rc = avail ? s3l__json_scan_prefix(&r->scan, (const char *)r->buf.ptr + r->head, avail,
                                           &used)
                   : S3L_EINVALID_INPUT;
    if (rc == S3L_ENOMEM)
        return s3l_error_set(err, S3L_ENOMEM, "%s: out of memory", r->name);
    bool whole = rc == 0 && (used < avail || r->eof) && used <= r->opt.max_record_bytes;
    if (whole) {
        end = r->head + used;
    } else {
        r->scan_pos = r->head;
        r->jdepth = 0;
        r->jin_str = r->jesc = false;
        rc = element_extent(r, &end, err);
        if (rc != 1)
            return rc; /* idle, or 0: cut short (left unread) */
        if (end - r->head > r->opt.max_record_bytes)
            return element_too_long(r, err);
    }
    size_t start = r->head;
    s3l__reader_record(r, rec, start, end, r->line);
    r->rec_line_start = r->line_start;
    uint64_t lines = count_lines(r, start, end);
    if (lines) {
        r->line += lines;
        size_t k = end;
        while (r->buf.ptr[k - 1] != '\n')
            k--;
        r->line_start = r->base + k;
    }
    r->head = r->scan_pos = end;
    r->offset = r->base + end;
    if (r->jstate != J_OBJECTS)
        r->jstate = J_AFTER;
    return whole ? take_object(&r->scan, rec, r->rec_line_start, err) : scan_object(r, rec, err);
}

static int json_next(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    for (;;) {
        int rc = skip_ws(r, err);
        if (rc < 0 || rc == S3L_READER_IDLE)
            return rc;
        if (rc == 0) {
            if (r->cut)
                return 0; /* cut short inside the array: what follows the last element is
                             left unread, at the offset after it */
            if (r->jstate == J_START || r->jstate == J_DONE || r->jstate == J_OBJECTS ||
                r->jstate == J_RESUME) {
                /* The closing ']' and trailing whitespace are consumed too: the resume offset
                 * is the end, and a reader resumed there reads nothing. */
                r->offset = r->base + r->head;
                return 0;
            }
            return json_fatal(r, err, "',' or ']' (the input ended inside the array)");
        }
        uint8_t c = r->buf.ptr[r->head];
        switch (r->jstate) {
        case J_START:
        case J_RESUME:
            if (c == '{') {
                r->jstate = J_OBJECTS;
                return json_element(r, rec, err);
            }
            if (r->jstate == J_RESUME) {
                r->jstate = J_AFTER;
                break;
            }
            if (c != '[') {
                json_fatal(r, err, "'[' (a JSON array of objects) or '{' (objects)");
                if (r->base + r->head <= 3 && r->line == 1 &&
                    s3l__input_hint(err, S3L_INPUT_JSON, (const char *)r->buf.ptr + r->head,
                                    r->buf.len - r->head))
                    r->sticky_err = *err;
                return S3L_EINVALID_INPUT;
            }
            r->head++;
            r->jstate = J_FIRST;
            break;
        case J_OBJECTS:
            if (c != '{')
                return json_fatal(r, err, "'{' (the next top-level object)");
            return json_element(r, rec, err);
        case J_FIRST:
            if (c == ']') {
                r->head++;
                r->jstate = J_DONE;
                break;
            }
            return json_element(r, rec, err);
        case J_ELEMENT:
            return json_element(r, rec, err);
        case J_AFTER:
            if (c == ',') {
                r->head++;
                r->jstate = J_ELEMENT;
            } else if (c == ']') {
                r->head++;
                r->jstate = J_DONE;
            } else {
                return json_fatal(r, err, "',' or ']' after an array element");
            }
            break;
        default:
            return json_fatal(r, err, "the end of the input after the array's ']'");
        }
    }
}

/* ---- the format tables (input.h) ------------------------------------------------------------ */

/* A deferred NDJSON line, maybe from a span: it starts its line. */
static int ndjson_scan(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err)
{
    return s3l__line_scan(&r->scan, rec, err);
}

/* A reader opened at an offset or on a resumed stream expects ',' or ']' (an array) or '{'. */
static int json_open(struct s3l_reader *r, struct s3l_error *err)
{
    (void)err;
    if (r->opt.start_offset > 0 || r->opt.resume)
        r->jstate = J_RESUME;
    return 0;
}

const struct s3l__input_format s3l__ndjson_format = {
    .name = "ndjson", .next = ndjson_next, .scan = ndjson_scan,
};

const struct s3l__input_format s3l__json_format = {
    .name = "json", .open = json_open, .next = json_next, .scan = scan_object,
};
