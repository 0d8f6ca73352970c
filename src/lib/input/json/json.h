/*
 * The json format's internal header (src/lib/input/json): the JSON scanner that fills a record's
 * tape (the NDJSON hot path), the JSON writer used for json columns and dead letters, record
 * scanning with its messages, and NDJSON line framing shared by the reader, the spans (lines.c)
 * and the fast path (fast.c). The framework it runs on is input/input.h; nothing here is used by
 * the CSV format.
 */
#ifndef S3L_JSON_INT_H
#define S3L_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "input/input.h"

/* Deepest nesting of arrays and objects a record may have (jansson allows 2048). */
#define S3L_JSON_MAX_DEPTH 1000

/*
 * Nonzero when some byte of the 8 bytes w (loaded little-endian) is '"', '\\', below 0x20 or at
 * least 0x80: the bytes a JSON string scanner must look at. The lowest flagged byte is exact
 * (borrows only propagate upwards), so __builtin_ctzll(m) >> 3 is its index. Used by the scanner
 * (scan.c) and the NDJSON fast path (fast.c).
 */
static inline uint64_t s3l__json_special_bytes(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t q = w ^ (ones * '"');
    uint64_t b = w ^ (ones * '\\');
    return (((q - ones) & ~q) | ((b - ones) & ~b) | ((w - ones * 0x20) & ~w) | w) & highs;
}

/*
 * Scans text (len bytes) holding exactly one JSON value (RFC 8259) with optional whitespace
 * around it into s->tape (reset first). Strings without escapes point into text; strings with
 * escapes are decoded into s->arena. Returns 0; S3L_EINVALID_INPUT with err_pos/err_what;
 * S3L_ETOO_LARGE when the value has more than max_values entries; S3L_ENOMEM.
 */
int s3l__json_scan(struct s3l__jscan *s, const char *text, size_t len);

/*
 * As s3l__json_scan, but the value may be followed by anything: *used is the number of bytes it
 * took (leading whitespace included). For reading a stream of values from a buffer.
 */
int s3l__json_scan_prefix(struct s3l__jscan *s, const char *text, size_t len, size_t *used);

/* Appends the compact JSON text of values[i] (and its subtree) to b. S3L_ETOO_LARGE, S3L_ENOMEM. */
int s3l__json_write(struct s3l_buf *b, const struct s3l_value *values, size_t i);
/* Appends s (n bytes of UTF-8) as a JSON string literal, quotes included. */
int s3l__json_write_string(struct s3l_buf *b, const char *s, size_t n);

/*
 * Scans rec's raw bytes (rec->source names the input in messages) as one JSON object into s's
 * tape, set as rec->values. line_start is the input offset where rec's first line starts (columns
 * count from it; an NDJSON record's own offset). 1, or S3L_EINVALID_INPUT naming input, line,
 * column and byte offset and what was expected ("a JSON object" when the value is another kind),
 * S3L_ETOO_LARGE, S3L_ENOMEM.
 */
int s3l__record_scan(struct s3l__jscan *s, struct s3l_record *rec, uint64_t line_start,
                     struct s3l_error *err);

/*
 * s3l__record_scan for an NDJSON line (its columns count from its own offset). A failure of the
 * input's first line also says which --input-format to give when the line looks like another
 * format (s3l__input_hint). Same returns.
 */
int s3l__line_scan(struct s3l__jscan *s, struct s3l_record *rec, struct s3l_error *err);

/* Whether the line [q, le) (line end excluded) is a row: not blank (spaces, tabs, CRs). Most
 * start with '{'. */
static inline bool s3l__is_row(const char *q, const char *le)
{
    if (q < le && *q == '{')
        return true;
    for (; q < le; q++)
        if (*q != ' ' && *q != '\t' && *q != '\r')
            return true;
    return false;
}

/* s3l__lines_next (steps.h), inlined into the converter's loop (lines.c, fast.c). */
static inline int s3l__lines_next_inline(struct s3l__lines *s, struct s3l_record *rec)
{
    while (s->p < s->end) {
        const char *q = s->p, *nl, *next;
        if (s->lens) {
            next = q + *s->lens++;
            nl = next[-1] == '\n' ? next - 1 : NULL;
        } else {
            nl = memchr(q, '\n', (size_t)(s->end - q));
            next = nl ? nl + 1 : s->end;
        }
        const char *le = nl ? nl : s->end;
        size_t len = (size_t)(le - q);
        if (len && le[-1] == '\r')
            len--;
        uint64_t off = s->offset, line = s->line;
        s->p = next;
        s->offset += (uint64_t)(next - q);
        if (nl)
            s->line++;
        if (!s3l__is_row(q, q + len))
            continue;
        rec->values = NULL;
        rec->n_values = 0;
        rec->line = line;
        rec->offset = off;
        rec->end_offset = s->offset;
        rec->raw = q;
        rec->raw_len = len;
        rec->source = s->source;
        return 1;
    }
    return 0;
}

#endif
