/*
 * The input module's internal header: the reader framework every input format runs on (the block
 * buffer, line and record positions, resumption at a byte offset, sticky failures), the tape a
 * record is built in, and the small table of functions through which the framework calls a
 * format. The formats live below this folder (json/: NDJSON and JSON arrays; csv/: RFC 4180) and
 * include only this header from the framework; the framework calls them only through their
 * tables (s3l__ndjson_format, s3l__json_format, s3l__csv_format, s3l__debezium_format), so no
 * format includes another's header (debezium/ calls the NDJSON format through its table) and
 * the framework includes no format's header. docs/internals/input.md describes the whole.
 */
#ifndef S3L_INPUT_INT_H
#define S3L_INPUT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "input/steps.h"
#include "s3l/input.h"
#include "schema/schema_int.h"
#include "util/util.h"

/*
 * A record's tape and the arena holding its decoded strings, both reused per record. The JSON
 * scanner fills it (json/scan.c, hence the name); the CSV reader writes its rows into it
 * directly. After a failed scan, err_pos is the byte offset of the fault within the text and
 * err_what says what was expected ("',' or '}'", "valid UTF-8", ...).
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

/* An empty tape of at most max_values entries (0: no bound but SIZE_MAX). Allocates nothing. */
void s3l__jscan_init(struct s3l__jscan *s, size_t max_values);
/* Frees the tape and the arena; s may be initialised again. */
void s3l__jscan_cleanup(struct s3l__jscan *s);

struct s3l_reader;

/*
 * The decompressing byte source under the framework's fill (unpack.c): gzip or zstd.
 * s3l__unpack_new: S3L_ENOMEM. s3l__unpack_read decompresses into dst[0..want) (want > 0)
 * reading the compressed bytes with raw(r, ...) (the reader's own byte source: its fd or its
 * read function): 1 with *got > 0, 0 at the end of the compressed input
 * (then s3l__unpack_cut says whether it ended inside a member or frame), or S3L_EINVALID_INPUT
 * for corrupt data ("NAME: the gzip data is corrupt at compressed byte offset N (why)"), the read
 * error of raw. s3l__unpack_raw_offset: compressed bytes consumed so far.
 */
struct s3l__unpack;
typedef int (*s3l__raw_read_fn)(struct s3l_reader *r, void *dst, size_t want, size_t *got,
                                struct s3l_error *err);
int s3l__unpack_new(enum s3l_input_compression kind, struct s3l__unpack **out,
                    struct s3l_error *err);
int s3l__unpack_read(struct s3l__unpack *u, s3l__raw_read_fn raw, struct s3l_reader *r,
                     const char *name, void *dst, size_t want, size_t *got,
                     struct s3l_error *err);
uint64_t s3l__unpack_raw_offset(const struct s3l__unpack *u);
/* The compression a file's or an object's name says: .gz gzip, .zst or .zstd zstd, in any case;
 * else S3L_INPUT_PLAIN. */
enum s3l_input_compression s3l__input_compression_of(const char *name);
bool s3l__unpack_cut(const struct s3l__unpack *u);
void s3l__unpack_free(struct s3l__unpack *u);

/*
 * One input format, as the framework (reader.c) calls it. Every function gets the reader with
 * its buffer, positions and options set; none is called after a sticky failure.
 *   open     after the framework opened the input (and, for a resumed reader, sought to
 *            opt.start_offset): checks the format's options, reads what it needs (a CSV
 *            header) and sets its state. NULL: nothing to do. 0, or a negative S3L_E* code with
 *            err set (the reader is then freed).
 *   next     the next record into rec (positions set with s3l__reader_record; rec->values set
 *            unless r->defer and the format can hand records over unscanned): 1, 0 at the end of
 *            the input, or a negative S3L_E* code with err set (the same as s3l_reader_next).
 *   scan     scans a record that next handed over unscanned (rec->values NULL) into the tape:
 *            1 or a negative code. NULL: the format always scans.
 *   cleanup  frees what open and next allocated. NULL: nothing to free.
 *   hint     the column types the input declares itself (s3l_reader_schema_hint): *out a new
 *            schema or NULL; 0 or S3L_ENOMEM. NULL: the format declares none.
 *   skipped  records the format skipped by its own rules (s3l_reader_skipped). NULL: none.
 */
struct s3l__input_format {
    const char *name;
    int (*open)(struct s3l_reader *r, struct s3l_error *err);
    int (*next)(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err);
    int (*scan)(struct s3l_reader *r, struct s3l_record *rec, struct s3l_error *err);
    void (*cleanup)(struct s3l_reader *r);
    int (*hint)(const struct s3l_reader *r, struct s3l_schema **out);
    uint64_t (*skipped)(const struct s3l_reader *r);
};

/* The formats (json/reader.c, csv/csv.c, debezium/reader.c). The debezium format frames and
 * scans its lines through s3l__ndjson_format's table: the one format built on another. */
extern const struct s3l__input_format s3l__ndjson_format;
extern const struct s3l__input_format s3l__json_format;
extern const struct s3l__input_format s3l__csv_format;
extern const struct s3l__input_format s3l__debezium_format;

struct s3l__dbz;

/*
 * A reader's state. The unconsumed input is buf.ptr[head .. buf.len); buf.ptr[0] is at input
 * offset base. buf's cap is max_record_bytes + 2 * block_bytes, so memory never depends on the
 * input's size. The fields after `scan` belong to one format each (a reader runs one format, and
 * a handful of fields is simpler than a separately allocated state behind a pointer).
 */
struct s3l_reader {
    struct s3l_reader_options opt;
    const struct s3l__input_format *fmt;
    char *name;
    int fd;
    struct s3l__unpack *unpack; /* a compressed input's decoder, or NULL */
    bool eof;                /* read() returned 0 */
    bool cut;                /* eof inside the last gzip member or zstd frame (unpack.c) */
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
    bool defer;              /* return the record unscanned when the format can (NDJSON) */
    struct s3l__jscan scan;
    /* NDJSON (json/reader.c, json/lines.c) */
    bool skipping;           /* inside a line over max_record_bytes, skipping to its end */
    uint64_t skip_line;      /* that line's number */
    uint32_t *span_lens;     /* spans: each line's length with its line end (lines.c) */
    /* JSON array (json/reader.c) */
    int jstate;
    int jdepth;
    bool jin_str;
    bool jesc;
    /* CSV (csv/csv.c) */
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
    /* Debezium (debezium/reader.c; it also uses the NDJSON fields above) */
    struct s3l__dbz *dbz;
};

/*
 * Reads one more block after moving the unconsumed bytes to the front. 1 when bytes came, 0 at
 * the end of the input, S3L_EIO (sticky, naming the input and offset) or S3L_ENOMEM.
 */
int s3l__reader_fill(struct s3l_reader *r, struct s3l_error *err);
/* Skips a UTF-8 byte order mark at input offset 0 (once). 0 or s3l__reader_fill's errors. */
int s3l__reader_skip_bom(struct s3l_reader *r, struct s3l_error *err);
/* Makes err a sticky failure of r (returned again by every later call). Returns code. */
int s3l__reader_fatal(struct s3l_reader *r, struct s3l_error *err, int code);
/* Fills rec's position fields for a record spanning buf [start, end) of bytes, line `line`. */
void s3l__reader_record(const struct s3l_reader *r, struct s3l_record *rec, size_t start,
                        size_t end, uint64_t line);

/* ---- what an input's first bytes look like (reader.c) ------------------------------------- */

/* The format the first bytes of an input look like: a guess for messages, never for reading. */
enum s3l__sniff { S3L__SNIFF_UNKNOWN, S3L__SNIFF_NDJSON, S3L__SNIFF_JSON, S3L__SNIFF_CSV };

/*
 * Guesses from p[0..n) (the input's first bytes, a UTF-8 BOM already skipped; the first line is
 * enough) which format it is in: '[' before a JSON value or ']' is a JSON array; '{' before '"'
 * or '}' is NDJSON when the first line ends with '}', else JSON (an object spread over lines);
 * a first line holding ',', ';', a tab or '|' is CSV; anything else (a bare word, "[id],...")
 * is unknown.
 */
enum s3l__sniff s3l__input_sniff(const char *p, size_t n);

/*
 * When err holds a failure of reading p[0..n) (the input's first bytes) as format in_force and
 * those bytes look like another format, appends to err's message which --input-format to give
 * ("; the input starts like CSV: give --input-format csv"). Returns true when it did.
 */
bool s3l__input_hint(struct s3l_error *err, enum s3l_input_format in_force, const char *p,
                     size_t n);

/* ---- inference and schema growth over a tape (infer.c, grow.c) ----------------------------- */

/*
 * The type of one value (values[i] of a tape), by the rules of s3l_infer_add. out->id is 0 when
 * the value says nothing (null, an empty array, an object of nulls). *out: s3l__type_cleanup.
 * S3L_ENOMEM.
 */
int s3l__infer_value(const struct s3l_value *values, size_t i, const struct s3l_infer_options *opt,
                    struct s3l_type *out);


/* s3l__infer_value for a value nested depth levels deep, so that a field grown inside a struct
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
