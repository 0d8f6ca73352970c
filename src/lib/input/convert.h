/*
 * input: the converter's state, shared by the generic converter (convert.c, a scanned tape into
 * row-sink calls) and its fast path for NDJSON lines (json/fast.c, raw bytes straight into the
 * sink).
 */
#ifndef S3L_INPUT_CONVERT_H
#define S3L_INPUT_CONVERT_H

#include <string.h>

#include "input/json/json.h"
#include "input/value.h"
#include "schema/schema_int.h"

/* How the fast path fills a column (fast.c); F_NONE columns take only null there. */
enum s3l__fast_kind { S3L__F_NONE, S3L__F_INT, S3L__F_UINT, S3L__F_FLOAT, S3L__F_UTF8,
                      S3L__F_BOOL, S3L__F_TIME };

struct s3l__fast_col {
    uint8_t kind;      /* enum s3l__fast_kind */
    uint8_t time_kind; /* enum s3l__time_kind, for S3L__F_TIME */
    uint8_t unit;      /* enum s3l_time_unit, for timestamps */
    bool nullable;     /* a null or a missing key is written as null */
    bool plain_name;   /* the name holds no '"', '\\' or control character */
    uint8_t tok_len;   /* plain names under 16 bytes: name + '"' in tok, 0xff per byte in mask */
    uint64_t tok[2], tok_mask[2];
    int64_t lo, hi;    /* S3L__F_INT: the type's range; S3L__F_UINT: hi is the maximum */
    double max;        /* S3L__F_FLOAT: s3l__float_limit of the type (exclusive) */
    struct s3l__date_cache dates; /* S3L__F_TIME: the last date part parsed */
    bool ts_valid;     /* ts_text/ts_value hold the last "YYYY-MM-DD HH:MM:SS" read quickly */
    char ts_text[19];  /* (a feed's consecutive rows mostly share the second: 93% of flights) */
    int64_t ts_value;
};

/* A value of one column of the row the fast path is reading. */
struct s3l__fast_val {
    uint8_t kind; /* 0: absent (null), 1: int, 2: double, 3: bytes, 4: bool */
    uint32_t len;
    const char *str;
    union {
        int64_t i;
        double d;
        bool b;
    } u;
};

/*
 * s3l__convert_fast_lines' column batch (fast.c): the values of up to cap rows read
 * by the fast path, per column in the layout of struct s3l_column_batch (include/s3l/row.h),
 * handed to the sink's put_columns at once.
 */
struct s3l__batch_col {
    uint8_t kind;        /* fast.c enum batch_kind: how a value of the column is stored */
    uint8_t width;       /* bytes per value; 0 for strings (offsets and bytes) */
    bool nulls;          /* a row of the batch is null: the bitmap is passed */
    int64_t lo, hi;      /* a value outside takes the row path (times of day, timestamp[s]) */
    uint8_t *values;     /* cap x width bytes */
    int32_t *offsets;    /* strings: cap + 1 */
    struct s3l_buf text; /* strings: the bytes of the batch's values (never NULL after a flush) */
    uint8_t *validity;   /* cap / 8 bytes */
};

struct s3l__batch {
    struct s3l__batch_col *cols;
    struct s3l_column_batch *out;
    struct s3l__fast_val *stage; /* cap rows of n_fields values, row-major */
    size_t cap;                  /* rows a batch holds (a multiple of 8, 8 .. 1,024) */
    size_t *checked;             /* the columns batch_take looks at (strings, bounded ints) */
    size_t n_checked;
    size_t rows;                 /* rows in the batch */
    size_t text_bytes;           /* string bytes in the batch, over all columns */
    uint64_t first_line;         /* line numbers of its first and last rows, for messages */
    uint64_t last_line;
};

struct s3l_converter {
    struct s3l_schema *schema;
    struct s3l_converter_options opt;
    uint32_t *slots; /* open addressing: column index + 1, or 0 */
    size_t n_slots;  /* a power of two */
    uint32_t *col_value;
    uint32_t *hint; /* member position -> column index + 1 of the last record (records repeat) */
    size_t hint_cap;
    size_t *unknown;
    size_t n_unknown;
    size_t unknown_cap;
    size_t *upath;        /* stop_on_unknown: offset of each unknown key's path in upaths */
    struct s3l_buf upaths; /* "s.z\0l[1].q\0" */
    uint64_t ignored;
    uint64_t row_ignored; /* values of the row being converted that it cannot write */
    struct s3l_buf text;
    struct s3l__jscan scan;
    /* the record being converted, for messages */
    const struct s3l_record *rec;
    const struct s3l_row_sink *sink;
    /* The column path of the value being converted, as a stack of steps; it is only formatted
     * into text when an error needs it (formatting it per value cost a third of the time). */
    struct step {
        const char *name; /* NULL for a list index */
        size_t len;       /* name bytes, or the index */
    } steps[S3L_JSON_MAX_DEPTH + 2];
    size_t depth;
    size_t *name_len; /* strlen of each top-level column name */
    /* The fast path (fast.c): per column, how it is filled and the value of the current row. */
    struct s3l__fast_col *fast;
    struct s3l__fast_val *fval;
    struct s3l__jscan line_scan; /* s3l__convert_line's scanner, when the fast path cannot */
    struct s3l_record line_rec;  /* the record it scanned */
    /* s3l__convert_fast_lines' column batch (fast.c), made on first use; batch_state 0: not
     * looked at yet, 1: usable, 2: the schema has a column the batch does not map. */
    struct s3l__batch *batch;
    uint8_t batch_state;
};

/*
 * The magnitude from which a float column's type has no finite value: a number rounds to the
 * nearest value of the type (IEEE 754 section 4.3.1, ties to even), so binary16 takes up to
 * 65504 + 16 (exclusive) and binary32 up to FLT_MAX + half its last unit, 2^128 - 2^103
 * (exclusive: FLT_MAX's significand is odd, so the tie goes to infinity). "3.4028235e38", the
 * usual printed form of FLT_MAX, is in range. binary64: every finite double.
 */
static inline double s3l__float_limit(enum s3l_type_id id)
{
    return id == S3L_TYPE_FLOAT16   ? 65520.0
           : id == S3L_TYPE_FLOAT32 ? 0x1.ffffffp127
                                    : __builtin_inf();
}

/* The column named name[0..len), or -1. */
int s3l__convert_lookup(const struct s3l_converter *c, const char *name, size_t len);

/*
 * The column of the m-th key of a record, or -1: most records list the same keys in the same
 * order, so the column the m-th key named in the last record is tried first, then the hash;
 * the answer becomes the hint for position m (hints exist for m < hint_cap).
 */
static inline int s3l__convert_column(struct s3l_converter *c, uint32_t m, const char *key,
                                      size_t len)
{
    uint32_t h = m < c->hint_cap ? c->hint[m] : 0;
    if (h && c->name_len[h - 1] == len && memcmp(c->schema->fields[h - 1].name, key, len) == 0)
        return (int)h - 1;
    int idx = s3l__convert_lookup(c, key, len);
    if (m < c->hint_cap)
        c->hint[m] = (uint32_t)(idx + 1);
    return idx;
}

/* Fills c->fast from c->schema (fast.c). S3L_ENOMEM. */
int s3l__fast_init(struct s3l_converter *c);

/* Frees c->batch (fast.c); called by s3l_converter_free. */
void s3l__fast_batch_free(struct s3l_converter *c);

#endif
