/*
 * Thrift compact protocol: the wire types and the encoder that writes Parquet's metadata (page
 * headers, FileMetaData, ColumnIndex, OffsetIndex). Spec: apache/thrift
 * doc/specs/thrift-compact-protocol.md. The decoder (decode.h) shares the type constants.
 *
 * The encoder appends to an s3l_buf and keeps a sticky status (the first failure), checked once
 * with s3l__tc_status() after a whole structure is written, so callers write straight-line code.
 * Field ids are passed by the caller, which cites them from parquet.thrift.
 */
#ifndef S3L_THRIFT_H
#define S3L_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* Compact protocol element types (thrift-compact-protocol.md, "Struct encoding"). */
enum s3l_tc_type {
    S3L_TC_STOP = 0,
    S3L_TC_BOOL_TRUE = 1,
    S3L_TC_BOOL_FALSE = 2,
    S3L_TC_BYTE = 3,
    S3L_TC_I16 = 4,
    S3L_TC_I32 = 5,
    S3L_TC_I64 = 6,
    S3L_TC_DOUBLE = 7,
    S3L_TC_BINARY = 8,
    S3L_TC_LIST = 9,
    S3L_TC_SET = 10,
    S3L_TC_MAP = 11,
    S3L_TC_STRUCT = 12,
};

/* Deepest struct nesting the encoder tracks; Parquet's metadata needs 5. */
#define S3L_TC_MAX_DEPTH 16

struct s3l_tc_enc {
    struct s3l_buf *out;
    int status;                        /* first failure (negative S3L_E*), or 0 */
    int depth;                         /* structs open, the outermost included */
    int16_t last_id[S3L_TC_MAX_DEPTH]; /* last field id written at each depth */
};

/* Starts encoding into out (appending). The outermost struct is open at depth 1. */
void s3l__tc_init(struct s3l_tc_enc *e, struct s3l_buf *out);
/* The sticky status: 0, S3L_ENOMEM or S3L_ETOO_LARGE (buffer cap), S3L_EINTERNAL (misuse). */
int s3l__tc_status(const struct s3l_tc_enc *e);

/* Raw pieces: unsigned LEB128 varint, zigzag varints. */
void s3l__tc_varint(struct s3l_tc_enc *e, uint64_t v);
static inline uint64_t s3l__tc_zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* A field header for field `id` of compact type `type` in the current struct. */
void s3l__tc_field(struct s3l_tc_enc *e, int16_t id, enum s3l_tc_type type);
/* Fields with their values. */
void s3l__tc_field_bool(struct s3l_tc_enc *e, int16_t id, bool v);
void s3l__tc_field_i8(struct s3l_tc_enc *e, int16_t id, int8_t v);
void s3l__tc_field_i16(struct s3l_tc_enc *e, int16_t id, int16_t v);
void s3l__tc_field_i32(struct s3l_tc_enc *e, int16_t id, int32_t v);
void s3l__tc_field_i64(struct s3l_tc_enc *e, int16_t id, int64_t v);
void s3l__tc_field_binary(struct s3l_tc_enc *e, int16_t id, const void *p, size_t len);
void s3l__tc_field_string(struct s3l_tc_enc *e, int16_t id, const char *s);
/* A struct-valued field: opens a nested struct; close it with s3l__tc_struct_end. */
void s3l__tc_field_struct(struct s3l_tc_enc *e, int16_t id);
/* A list-valued field of n elements of elem type; then write n elements. */
void s3l__tc_field_list(struct s3l_tc_enc *e, int16_t id, enum s3l_tc_type elem, uint32_t n);

/* List elements (no field header). */
void s3l__tc_list_header(struct s3l_tc_enc *e, enum s3l_tc_type elem, uint32_t n);
void s3l__tc_elem_bool(struct s3l_tc_enc *e, bool v);
void s3l__tc_elem_i32(struct s3l_tc_enc *e, int32_t v);
void s3l__tc_elem_i64(struct s3l_tc_enc *e, int64_t v);
void s3l__tc_elem_binary(struct s3l_tc_enc *e, const void *p, size_t len);
/* A struct element of a list: opens it; close with s3l__tc_struct_end. */
void s3l__tc_elem_struct(struct s3l_tc_enc *e);

/* Writes the STOP byte of the innermost open struct and closes it (the outermost too). */
void s3l__tc_struct_end(struct s3l_tc_enc *e);

#endif
