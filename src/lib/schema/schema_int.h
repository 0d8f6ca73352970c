/*
 * The schema module's internal header: helpers shared by its files (type names, schema records,
 * widening) and the value coercions the converter uses to turn text into typed values
 * (decimal text -> 128-bit unscaled integers, ISO-8601 dates, times and timestamps -> integers).
 */
#ifndef S3L_SCHEMA_INT_H
#define S3L_SCHEMA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/schema.h"
#include "util/util.h"

/* The type of a column that has only seen nulls so far (never part of a written schema). */
#define S3L__TYPE_NONE 0

/* Deep copy of a field. S3L_ENOMEM (dst is then empty). */
int s3l__field_copy(struct s3l_field *dst, const struct s3l_field *src);

/* The Arrow name of t in buf (cap bytes), "..." at the end when cut short. Returns buf. */
char *s3l__type_name(const struct s3l_type *t, char *buf, size_t cap);

/* ---- number and time text (value.c) -------------------------------------------------------- */

/*
 * A number's text split the way RFC 8259 section 6 writes it: optional '-', digits, optional
 * fraction, optional exponent. Parses s (len bytes; no surrounding spaces) into sign, the
 * significant decimal digits (leading zeros dropped, at most 40 kept: more is reported as too many)
 * and a base-10 exponent so that value = digits * 10^exp. Returns false when s is not a number.
 */
struct s3l__decnum {
    bool neg;
    uint8_t n_digits;   /* 0 for zero */
    bool too_many;      /* more than 40 significant digits (after trailing-zero trimming) */
    uint8_t digits[40]; /* most significant first, 0..9 */
    int64_t exp;
};
bool s3l__decnum_parse(const char *s, size_t len, struct s3l__decnum *out);

/*
 * Text into an int64. Accepts what s3l__decnum_parse accepts when the value is a whole number
 * (1, -7, 1.0, 2e3). Returns 0; S3L_EINVALID_INPUT with why in *why ("a fraction", "not a number",
 * "out of range") otherwise. lo/hi bound the result (the column's width).
 */
int s3l__parse_int(const char *s, size_t len, int64_t lo, int64_t hi, int64_t *out,
                   const char **why);
/* Unsigned variant, 0..hi. */
int s3l__parse_uint(const char *s, size_t len, uint64_t hi, uint64_t *out, const char **why);

/* Text into a double (strtod, C locale syntax per RFC 8259 only; no inf/nan). */
int s3l__parse_double(const char *s, size_t len, double *out, const char **why);

/*
 * Decimal text into the unscaled 128-bit two's complement value (hi, lo) at scale `scale` with at
 * most `precision` digits. A fraction finer than the scale that is not zero is lossy: error.
 */
int s3l__parse_decimal(const char *s, size_t len, int precision, int scale, int64_t *hi,
                       uint64_t *lo, const char **why);

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
int64_t s3l__days_from_civil(int64_t y, unsigned m, unsigned d);

/*
 * ISO-8601 text, parsed in one place:
 *   date       YYYY-MM-DD
 *   time       HH:MM[:SS[.fraction]]
 *   timestamp  date, or date ('T' | 't' | ' ') time [Z | z | (+|-)HH[:MM] | (+|-)HHMM]
 * kind tells which forms are acceptable. Results: days since 1970-01-01 for dates; for
 * timestamps the instant in `unit` since 1970-01-01T00:00:00 after subtracting the offset (UTC);
 * for times the `unit`s since midnight. *has_offset says whether a zone/offset was written.
 * A fraction finer than the unit that is not zero is lossy: error ("sub-unit fraction").
 */
enum s3l__time_kind { S3L__DATE, S3L__TIME, S3L__TIMESTAMP };
int s3l__parse_time(const char *s, size_t len, enum s3l__time_kind kind, enum s3l_time_unit unit,
                    int64_t *out, bool *has_offset, const char **why);

/* The last date part (YYYY-MM-DD) parsed through it and its days since 1970-01-01. */
struct s3l__date_cache {
    char text[10];
    bool valid;
    int64_t days;
};

/* s3l__parse_time, with the date part looked up in dc first (dc may be NULL): same results. */
int s3l__parse_time_cached(struct s3l__date_cache *dc, const char *s, size_t len,
                           enum s3l__time_kind kind, enum s3l_time_unit unit, int64_t *out,
                           bool *has_offset, const char **why);

/* Shapes of text, for inference: what the text would parse as. */
enum s3l__text_shape {
    S3L__SHAPE_TEXT = 0,
    S3L__SHAPE_INT,       /* fits int64 */
    S3L__SHAPE_FLOAT,     /* a number that is not a whole int64 */
    S3L__SHAPE_BOOL,      /* true / false (any case) */
    S3L__SHAPE_DATE,      /* YYYY-MM-DD */
    S3L__SHAPE_TIMESTAMP, /* date and time, no offset */
    S3L__SHAPE_TIMESTAMP_TZ,
    S3L__SHAPE_BIGINT, /* a whole number outside int64, at most 38 digits: decimal128(38, 0) */
};
enum s3l__text_shape s3l__text_shape(const char *s, size_t len);

/* Digits of s when it is a whole number written as [-]digits without leading zeros, else -1. Inference types a whole number outside int64 with at most 38 of
 * them decimal128(38, 0). */
int s3l__int_digits(const char *s, size_t len);

/* ---- compatibility with the schema record (compat.c) ----------------------------------------- */

/*
 * Whether values inferred as type `in` go into a column recorded as `rec` without loss, so that
 * the recorded type is kept and no type change is reported: no value seen yet (S3L__TYPE_NONE);
 * the same type (s3l_type_equal); anything into json; any text into string (text: the values
 * were CSV fields, all text; from JSON every primitive but bool, since a JSON string keeps its
 * characters and a number its text, whatever type their shape inferred); integers into integer
 * (range-checked per value by the converter), float or decimal128 columns; floats into double;
 * a date32 or a timestamp into a timestamp; structs whose common children fit (children only one
 * side has are growth, not a change); lists and maps whose items fit. Pure; never fails.
 */
bool s3l__type_fits(const struct s3l_type *in, const struct s3l_type *rec, bool text);

/*
 * Fits an inference sample's schema (inferred, borrowed) to the table's schema record (rec,
 * changed in place): rec keeps its columns in its order, with their recorded types where the
 * inferred type fits (s3l__type_fits, with text as there: a column the sample saw only as null
 * keeps its type this way); a column whose inferred type does not fit takes the inferred type
 * (and becomes nullable if either is), which s3l_schema_merge later reports as SCHEMA_DRIFT naming table, column and
 * both types (or records, with allow_type_changes); inferred columns rec lacks are appended in
 * inferred's order. Errors: S3L_ENOMEM (rec is then partly fitted: free it); those of
 * s3l_schema_add_field.
 */
int s3l__schema_fit_sample(struct s3l_schema *rec, const struct s3l_schema *inferred, bool text,
                           struct s3l_error *err);

#endif
