/*
 * Input readers and the record converter: how bytes of NDJSON, a JSON array of objects or CSV
 * become rows of a schema (include/s3l/schema.h) handed to a row sink (include/s3l/row.h).
 *
 * A reader pulls one record at a time from a file descriptor (stdin works), reading blocks of
 * block_bytes; memory is bounded by max_record_bytes, never by the input's size. Each record comes
 * as a tape: a flat array of struct s3l_value in document order, where record.values[0] is the
 * top-level object, an object's members follow it as (key, value) pairs and every entry says
 * where its subtree ends. Strings are decoded UTF-8; numbers keep their text. Records carry the
 * line number and the byte offset just after them, which the runner checkpoints; a reader can be
 * opened at such an offset (with the CSV header it recorded) to resume.
 *
 * Inference (s3l_infer_*) turns a sample of records into a schema; the converter (s3l_convert)
 * turns a record into row-sink calls for a schema, applying only lossless coercions.
 * docs/internals/input.md describes the readers and the converter, json.md and csv.md the
 * formats, schema.md the types and coercions.
 */
#ifndef S3L_INPUT_H
#define S3L_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/error.h"
#include "s3l/row.h"
#include "s3l/schema.h"

/* ---- records ------------------------------------------------------------------------------- */

enum s3l_value_kind {
    S3L_VALUE_NULL = 0,
    S3L_VALUE_FALSE,
    S3L_VALUE_TRUE,
    S3L_VALUE_NUMBER, /* str/len: the number's text as written (RFC 8259 section 6 grammar) */
    S3L_VALUE_STRING, /* str/len: decoded, valid UTF-8; may hold NUL bytes */
    S3L_VALUE_ARRAY,  /* len: element count; the elements follow */
    S3L_VALUE_OBJECT, /* len: member count; (key STRING, value) pairs follow */
};

/* flags of a value */
#define S3L_VALUE_TEXT 0x1u /* a CSV field: text whose type is read from its shape */
#define S3L_VALUE_INT  0x2u /* a NUMBER without fraction or exponent */

/*
 * One entry of a record's tape (24 bytes). Pointers stay valid until the next s3l_reader_next.
 * kind and flags are 16-bit rather than char-sized on purpose: a store through a char type may
 * alias anything, which would make the compiler reload the scanner's state after every entry.
 */
struct s3l_value {
    uint16_t kind;  /* enum s3l_value_kind */
    uint16_t flags; /* S3L_VALUE_* */
    uint32_t len;   /* bytes (STRING, NUMBER), elements (ARRAY) or members (OBJECT) */
    uint32_t end;   /* index of the first entry after this value and everything inside it */
    uint32_t pos;   /* byte offset of the value within its record (for messages) */
    const char *str;
};

struct s3l_record {
    const struct s3l_value *values; /* the tape; values[0] is an OBJECT */
    size_t n_values;
    uint64_t line;       /* 1-based line number of the record's first line */
    uint64_t offset;     /* byte offset of the record's first byte in the input */
    uint64_t end_offset; /* byte offset just after the record (its line end included) */
    const char *raw;     /* the record's bytes, line end excluded (for dead letters) */
    size_t raw_len;
    const char *source; /* the input's name given at open, for messages */
};

/*
 * A deep copy of rec in one allocation that owns everything it points to (tape, strings, raw
 * bytes, source name), for callers that keep records past the next read (e.g. the sample held
 * for inference before the schema is known). *out: s3l_free. Errors: S3L_ENOMEM.
 */
int s3l_record_clone(const struct s3l_record *rec, struct s3l_record **out);

/* ---- control answers ----------------------------------------------------------------------- */

/*
 * The answers of the reader's and the converter's steps that are neither success (0, or 1 for a
 * record) nor an error: each step's own meaning of "not done this way, do this instead". They
 * are positive, so never an S3L_E* error code (those are negative), and each has its own value,
 * so one step's answer is never taken for another's.
 */
enum s3l_input_control {
    /* s3l_convert (stop_on_unknown): the record has columns the schema lacks; nothing written. */
    S3L_CONVERT_NEW_COLUMNS = 1,
    /* 2: S3L__READER_ONE, an answer of the runner's steps (src/lib/input/steps.h) */
    /* s3l_reader_next (and the runner's steps, src/lib/input/steps.h) opened with idle_ms: no
     * byte came within idle_ms and no record is whole yet; nothing consumed (call again). */
    S3L_READER_IDLE = 3,
    /* 4: S3L__CONVERT_FALLBACK (src/lib/input/steps.h) */
};

/* ---- readers ------------------------------------------------------------------------------- */

enum s3l_input_format {
    S3L_INPUT_NDJSON = 1, /* one JSON object per line (blank lines skipped) */
    S3L_INPUT_JSON,       /* one JSON array of objects [{...}, {...}], or objects back to back */
    S3L_INPUT_CSV,        /* RFC 4180 with a header row */
    S3L_INPUT_DEBEZIUM,   /* Debezium change events, one per line, each becoming one row */
};

/* How an input's bytes are compressed (the runner takes it from the file name: .gz, .zst). */
enum s3l_input_compression {
    S3L_INPUT_PLAIN = 0, /* not compressed */
    S3L_INPUT_GZIP,      /* gzip (RFC 1952), one member or several back to back */
    S3L_INPUT_ZSTD,      /* zstd (RFC 8878), one frame or several; windows up to 16 MiB */
};

/* "ndjson" (also "jsonl"), "json", "csv", "debezium". S3L_EINVALID_CONFIG naming the accepted
 * names. */
int s3l_input_format_parse(const char *name, enum s3l_input_format *out, struct s3l_error *err);

/*
 * A CSV field delimiter as a user writes it (--csv-delimiter, a Pipeline document's csvDelimiter):
 * one ASCII character, or "tab" or "\t" (a backslash and t) for a tab, into *out. Errors:
 * S3L_EINVALID_CONFIG, err saying what was expected, for empty text, more than one character, a
 * non-ASCII byte, and the quote, CR and LF (RFC 4180 section 2: they quote fields and end rows).
 * The same rule as the config documents' (util/delim.c).
 */
int s3l_csv_delimiter_parse(const char *text, char *out, struct s3l_error *err);

#define S3L_READER_OPTIONS_VERSION   1
#define S3L_DEFAULT_MAX_RECORD_BYTES (16u << 20)
#define S3L_DEFAULT_BLOCK_BYTES      (1u << 20)

struct s3l_reader_options {
    int version;                  /* S3L_READER_OPTIONS_VERSION */
    enum s3l_input_format format; /* required */
    const char *name;             /* the input's name in messages ("orders.ndjson", "stdin") */
    size_t max_record_bytes;      /* longest record (line, array element, CSV row); 0: 16 MiB */
    size_t block_bytes;           /* read() size; 0: 1 MiB */
    uint64_t start_offset;        /* resume at this byte offset (a record's end_offset) */
    uint64_t start_line;          /* line number of the line at start_offset; 0: 1 */
    char csv_delimiter;           /* never '"', CR or LF; 0: detected from the header row:
                                     ',' when it holds one outside quotes, else the most
                                     frequent of ';', tab and '|' (',' when none occurs) */
    /* CSV resuming at start_offset > 0: the header line as s3l_reader_csv_header gave it. */
    const char *csv_header;
    size_t csv_header_len;
    /* The input continues a stream read before, at the boundary after a record (a stream
     * resent from its committed offset): read as at a start_offset > 0, but without seeking
     * (JSON expects ',' ']' or '{', CSV takes csv_header and reads no header line). */
    bool resume;
    /* Every read of a stream (a pipe, a socket; any format): wait at most this long (ms) for
     * more bytes before answering S3L_READER_IDLE, so that the caller can commit what it has
     * and see a stop request while the stream is quiet; 0: wait as long as it takes. */
    int idle_ms;
    /* The input's bytes are compressed so: the reader decompresses them as it reads (offsets,
     * lines and start_offset are then those of the decompressed bytes; resuming decompresses
     * from the start and drops the bytes before start_offset). Corrupt compressed data is a
     * sticky S3L_EINVALID_INPUT naming the compressed byte offset; a last member or frame cut
     * short ends the input there (s3l_reader_cut), and an unterminated last CSV row or JSON
     * element in it is left unread. */
    enum s3l_input_compression compression;
    /*
     * Optional: the input's bytes come from this function instead of the fd given to
     * s3l_reader_open (which is then ignored: pass -1). read copies up to want (> 0) bytes
     * into dst and sets *got: 0 with *got > 0, 0 with *got 0 at the end of the input, or a
     * negative S3L_E* code with err set (the reader then fails as on a read error, sticky, with
     * that code and message). seek (may be NULL) makes the next read start at byte offset
     * offset (0 or a negative S3L_E* code); it is called once, at open, when start_offset > 0
     * and the input is not compressed; without it (and for a compressed input) the reader reads
     * and drops the bytes before start_offset. idle_ms is ignored for such an input.
     * Used by the object source (s3l/object_source.h: ranged GETs of an object).
     */
    int (*read)(void *ctx, void *dst, size_t want, size_t *got, struct s3l_error *err);
    int (*seek)(void *ctx, uint64_t offset, struct s3l_error *err);
    void *io_ctx; /* passed to read and seek */
    /* A plain input (not compressed) read only up to this byte offset (> start_offset), taken
     * as its end: the reader reads no byte past it (a followed file's last line end, so that a
     * line still being written is not read before its line end comes). 0: to the real end. */
    uint64_t end_offset;
};

struct s3l_reader;

/*
 * Opens a reader over fd (not owned: the caller closes it after s3l_reader_free). When
 * start_offset > 0 the reader seeks there (lseek, or reads and discards on a pipe); for JSON it
 * then expects ',' or ']' (just after an array element) or '{' (the next top-level object), for
 * CSV it needs csv_header.
 * Errors: S3L_EINVALID_ARGUMENT (bad options; CSV resume without header), S3L_EIO (seek/read
 * failed, naming the input), S3L_ENOMEM.
 */
int s3l_reader_open(int fd, const struct s3l_reader_options *opt, struct s3l_reader **out,
                    struct s3l_error *err);

/*
 * Reads the next record into *rec. Returns 1 with a record, 0 at the end of the input, or:
 *  - S3L_EINVALID_INPUT: a malformed record (bad JSON, invalid UTF-8, a line that is not an
 *    object, a record over max_record_bytes ("longer than the maximum record size"), a CSV row
 *    with the wrong number of fields), err naming input, line, byte offset and column.
 *    rec->line, offset, end_offset and raw (NULL when too long) describe the bad record. NDJSON
 *    lines and CSV rows are independent: the next call continues after it, as it does after a
 *    bad JSON array element whose extent is known. A broken array structure, an element or CSV
 *    row over the limit, or a CSV quote left open at the end cannot be resynchronised: that error
 *    then repeats on every call (sticky). A record over the limit is reported as soon as the
 *    limit is crossed, without reading on to its end; an NDJSON line over it is then skipped by
 *    the next calls, each reading at most max_record_bytes plus a block and returning
 *    S3L_EINVALID_INPUT ("still skipping") until the line ends, so no call does unbounded work.
 *  - S3L_READER_IDLE (opened with idle_ms > 0): no byte came within idle_ms and the next record
 *    is not whole yet; nothing is consumed, the next call goes on where this one stopped.
 *  - S3L_EIO: read() failed (sticky, errno in err->sys_errno); S3L_ENOMEM.
 * Nothing in *rec outlives the next call or s3l_reader_free.
 */
int s3l_reader_next(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err);

/*
 * Whether the input's structure is broken beyond resynchronisation (a JSON array cut short or
 * malformed between elements, an element or CSV row over the limit, a CSV quote left open at the
 * end): every further s3l_reader_next returns the same error (sticky). A caller that skips bad
 * records must stop here instead, or it would skip the same error forever. False after an error
 * that names one record (the next call goes on after it), and for S3L_EIO.
 */
bool s3l_reader_broken(const struct s3l_reader *r);

/* Byte offset just after the last record returned or skipped (the resume point). After the end
 * of the input (s3l_reader_next returned 0) it also covers what follows the last record: blank
 * lines, a JSON array's closing ']' and whitespace. */
uint64_t s3l_reader_offset(const struct s3l_reader *r);

/* Number of the line at s3l_reader_offset (1-based): start_line for a resumed reader. */
uint64_t s3l_reader_line(const struct s3l_reader *r);

/*
 * The column types the input declares itself, as a schema of nullable columns (NULL when it
 * declares none): for the debezium format (docs/cli.md, "CDC rows"), _openetl_op string,
 * _openetl_seq int64 and _openetl_id uuid, and, once events with the schema/payload wrapper were
 * read, the table's columns with the types their Connect schemas give (the first type a column
 * was declared with wins; nested Connect types are left to inference). The runner lays it over
 * the inferred schema. *out: s3l_schema_free. Errors: S3L_ENOMEM. Other formats: *out NULL.
 */
int s3l_reader_schema_hint(const struct s3l_reader *r, struct s3l_schema **out);

/*
 * Records read and skipped by the format's own rules so far: for the debezium format its
 * tombstones (a null value: the line `null`, or a wrapper whose payload is null). 0 for the
 * other formats. Cannot fail.
 */
uint64_t s3l_reader_skipped(const struct s3l_reader *r);

/*
 * CSV: the header line's bytes (line end excluded), to record in the checkpoint; available after
 * the first s3l_reader_next (or at once when resumed). NULL with *len 0 before, and for JSON.
 */
const char *s3l_reader_csv_header(const struct s3l_reader *r, size_t *len);

/*
 * The field delimiter a CSV reader splits on: the one given in the options, or the one detected
 * from the header row (csv_delimiter 0) once the header is read (by the first s3l_reader_next,
 * or at open when resumed). 0 before that, and for the other formats. Cannot fail.
 */
char s3l_reader_csv_delimiter(const struct s3l_reader *r);

/*
 * A compressed input: the compressed bytes the decoder consumed so far (0 for a plain input), and
 * whether the input ended inside its last gzip member or zstd frame (a file still being written:
 * what it decoded to is read, an unterminated last record is left unread). Cannot fail.
 */
uint64_t s3l_reader_raw_offset(const struct s3l_reader *r);
bool s3l_reader_cut(const struct s3l_reader *r);

/* Frees the reader (not its fd). NULL is a no-op. */
void s3l_reader_free(struct s3l_reader *r);

/* ---- inference ----------------------------------------------------------------------------- */

#define S3L_INFER_OPTIONS_VERSION 1
#define S3L_DEFAULT_INFER_RECORDS 1000

struct s3l_infer_options {
    int version;                       /* S3L_INFER_OPTIONS_VERSION */
    bool nested_as_json;               /* objects and arrays become json text, not struct/list */
    enum s3l_time_unit timestamp_unit; /* unit of inferred timestamps; S3L_UNIT_SECOND (0) = us */
};

struct s3l_infer;

/* A new inference over records added one by one. opt may be NULL (defaults). NULL on ENOMEM. */
struct s3l_infer *s3l_infer_new(const struct s3l_infer_options *opt);
void s3l_infer_free(struct s3l_infer *inf);

/*
 * Adds one record of the sample (the caller decides the sample size; 1,000 by default):
 *  NUMBER -> int64 (when it fits, no fraction/exponent) or double; true/false -> bool;
 *  STRING -> date32[day] for YYYY-MM-DD, timestamp[us] for a date and time, timestamp[us, tz=UTC]
 *  when an offset or Z is written, else string; CSV text also -> int64, double, bool;
 *  OBJECT -> struct, ARRAY -> list (json with nested_as_json, and below 32 levels of nesting);
 *  null -> no type yet.
 * Types of a column are combined by s3l__type_widen. S3L_ENOMEM.
 */
int s3l_infer_add(struct s3l_infer *inf, const struct s3l_record *rec);

/* Records added so far. */
size_t s3l_infer_count(const struct s3l_infer *inf);

/*
 * The inferred schema: every column with a type, nullable, in order of first appearance. Columns
 * that were null in every record have no type yet and are left out: s3l_infer_pending lists them
 * (the caller types them when a value arrives). Nested fields that only held
 * nulls are left out of their struct; a struct left empty or a list of only nulls is pending too.
 * *out: s3l_schema_free. S3L_ENOMEM.
 */
int s3l_infer_schema(const struct s3l_infer *inf, struct s3l_schema **out);

/* Columns seen only with nulls: count, and the i-th name (NUL-terminated, owned by inf). */
size_t s3l_infer_n_pending(const struct s3l_infer *inf);
const char *s3l_infer_pending(const struct s3l_infer *inf, size_t i);

/*
 * Schema growth: a copy of schema grown by what rec has and schema lacks, or *out NULL when it
 * has nothing new. A key with a typed value (null, [], [null] and {"a": null}
 * have no type yet) that schema lacks becomes a nullable field appended where it belongs: a new
 * top-level column, or a new field of a struct column at any depth, including the structs that
 * are list items or map values (schema.md: "Schema growth"). s3l_schema_merge accepts such a
 * grown schema as an addition. Keys no field can be named after (empty, or holding NUL) never
 * grow the schema. *out: s3l_schema_free. Errors: S3L_ENOMEM.
 */
int s3l_infer_grow(const struct s3l_schema *schema, const struct s3l_record *rec,
                   const struct s3l_infer_options *opt, struct s3l_schema **out,
                   struct s3l_error *err);

/* ---- conversion ---------------------------------------------------------------------------- */

#define S3L_CONVERTER_OPTIONS_VERSION 1

struct s3l_converter_options {
    int version; /* S3L_CONVERTER_OPTIONS_VERSION */
    /* When a record has a key that the schema lacks, at the top level or inside a struct (also
     * a struct in a list or map), with a value that holds some non-null scalar (null, [],
     * [null] and {"a": null} do not count: they have no type yet): false ignores it (counted by
     * s3l_converter_ignored); true returns S3L_CONVERT_NEW_COLUMNS with the row not written
     * (aborted when the key was nested) so that the caller can grow the schema
     * (s3l_converter_grow or s3l_infer_grow). */
    bool stop_on_unknown;
};

/* s3l_convert's positive result S3L_CONVERT_NEW_COLUMNS: enum s3l_input_control. */

struct s3l_converter;

/*
 * A converter for schema (copied). opt may be NULL. Errors: S3L_EUNSUPPORTED for a column type it
 * cannot fill (naming it), S3L_ENOMEM.
 */
int s3l_converter_new(const struct s3l_schema *schema, const struct s3l_converter_options *opt,
                      struct s3l_converter **out, struct s3l_error *err);
void s3l_converter_free(struct s3l_converter *c);

/*
 * Writes rec as one row of the converter's schema into sink: row_begin, one value per column in
 * schema order (a missing key is null), row_end. Coercions (all lossless; see
 * docs/internals/schema.md):
 * a number into a string column keeps its text; an integer into float or decimal columns; text
 * holding a valid number, bool, decimal, date, time, timestamp (ISO-8601, offsets applied), UUID
 * or interval (ISO-8601 duration) into that column; an array into a list, an object into a struct
 * or a map; anything into json (its JSON text). Returns:
 *  0 when the row was written;
 *  S3L_CONVERT_NEW_COLUMNS (stop_on_unknown only): s3l_converter_unknown lists the new keys;
 *  S3L_EINVALID_INPUT when a value does not fit (a fraction or text into an integer, an overflow,
 *    a null in a key or non-nullable column, an object into a scalar ...): the row is aborted
 *    (row_abort) and err says "SOURCE line N, column "c.d[2]": expected int64, got 1.5 (a
 *    fraction)";
 *  the sink's error when row_end fails; S3L_ENOMEM.
 */
int s3l_convert(struct s3l_converter *c, const struct s3l_record *rec,
                const struct s3l_row_sink *sink, struct s3l_error *err);

/* After S3L_CONVERT_NEW_COLUMNS: the number of new keys, and the tape index of the i-th key
 * (its value is the entry after it; it may be nested) in the record given to s3l_convert. When
 * the record has new top-level keys, the nested ones are only looked for once those are added. */
size_t s3l_converter_n_unknown(const struct s3l_converter *c);
size_t s3l_converter_unknown(const struct s3l_converter *c, size_t i);

/* After S3L_CONVERT_NEW_COLUMNS: the column path of the i-th new key, for messages: "z" at the
 * top level, "s.z" in struct column s, "l[1].q" in the second item of list l (names cut at 200
 * bytes). NUL-terminated, owned by c, valid until the next s3l_convert; NULL when i is out of
 * range or without stop_on_unknown. */
const char *s3l_converter_unknown_path(const struct s3l_converter *c, size_t i);

/* Values not written, counted when their row is written: of unknown keys (top-level or nested;
 * stop_on_unknown false), of keys no column can be named after (empty or holding NUL), and the
 * earlier values of a duplicate key (the last one wins, as in jansson). null and values holding
 * only nulls are not counted. Every value of a record that the converter does not write is
 * counted here: none is dropped silently. */
uint64_t s3l_converter_ignored(const struct s3l_converter *c);

/*
 * After S3L_CONVERT_NEW_COLUMNS for rec: appends to schema a nullable field for each key of rec
 * it lacks (a column, or a field of a struct at any depth, as s3l_infer_grow), in record order,
 * typed from its value by s3l_infer_add's rules (opt); keys already in schema are skipped.
 * *added: how many were appended (at any depth). The caller then merges the grown schema into the
 * record (s3l_schema_merge), makes a converter for it and converts rec again. S3L_ENOMEM.
 */
int s3l_converter_grow(const struct s3l_converter *c, const struct s3l_record *rec,
                       const struct s3l_infer_options *opt, struct s3l_schema *schema,
                       size_t *added, struct s3l_error *err);

#endif
