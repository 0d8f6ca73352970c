/*
 * The json module's internal header: the JSON scanner that fills a record's tape (the NDJSON hot
 * path), UTF-8 validation, the JSON writer used for json columns and dead letters, and the
 * reader object shared by the NDJSON, JSON-array and CSV readers (src/lib/csv uses it too).
 */
#ifndef S3L_JSON_INT_H
#define S3L_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/input.h"
#include "util/util.h"

/* Deepest nesting of arrays and objects a record may have (jansson allows 2048). */
#define S3L_JSON_MAX_DEPTH 1000

/*
 * A scanner: the tape it fills and the arena holding decoded strings, both reused per record.
 * After a failure, err_pos is the byte offset of the fault within the text and err_what says
 * what was expected ("',' or '}'", "valid UTF-8", ...).
 */
struct s3l__jscan {
    struct s3l_value *tape;
    size_t n;
    size_t cap;
    size_t max_values; /* the tape never grows past this (bounded by max_record_bytes) */
    struct s3l_arena arena;
    size_t err_pos;
    const char *err_what;
};

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

void s3l__jscan_init(struct s3l__jscan *s, size_t max_values);
void s3l__jscan_cleanup(struct s3l__jscan *s);

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

/* Whether p[0..n) is valid UTF-8 (RFC 3629: no overlongs, surrogates or code points past
 * U+10FFFF); on false *bad is the offset of the first bad byte. */
bool s3l__utf8_valid(const uint8_t *p, size_t n, size_t *bad);

/* Appends the compact JSON text of values[i] (and its subtree) to b. S3L_ETOO_LARGE, S3L_ENOMEM. */
int s3l__json_write(struct s3l_buf *b, const struct s3l_value *values, size_t i);
/* Appends s (n bytes of UTF-8) as a JSON string literal, quotes included. */
int s3l__json_write_string(struct s3l_buf *b, const char *s, size_t n);

/* ---- readers (reader.c; the CSV reader is src/lib/csv/csv.c) -------------------------------- */

/*
 * A reader's state. The unconsumed input is buf.ptr[head .. buf.len); buf.ptr[0] is at input
 * offset base. buf's cap is max_record_bytes + 2 * block_bytes, so memory never depends on the
 * input's size.
 */
struct s3l_reader {
    struct s3l_reader_options opt;
    char *name;
    int fd;
    bool eof;                /* read() returned 0 */
    int sticky;              /* a fatal error repeated on every call, or 0 */
    struct s3l_error sticky_err;
    struct s3l_buf buf;
    size_t head;             /* first unconsumed byte */
    size_t scan_pos;         /* how far the search for the current record's end got */
    uint64_t base;           /* input offset of buf.ptr[0] */
    uint64_t line;           /* line number at head */
    uint64_t line_start;     /* JSON: input offset of the first byte of line `line` */
    uint64_t rec_line_start; /* JSON: input offset of the first byte of the last record's line */
    uint64_t offset;         /* resume offset: just after the last record returned or skipped */
    bool started;            /* the BOM check at offset 0 is done */
    bool skipping;           /* NDJSON: inside a line over max_record_bytes, skipping to its end */
    bool defer;              /* NDJSON: return the line unscanned (s3l_reader_next_raw) */
    uint64_t skip_line;      /* that line's number */
    struct s3l__jscan scan;
    uint32_t *span_lens;     /* NDJSON spans: each line's length with its line end (lines.c) */
    /* JSON array */
    int jstate;
    int jdepth;
    bool jin_str;
    bool jesc;
    /* CSV */
    bool cin_quotes;
    bool cafter_quote;
    bool cfield_start;
    struct s3l_value *cfields; /* one row's fields before they go on the tape */
    size_t cfields_cap;
    char *header;            /* the header line (owned), NUL-terminated */
    size_t header_len;
    size_t n_columns;
    struct s3l_value *columns; /* key entries: name str/len into header_names */
    char *header_names;
};

/*
 * Scans rec's raw bytes (rec->source names the input in messages) as one JSON object into s's
 * tape, set as rec->values. line_start is the input offset where rec's first line starts (columns
 * count from it; an NDJSON record's own offset). 1, or S3L_EINVALID_INPUT naming input, line,
 * column and byte offset and what was expected ("a JSON object" when the value is another kind),
 * S3L_ETOO_LARGE, S3L_ENOMEM.
 */
int s3l__record_scan(struct s3l__jscan *s, struct s3l_record *rec, uint64_t line_start,
                     struct s3l_error *err);

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

/* s3l_lines_next, inlined into the converter's loop (lines.c, fast.c). */
static inline int s3l__lines_next(struct s3l_lines *s, struct s3l_record *rec)
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

/* Reads one more block. 1 when bytes came, 0 at end of input, S3L_EIO (sticky) or S3L_ENOMEM. */
int s3l__reader_fill(struct s3l_reader *r, struct s3l_error *err);
/* Skips a UTF-8 byte order mark at input offset 0. */
int s3l__reader_skip_bom(struct s3l_reader *r, struct s3l_error *err);
/* Makes err a sticky failure of r (returned again by every later call). Returns code. */
int s3l__reader_fatal(struct s3l_reader *r, struct s3l_error *err, int code);
/* Fills rec's position fields for a record spanning buf [start, end) of bytes, line `line`. */
void s3l__reader_record(const struct s3l_reader *r, struct s3l_record *rec, size_t start,
                        size_t end, uint64_t line);

int s3l__csv_open(struct s3l_reader *r, struct s3l_error *err);
int s3l__csv_next(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err);
void s3l__csv_cleanup(struct s3l_reader *r);

/* s3l_infer_value for a value nested depth levels deep, so that a field grown inside a struct
 * keeps to inference's nesting limit (deeper values become json). */
int s3l__infer_value_at(const struct s3l_value *values, size_t i,
                        const struct s3l_infer_options *opt, int depth, struct s3l_type *out);

/*
 * The schema growth walk (grow.c): the keys of the object values[i] that fields (n of them)
 * lacks, at any depth inside struct, list and map fields, whose value has a type. With apply
 * false it only tells whether there is one (returns 1) and changes nothing; with apply true it
 * appends each as a nullable field (typed by inference) and counts them in *added. Keys that no
 * field can be named after (empty, or holding NUL) are skipped. 0, 1 or S3L_ENOMEM.
 */
int s3l__grow_fields(struct s3l_field **fields, size_t *n, const struct s3l_value *values,
                     size_t i, const struct s3l_infer_options *opt, int depth, bool apply,
                     size_t *added);

#endif
