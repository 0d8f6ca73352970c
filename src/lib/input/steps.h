/*
 * The hot path's steps: how the runner (src/lib/pipeline: source.c, lanes.c) and the object
 * source (src/lib/source) read and convert NDJSON without a tape where they can -- unscanned
 * records, spans of whole lines, the fast converter and its fallback. They are internal (issue 9:
 * only the runner can sequence them; an embedder reads with s3l_reader_next and converts with
 * s3l_convert, include/s3l/input.h). docs/internals/input.md and json.md describe them.
 */
#ifndef S3L_INPUT_STEPS_H
#define S3L_INPUT_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "s3l/input.h"
#include "s3l/row.h"

/*
 * The steps' own answers, besides those of enum s3l_input_control (include/s3l/input.h), whose
 * values they do not take: positive, never an S3L_E* error code.
 */
enum s3l__input_step {
    /* s3l__reader_next_lines: the next line cannot come in a span; read it with
     * s3l__reader_next_raw (which reports it when it is too long). */
    S3L__READER_ONE = 2,
    /* s3l__convert_fast, s3l__convert_fast_lines: the fast path cannot decide this record;
     * nothing was written. */
    S3L__CONVERT_FALLBACK = 4,
};

/*
 * As s3l_reader_next, but an NDJSON record comes unscanned: rec->raw and raw_len hold the line
 * (without its line end; never a blank line), rec->values is NULL and n_values 0, so that the
 * caller can convert the bytes directly (s3l__convert_line) or scan them (s3l__reader_scan),
 * possibly on another thread after copying them. Other formats come scanned, as from
 * s3l_reader_next. Same results and errors otherwise, except that malformed JSON in a line is
 * only found when it is scanned.
 */
int s3l__reader_next_raw(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err);

/*
 * Scans the record just returned by s3l__reader_next_raw, or a line of a span from
 * s3l__reader_next_lines (still valid: before the next call), into
 * a tape owned by r, as s3l_reader_next would have. 1 (also when rec was scanned already), or the
 * errors of s3l_reader_next for a malformed record (S3L_EINVALID_INPUT naming input, line, column
 * and byte offset), S3L_ENOMEM.
 */
int s3l__reader_scan(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err);

/*
 * A span of whole NDJSON lines in memory (s3l__reader_next_lines), consumed line by line with
 * s3l__lines_next. Every line in [p, end) ends with a line feed, except the input's last line when
 * it has none. A span may be copied (its bytes, and lens for as many lines as it has) to be
 * consumed on another thread.
 */
struct s3l__lines {
    const char *p;      /* the first byte not consumed yet */
    const char *end;    /* just after the span's last line */
    uint64_t offset;    /* input byte offset of p */
    uint64_t line;      /* 1-based number of the line at p */
    uint64_t rows;      /* non-blank lines in [p, end) when the reader gave the span */
    const char *source; /* the input's name, for messages (not owned) */
    /* The length of each line in [p, end), its line end included, as the reader found them
     * (so that the lines are not searched twice), or NULL: then s3l__lines_next finds them. */
    const uint32_t *lens;
};

/* s3l__reader_next_lines answers S3L__READER_ONE and S3L_READER_IDLE (enum s3l_input_control). */

/*
 * NDJSON: the whole lines that follow in the reader's buffer, as a span holding at least one
 * and at most max_rows non-blank lines (rows) and, past the first line, at most about max_bytes
 * bytes; it ends just after its last non-blank line. Blank lines before or between rows are in
 * the span and skipped by s3l__lines_next. The span is consumed: s3l_reader_offset and
 * s3l_reader_line are now just after it. Its bytes are valid until the next call on r (the same
 * rule as a record's). Reads a block when the buffer holds no whole line. Returns 1 with a span,
 * 0 at the end of the input (trailing blank lines consumed), S3L__READER_ONE when the next line
 * cannot be given this way (over max_record_bytes, or the rest of such a line still being
 * skipped, or a failure already returned: then s3l__reader_next_raw gives it, with its error),
 * S3L_READER_IDLE when opened with idle_ms and no more bytes came within it (call again),
 * S3L_EIO (read failed, sticky), S3L_ENOMEM; S3L_EINVALID_ARGUMENT for another format or
 * max_rows 0.
 */
int s3l__reader_next_lines(struct s3l_reader *r, uint64_t max_rows, size_t max_bytes,
                          struct s3l__lines *out, struct s3l_error *err);

/*
 * The next non-blank line of s as an unscanned record (as s3l__reader_next_raw gives it: raw
 * without the line end and a trailing CR, values NULL, line, offset, end_offset, source), and
 * consumes it and the blank lines before it. 1 with a record, 0 when s holds no more rows (its
 * remaining blank lines consumed). rec->raw points into the span's bytes.
 */
int s3l__lines_next(struct s3l__lines *s, struct s3l_record *rec);

/* s3l__convert_fast's answer S3L__CONVERT_FALLBACK: enum s3l_input_control. */

/*
 * The fast path for an unscanned NDJSON record (s3l__reader_next_raw; rec->raw, raw_len, line,
 * offset and source are used): reads the line's bytes straight into sink as s3l_convert would
 * write the scanned record, without building a tape. It takes flat rows: an object whose keys,
 * without escapes, are all columns of the schema, each once, with scalar values that go into
 * their column without a coercion beyond s3l_convert's common ones (an integer into an integer
 * or float column, a number into a float column, a number or string into a string column, ISO-8601
 * text into a date, time or timestamp column, true/false into a bool column, null or a missing
 * key into a nullable column). Anything else -- an escape, a nested value, an unknown or repeated
 * key, a value that does not fit, malformed JSON -- returns S3L__CONVERT_FALLBACK before the sink
 * is called; the caller then scans the record and calls s3l_convert, which writes it or reports
 * the error exactly. Returns 0 when the row was written, S3L__CONVERT_FALLBACK, or the sink's
 * error (as s3l_convert returns it).
 */
int s3l__convert_fast(struct s3l_converter *c, const struct s3l_record *rec,
                     const struct s3l_row_sink *sink, struct s3l_error *err);

/*
 * Converts an unscanned NDJSON record (s3l__reader_next_raw, or a copy of one): s3l__convert_fast,
 * and when it cannot decide, scans rec->raw into a tape owned by c and calls s3l_convert. Returns
 * what s3l_convert returns, or for a malformed line S3L_EINVALID_INPUT with the message
 * s3l_reader_next would give (input, line, column, byte offset, what was expected). A scanned
 * record (rec->values set) goes straight to s3l_convert.
 */
int s3l__convert_line(struct s3l_converter *c, const struct s3l_record *rec,
                     const struct s3l_row_sink *sink, struct s3l_error *err);

/*
 * Converts the lines of s through the fast path (s3l__convert_fast) into sink, one row each, until
 * max_rows rows are written, s holds no more rows, or the next line is one the fast path does not
 * take: that line is left unconsumed in s, for the caller to convert another way (s3l__convert_line,
 * or scan it and s3l_convert). *rows: rows written, each from one line consumed. The rows may be
 * handed to the sink in batches; all are in it when this returns. Returns 0, or the sink's error
 * (as s3l_convert returns it; the rows of a failed call are not all written).
 */
int s3l__convert_fast_lines(struct s3l_converter *c, struct s3l__lines *s, uint64_t max_rows,
                           const struct s3l_row_sink *sink, uint64_t *rows,
                           struct s3l_error *err);

#endif
