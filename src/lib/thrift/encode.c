/*
 * The Thrift compact protocol encoder (thrift.h). Wire rules, from apache/thrift
 * doc/specs/thrift-compact-protocol.md:
 * - integers i16/i32/i64 are zigzag-encoded then written as ULEB128 varints; i8 is one raw byte;
 * - a field header is one byte (delta << 4 | type) when the id is 1..15 above the previous field
 *   id of the same struct, else the type byte followed by the id as a zigzag varint i16;
 * - booleans in fields live in the header's type nibble (1 true, 2 false); as list elements they
 *   are one byte each, 1 true and 2 false;
 * - binary is a varint length then the bytes;
 * - a list header is one byte (size << 4 | elem type) for sizes 0..14, else 0xF0 | elem type and
 *   the size as a varint;
 * - a struct ends with a STOP byte (0); nested structs restart the field id delta at 0.
 */
#include "thrift/thrift.h"

static void put(struct s3l_tc_enc *e, const void *p, size_t n)
{
    if (e->status)
        return;
    int rc = s3l_buf_append(e->out, p, n);
    if (rc)
        e->status = rc;
}

static void put_byte(struct s3l_tc_enc *e, uint8_t b)
{
    put(e, &b, 1);
}

void s3l__tc_init(struct s3l_tc_enc *e, struct s3l_buf *out)
{
    e->out = out;
    e->status = 0;
    e->depth = 1;
    e->last_id[0] = 0;
}

int s3l__tc_status(const struct s3l_tc_enc *e)
{
    return e->status;
}

void s3l__tc_varint(struct s3l_tc_enc *e, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    put(e, tmp, n);
}

void s3l__tc_field(struct s3l_tc_enc *e, int16_t id, enum s3l_tc_type type)
{
    if (e->depth < 1) {
        e->status = e->status ? e->status : S3L_EINTERNAL;
        return;
    }
    int16_t *last = &e->last_id[e->depth - 1];
    int delta = id - *last;
    if (delta > 0 && delta <= 15) {
        put_byte(e, (uint8_t)((delta << 4) | (int)type));
    } else {
        put_byte(e, (uint8_t)type);
        s3l__tc_varint(e, s3l__tc_zigzag64(id));
    }
    *last = id;
}

void s3l__tc_field_bool(struct s3l_tc_enc *e, int16_t id, bool v)
{
    s3l__tc_field(e, id, v ? S3L_TC_BOOL_TRUE : S3L_TC_BOOL_FALSE);
}

void s3l__tc_field_i8(struct s3l_tc_enc *e, int16_t id, int8_t v)
{
    s3l__tc_field(e, id, S3L_TC_BYTE);
    put_byte(e, (uint8_t)v);
}

void s3l__tc_field_i16(struct s3l_tc_enc *e, int16_t id, int16_t v)
{
    s3l__tc_field(e, id, S3L_TC_I16);
    s3l__tc_varint(e, s3l__tc_zigzag64(v));
}

void s3l__tc_field_i32(struct s3l_tc_enc *e, int16_t id, int32_t v)
{
    s3l__tc_field(e, id, S3L_TC_I32);
    s3l__tc_varint(e, s3l__tc_zigzag64(v));
}

void s3l__tc_field_i64(struct s3l_tc_enc *e, int16_t id, int64_t v)
{
    s3l__tc_field(e, id, S3L_TC_I64);
    s3l__tc_varint(e, s3l__tc_zigzag64(v));
}

void s3l__tc_field_binary(struct s3l_tc_enc *e, int16_t id, const void *p, size_t len)
{
    s3l__tc_field(e, id, S3L_TC_BINARY);
    s3l__tc_elem_binary(e, p, len);
}

void s3l__tc_field_string(struct s3l_tc_enc *e, int16_t id, const char *s)
{
    s3l__tc_field_binary(e, id, s, strlen(s));
}

static void push(struct s3l_tc_enc *e)
{
    if (e->depth >= S3L_TC_MAX_DEPTH) {
        e->status = e->status ? e->status : S3L_EINTERNAL;
        return;
    }
    e->last_id[e->depth++] = 0;
}

void s3l__tc_field_struct(struct s3l_tc_enc *e, int16_t id)
{
    s3l__tc_field(e, id, S3L_TC_STRUCT);
    push(e);
}

void s3l__tc_field_list(struct s3l_tc_enc *e, int16_t id, enum s3l_tc_type elem, uint32_t n)
{
    s3l__tc_field(e, id, S3L_TC_LIST);
    s3l__tc_list_header(e, elem, n);
}

void s3l__tc_list_header(struct s3l_tc_enc *e, enum s3l_tc_type elem, uint32_t n)
{
    /* Booleans in collections are declared with type 1 (BOOLEAN_TRUE doubles as "bool"). */
    if (n < 15) {
        put_byte(e, (uint8_t)((n << 4) | (uint32_t)elem));
    } else {
        put_byte(e, (uint8_t)(0xF0 | (uint32_t)elem));
        s3l__tc_varint(e, n);
    }
}

void s3l__tc_elem_bool(struct s3l_tc_enc *e, bool v)
{
    put_byte(e, v ? 1 : 2);
}

void s3l__tc_elem_i32(struct s3l_tc_enc *e, int32_t v)
{
    s3l__tc_varint(e, s3l__tc_zigzag64(v));
}

void s3l__tc_elem_i64(struct s3l_tc_enc *e, int64_t v)
{
    s3l__tc_varint(e, s3l__tc_zigzag64(v));
}

void s3l__tc_elem_binary(struct s3l_tc_enc *e, const void *p, size_t len)
{
    s3l__tc_varint(e, len);
    if (len)
        put(e, p, len);
}

void s3l__tc_elem_struct(struct s3l_tc_enc *e)
{
    push(e);
}

void s3l__tc_struct_end(struct s3l_tc_enc *e)
{
    put_byte(e, S3L_TC_STOP);
    if (e->depth > 0)
        e->depth--;
    else
        e->status = e->status ? e->status : S3L_EINTERNAL;
}
