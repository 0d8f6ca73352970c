/*
 * The row sink: the one interface through which rows flow from an input reader (NDJSON, JSON, CSV,
 * an embedder's code) to whatever writes them (the Parquet writer, the destination's lanes).
 *
 * A row is row_begin, one value per top-level column in schema order (depth-first for nested
 * types), row_end. Value shapes are those of the Parquet writer's row API (include/s3l/parquet.h):
 * put_int carries every signed integer, DATE32 (days since 1970-01-01), TIME32/TIME64 and TIMESTAMP
 * (in the column's unit); put_uint unsigned integers; put_double FLOAT16/32/64; put_bytes UTF8,
 * JSON, BINARY, FIXED_SIZE_BINARY, UUID; put_decimal the unscaled 128-bit two's complement value
 * (hi, lo) at the column's scale; put_interval month_day_nano. LIST: begin_list, items, end_list;
 * STRUCT: begin_struct, fields in order, end_struct; MAP: begin_map, key, value, ..., end_map.
 * After a failing put the row is poisoned: row_end drops it and returns the first failure with
 * err naming the column and row; rows committed earlier are kept. row_abort drops the row.
 *
 * put_columns (optional, may be NULL) takes n_rows whole rows at once, one struct
 * s3l_column_batch per top-level column in schema order, for flat schemas (primitive top-level
 * columns only); a sink without it takes rows one by one, and callers fall back to that.
 */
#ifndef S3L_ROW_H
#define S3L_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/error.h"

/*
 * One column of a batch of rows in Arrow's memory layout (the Parquet writer's column-batch API,
 * include/s3l/parquet.h s3l_pq_write_columns, describes the value shapes per type):
 *   values: the n_rows values in the column's C type (int32_t for DATE32 days and TIME32,
 *     int64_t for TIMESTAMP/TIME64 in the column's unit, uint8_t 0/1 for BOOL, ...); for UTF8,
 *     JSON and BINARY the bytes of all values, delimited by offsets;
 *   offsets: UTF8/JSON/BINARY only: n_rows + 1 int32 byte offsets into values;
 *   validity: bit r (LSB first) 1 = row r present, or NULL when every row is present.
 */
struct s3l_column_batch {
    const void *values;
    const int32_t *offsets;
    const uint8_t *validity;
};

struct s3l_row_sink_ops {
    int (*row_begin)(void *ctx);
    int (*put_null)(void *ctx);
    int (*put_bool)(void *ctx, bool v);
    int (*put_int)(void *ctx, int64_t v);
    int (*put_uint)(void *ctx, uint64_t v);
    int (*put_double)(void *ctx, double v);
    int (*put_bytes)(void *ctx, const void *data, size_t len);
    int (*put_decimal)(void *ctx, int64_t hi, uint64_t lo);
    int (*put_interval)(void *ctx, int32_t months, int32_t days, int64_t nanos);
    int (*begin_list)(void *ctx);
    int (*end_list)(void *ctx);
    int (*begin_struct)(void *ctx);
    int (*end_struct)(void *ctx);
    int (*begin_map)(void *ctx);
    int (*end_map)(void *ctx);
    int (*row_end)(void *ctx, struct s3l_error *err);
    void (*row_abort)(void *ctx);
    /* Optional (NULL: not supported). n_rows rows of every top-level column (cols[i] is column
     * i), outside a row. 0, or a negative S3L_E* code with err set: S3L_EINVALID_INPUT for a
     * value the column refuses (nothing of the batch is written, err names the column and the
     * row within the batch), S3L_EUNSUPPORTED for a schema with nested columns, or the sink's
     * own (sticky) failure. The Parquet writer's rows and files are byte-identical to the same
     * rows given one by one. */
    int (*put_columns)(void *ctx, size_t n_rows, const struct s3l_column_batch *cols,
                       struct s3l_error *err);
};

struct s3l_row_sink {
    const struct s3l_row_sink_ops *ops;
    void *ctx;
};

#endif
