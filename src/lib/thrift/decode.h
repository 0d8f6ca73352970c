/*
 * thrift/decode: a bounds-checked reader of the Thrift compact protocol, for the Parquet footer
 * and page index (apache/thrift doc/specs/thrift-compact-protocol.md).
 *
 * It is a cursor over one byte range that never reads outside it. The caller walks a struct with
 * s3l__tdec_struct_begin, then s3l__tdec_field until it returns a STOP field, reading each value
 * it knows with the typed readers and passing every other field to s3l__tdec_skip; then
 * s3l__tdec_struct_end. Nesting (structs, lists, maps) is bounded by max_depth, so a hostile input
 * cannot exhaust the stack. List and map counts are checked against the bytes left (every element
 * takes at least one byte), so a caller may size an allocation by a count without trusting it.
 *
 * Errors are sticky: the first failure records its offset and a static description in the
 * decoder, every later call returns the same code, and the caller names the file and adds the
 * base offset (s3l__tdec_error). This decoder shares no code with the encoder (thrift.h): it is
 * the independent half that reads what any writer produced.
 */
#ifndef S3L_THRIFT_DECODE_H
#define S3L_THRIFT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* Compact protocol type codes (thrift-compact-protocol.md, "Struct encoding" and "List"). */
enum s3l_tdec_type {
    S3L_TDEC_STOP = 0,
    S3L_TDEC_TRUE = 1,  /* field header BOOLEAN_TRUE; some writers also use it as list bool type */
    S3L_TDEC_FALSE = 2, /* field header BOOLEAN_FALSE; the list element type BOOL */
    S3L_TDEC_I8 = 3,
    S3L_TDEC_I16 = 4,
    S3L_TDEC_I32 = 5,
    S3L_TDEC_I64 = 6,
    S3L_TDEC_DOUBLE = 7,
    S3L_TDEC_BINARY = 8,
    S3L_TDEC_LIST = 9,
    S3L_TDEC_SET = 10,
    S3L_TDEC_MAP = 11,
    S3L_TDEC_STRUCT = 12,
    S3L_TDEC_UUID = 13,
};

/* Deepest nesting of structs, lists and maps that any decoder accepts. */
#define S3L_TDEC_MAX_DEPTH 64
/* Default used by the footer reader; parquet.thrift nests at most about 8 levels deep. */
#define S3L_TDEC_DEFAULT_DEPTH 32

struct s3l_tdec {
    const uint8_t *buf;
    size_t len;
    size_t pos;            /* next byte to read */
    unsigned depth;        /* open structs, lists and maps */
    unsigned max_depth;    /* <= S3L_TDEC_MAX_DEPTH */
    int status;            /* 0, or the first failure's code (sticky) */
    size_t error_pos;      /* where the first failure was found */
    const char *error_what; /* static text of the first failure */
    int16_t last_id[S3L_TDEC_MAX_DEPTH + 1]; /* previous field id per open struct */
};

/* One field header. For a boolean field the value is in the header: bool_value. */
struct s3l_tdec_field {
    int16_t id;
    uint8_t type; /* enum s3l_tdec_type; S3L_TDEC_STOP ends the struct */
    bool bool_value;
};

/* Starts decoding len bytes at buf. max_depth 0 means S3L_TDEC_DEFAULT_DEPTH; capped at MAX. */
void s3l__tdec_init(struct s3l_tdec *d, const void *buf, size_t len, unsigned max_depth);

/*
 * Records a failure (unless one is recorded already) at the current position and returns
 * S3L_ECORRUPT. what is a static string naming what was wrong ("truncated varint").
 */
int s3l__tdec_fail(struct s3l_tdec *d, const char *what);

/*
 * Fills err with "WHERE: corrupt thrift at offset N: WHAT" where N is base + the failure's
 * position (base: the file offset of buf[0]) and returns the sticky code (S3L_ECORRUPT).
 */
int s3l__tdec_error(const struct s3l_tdec *d, uint64_t base, const char *where,
                    struct s3l_error *err);

/* Enters a struct (one nesting level). S3L_ECORRUPT when too deep. */
int s3l__tdec_struct_begin(struct s3l_tdec *d);
/* Leaves the struct after its STOP field was read. */
int s3l__tdec_struct_end(struct s3l_tdec *d);

/*
 * Reads the next field header of the open struct: short form (delta in the high nibble) or long
 * form (zigzag i16 id). f->type is S3L_TDEC_STOP at the end. S3L_ECORRUPT on truncation, an
 * unknown type code, or a field id outside 1..32767 (parquet.thrift ids are positive).
 */
int s3l__tdec_field(struct s3l_tdec *d, struct s3l_tdec_field *f);

/*
 * Checks that field f has the wire type `want`, so a value of another type is never misread.
 * For want == S3L_TDEC_TRUE, either boolean header type is accepted. S3L_ECORRUPT naming "field
 * of unexpected type".
 */
int s3l__tdec_expect(struct s3l_tdec *d, const struct s3l_tdec_field *f, enum s3l_tdec_type want);

/* Scalars (after a field header or as list elements). i8 is one raw byte; i16/i32/i64 are zigzag
 * varints checked to fit their width; double is 8 bytes little-endian. S3L_ECORRUPT. */
int s3l__tdec_i8(struct s3l_tdec *d, int8_t *out);
int s3l__tdec_i16(struct s3l_tdec *d, int16_t *out);
int s3l__tdec_i32(struct s3l_tdec *d, int32_t *out);
int s3l__tdec_i64(struct s3l_tdec *d, int64_t *out);
int s3l__tdec_double(struct s3l_tdec *d, double *out);
/* An unsigned varint of at most 10 bytes (the raw form under zigzag and lengths). */
int s3l__tdec_varint(struct s3l_tdec *d, uint64_t *out);
/*
 * A binary/string: varint length then bytes. *out points into the decoder's buffer (valid while
 * it is). The length is checked against the bytes left.
 */
int s3l__tdec_binary(struct s3l_tdec *d, struct s3l_slice *out);
/* A list element of type bool: one byte, 1 true, 0 or 2 false (writers differ), else corrupt. */
int s3l__tdec_bool_elem(struct s3l_tdec *d, bool *out);

/*
 * Enters a list or set: reads its header into *elem_type and *count. The count is at most the
 * bytes left, so it can size an allocation. Call s3l__tdec_list_end after the elements.
 * S3L_ECORRUPT on truncation, an unknown element type, or too deep a nesting.
 */
int s3l__tdec_list_begin(struct s3l_tdec *d, uint8_t *elem_type, uint32_t *count);
int s3l__tdec_list_end(struct s3l_tdec *d);

/* Skips one value of the given wire type (a field's or an element's), recursing within depth. */
int s3l__tdec_skip(struct s3l_tdec *d, uint8_t type);

/* Skips the value of field f (nothing for a boolean field, whose value is in its header). */
int s3l__tdec_skip_field(struct s3l_tdec *d, const struct s3l_tdec_field *f);

/* Skips a whole struct, from just before its first field header to after its STOP. */
int s3l__tdec_skip_struct(struct s3l_tdec *d);

#endif
