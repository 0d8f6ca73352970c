/*
 * The Parquet writer: encodes rows of a struct s3l_schema into a Parquet file streamed to a byte
 * sink (the store's upload handle, a file descriptor or a memory buffer).
 *
 * Format: apache/parquet-format (parquet.thrift, Encodings.md, PageIndex.md, LogicalTypes.md).
 * Rows go in through the row API below; values are given depth-first in schema order, and every
 * top-level column gets exactly one value (or null) per row. A row that does not fit is rejected
 * whole by s3l_pq_row_end and the writer stays usable.
 *
 * Memory: each writer buffers at most one row group of encoded pages. Writers may share one
 * s3l_pq_budget; when the sum of their buffered bytes reaches it, the largest row group in
 * progress is flushed early. Buffers a huge value or row group grew are given back after use.
 * Per writer, while a row group is in progress (docs/internals/parquet.md), with
 * V = max(page_size, the largest value):
 *   bytes ~= sum over leaf columns of (compressed pages of the chunk so far (capacity <= 1.25 x)
 *            + page buffers (< page_size + one row; <= 2 V) + dictionary (<= dictionary_page_limit)
 *            + its hash table (16 B per slot, <= 4 slots per entry))
 *            + scratch (<= 2 V) + statistics bounds (<= 4 KiB each) + footer metadata (~100 B
 *            plus 2 x (statistics_max_len + 5) per page).
 * The budget counts the chunks (at capacity), page buffers and dictionary values of every member
 * writer, charged every 16 rows and after any row that grew the row group by page_size or more.
 * So all writers together hold about the budget plus, each, ~5 V: bounded by configuration and
 * the largest value, never by the input or file size.
 */
#ifndef S3L_PARQUET_H
#define S3L_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/codec.h"
#include "s3l/error.h"
#include "s3l/row.h"
#include "s3l/schema.h"

/*
 * Where the bytes go: write(ctx, data, len, err) appends len bytes and returns 0, or a negative
 * S3L_E* code with err filled. The writer calls it with pieces of any size, in file order.
 */
struct s3l_pq_sink {
    int (*write)(void *ctx, const void *data, size_t len, struct s3l_error *err);
    void *ctx;
};

/* A memory budget shared by writers (thread-safe). */
struct s3l_pq_budget;
/*
 * A budget of `bytes` (default 48 MiB when 0). NULL on out-of-memory. Free it after every writer
 * that uses it. When the sum reaches the budget, the member holding the most is flushed: at once
 * if it is the writer ending a row, otherwise at its own next row end (thread-safe).
 */
struct s3l_pq_budget *s3l_pq_budget_new(size_t bytes);
void s3l_pq_budget_free(struct s3l_pq_budget *b);

#define S3L_PQ_OPTIONS_VERSION 1

struct s3l_pq_options {
    int version;                  /* S3L_PQ_OPTIONS_VERSION */
    enum s3l_codec codec;         /* default ZSTD */
    int level;                    /* codec level; 0: the codec's default (zstd 3, gzip 6) */
    size_t page_size;             /* target uncompressed data page size, bytes; default 1 MiB */
    size_t row_group_bytes;       /* row group ends when its buffered encoded bytes reach
                                     this; default 128 MiB */
    uint64_t row_group_rows;      /* or a row count; 0: no row limit */
    bool dictionary;              /* RLE_DICTIONARY where it pays; default true */
    size_t dictionary_page_limit; /* dictionary bytes before falling back to PLAIN; 1 MiB */
    int data_page_version;        /* 1 (default) or 2 */
    bool statistics;              /* chunk and page statistics; default true */
    size_t statistics_max_len;    /* BYTE_ARRAY min/max longer than this are truncated (max
                                     rounded up); default 64 bytes */
    bool page_index;              /* ColumnIndex and OffsetIndex; default true */
    struct s3l_pq_budget *budget; /* shared memory budget; NULL: none */
    const char *created_by;       /* NULL: "s3land version X.Y.Z" (copied) */
    size_t n_kv;                  /* key/value metadata pairs (UTF-8) */
    const char *const *kv_keys;
    const char *const *kv_values;
    uint64_t file_size;           /* bytes at which the caller closes the file (the destination's
                                     fileSize, compared with s3l_pq_writer_size_estimate); 0:
                                     none. With it, the writer encodes its pending pages and
                                     measures its dictionaries when the estimate reaches it, so
                                     that a file closed there is within 5% under it on storage */
};

/* Fills o with the defaults above. */
void s3l_pq_options_init(struct s3l_pq_options *o);

struct s3l_pq_writer;

/*
 * A writer of one Parquet file. schema is copied. The magic "PAR1" is written on the first flush.
 * Errors: S3L_EINVALID_CONFIG for a schema Parquet cannot hold (names the column) or bad options;
 * S3L_ENOMEM.
 */
int s3l_pq_writer_new(const struct s3l_schema *schema, const struct s3l_pq_options *opts,
                      struct s3l_pq_sink sink, struct s3l_pq_writer **out, struct s3l_error *err);

/*
 * The row API. s3l_pq_row_begin starts a row; then one value per top-level column in schema
 * order, depth-first for nested types; s3l_pq_row_end commits it.
 * Values: put_null for a null (refused for a non-nullable column); put_bool; put_int for every
 * signed integer type, DATE32 (days), TIME32/TIME64 and TIMESTAMP (in the column's unit); put_uint
 * for unsigned integers; put_double for FLOAT16/32/64; put_bytes for UTF8 and JSON (must be valid
 * UTF-8), BINARY, FIXED_SIZE_BINARY and UUID (exact width); put_decimal with the unscaled value as
 * a 128-bit two's complement (hi, lo) at the column's scale; put_interval for INTERVAL.
 * A LIST value is begin_list, its items, end_list; a STRUCT is begin_struct, its fields in order,
 * end_struct; a MAP is begin_map, key, value, key, value..., end_map.
 * The put functions return 0 or a negative code; after the first failure the row is poisoned and
 * s3l_pq_row_end returns that failure (S3L_EINVALID_INPUT, naming column path and row number),
 * dropping the row. Rows appended earlier are kept.
 */
int s3l_pq_row_begin(struct s3l_pq_writer *w);
int s3l_pq_put_null(struct s3l_pq_writer *w);
int s3l_pq_put_bool(struct s3l_pq_writer *w, bool v);
int s3l_pq_put_int(struct s3l_pq_writer *w, int64_t v);
int s3l_pq_put_uint(struct s3l_pq_writer *w, uint64_t v);
int s3l_pq_put_double(struct s3l_pq_writer *w, double v);
int s3l_pq_put_bytes(struct s3l_pq_writer *w, const void *data, size_t len);
int s3l_pq_put_decimal(struct s3l_pq_writer *w, int64_t hi, uint64_t lo);
int s3l_pq_put_interval(struct s3l_pq_writer *w, int32_t months, int32_t days, int64_t nanos);
int s3l_pq_begin_list(struct s3l_pq_writer *w);
int s3l_pq_end_list(struct s3l_pq_writer *w);
int s3l_pq_begin_struct(struct s3l_pq_writer *w);
int s3l_pq_end_struct(struct s3l_pq_writer *w);
int s3l_pq_begin_map(struct s3l_pq_writer *w);
int s3l_pq_end_map(struct s3l_pq_writer *w);
/* Commits the row, or drops it and returns its first failure. I/O and codec errors are sticky. */
int s3l_pq_row_end(struct s3l_pq_writer *w, struct s3l_error *err);
/* Drops the row in progress, if any. */
void s3l_pq_row_abort(struct s3l_pq_writer *w);

/*
 * The column-batch API for embedders holding columnar (Arrow-like) data: n_rows rows of every
 * top-level column at once. Only schemas whose top-level columns are all primitive (no list,
 * struct, map or interval) are accepted (else S3L_EUNSUPPORTED). cols[i] is column i:
 *   values: n_rows values in the column's natural C type: int8_t/int16_t/int32_t/int64_t and
 *     uint8_t..uint64_t for the integer types, int32_t for DATE32 (days) and TIME32, int64_t for
 *     TIME64 and TIMESTAMP (in the column's unit), uint16_t binary16 bits for FLOAT16, float,
 *     double, uint8_t 0/1 for BOOL, byte_width bytes per value for FIXED_SIZE_BINARY and UUID,
 *     16-byte little-endian two's complement unscaled values for DECIMAL128; for UTF8, JSON and
 *     BINARY the bytes of all values, delimited by offsets;
 *   offsets: UTF8/JSON/BINARY only: n_rows + 1 int32 offsets into values (Arrow's layout);
 *   validity: Arrow validity bitmap (bit i, LSB first, 1 = present), or NULL when all present;
 *     a null slot's value is ignored.
 * The batch is checked whole before anything is appended: a null in a required column, invalid
 * UTF-8, a decimal with too many digits or a time of day out of range rejects the whole batch
 * with S3L_EINVALID_INPUT naming the column and the row (0-based within the batch), and the
 * writer stays usable. Sink and codec errors are sticky. Not within a row (S3L_ESTATE).
 * Pages, row groups and budget flushes fall on the rows where the row API would put them: the
 * file is byte-identical to the same rows given through the row API.
 */
/* The batch column is the row sink's (include/s3l/row.h), so that a row sink's put_columns
 * reaches this function without copying; the old name stays usable. */
#define s3l_pq_column_batch s3l_column_batch
int s3l_pq_write_columns(struct s3l_pq_writer *w, size_t n_rows,
                         const struct s3l_pq_column_batch *cols, struct s3l_error *err);

/*
 * s3l_pq_write_columns for rows [first, n_rows) of the batch (rows are numbered from the batch's
 * start, in messages too), stopping after the first row at which s3l_pq_writer_size_estimate
 * reaches size_limit bytes, just as a caller looking at the estimate after each s3l_pq_row_end
 * would stop there (UINT64_MAX: no limit). *done: the rows written from first, also when an
 * error stops the batch midway (sink or codec failure; a rejected batch writes none). The rows
 * after them go on with first + *done, possibly into another writer (a file closed at a size).
 * Errors: those of s3l_pq_write_columns, for rows [first, n_rows).
 */
int s3l_pq_write_columns_until(struct s3l_pq_writer *w, size_t n_rows,
                               const struct s3l_pq_column_batch *cols, size_t first,
                               uint64_t size_limit, size_t *done, struct s3l_error *err);

/* The writer as a row sink (include/s3l/row.h); valid as long as w is. */
struct s3l_row_sink s3l_pq_writer_row_sink(struct s3l_pq_writer *w);

/* Rows committed so far. */
uint64_t s3l_pq_writer_rows(const struct s3l_pq_writer *w);
/*
 * Bytes the file would have on storage if closed now (magic, row groups with their compressed
 * data and dictionary pages, page index, footer), estimated: bytes already written to the sink,
 * the row group in progress as encoded so far (data pages, compressed), its page buffers and
 * dictionaries at the compression ratio this file's pages had so far (1 before the first page
 * of a column), the footer, plus a reserve of opts.file_size / 50 for what the last rows and the
 * footer may still add. With opts.file_size set, the estimate reaches opts.file_size only after
 * a look at which every page was encoded and every dictionary compressed (exact but for the
 * footer of the row group in progress), so a caller closing the file then gets a file between
 * about 96% and 100% of opts.file_size. Without it, the estimate is the same but unmeasured (it
 * may be high before a column's first page). The destination closes a file at fileSize with it.
 */
uint64_t s3l_pq_writer_size_estimate(const struct s3l_pq_writer *w);
/* Bytes already written to the sink. */
uint64_t s3l_pq_writer_bytes_written(const struct s3l_pq_writer *w);

/* Ends the row group in progress (no-op when it is empty). Sink and codec errors. */
int s3l_pq_writer_flush(struct s3l_pq_writer *w, struct s3l_error *err);

/*
 * Flushes, writes the page indexes and the footer. Afterwards only s3l_pq_writer_free is valid.
 * Returns the first sticky error if any write failed. A file with zero rows is still valid.
 */
int s3l_pq_writer_close(struct s3l_pq_writer *w, struct s3l_error *err);
/* Frees the writer (closed or not; an unclosed file is simply abandoned). NULL is a no-op. */
void s3l_pq_writer_free(struct s3l_pq_writer *w);

#endif
