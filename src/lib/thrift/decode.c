/*
 * thrift/decode: the compact protocol reader described in decode.h. Every read checks the bytes
 * left first; every failure is recorded once (sticky) with its position, so the caller can name
 * the file offset of the first bad byte. Wire format: apache/thrift
 * doc/specs/thrift-compact-protocol.md (sections "Integer encoding", "Binary encoding",
 * "Struct encoding", "List and Set", "Map").
 */
#include "thrift/decode.h"

void s3l__tdec_init(struct s3l_tdec *d, const void *buf, size_t len, unsigned max_depth)
{
    memset(d, 0, sizeof(*d));
    d->buf = buf;
    d->len = buf ? len : 0;
    if (max_depth == 0)
        max_depth = S3L_TDEC_DEFAULT_DEPTH;
    d->max_depth = max_depth > S3L_TDEC_MAX_DEPTH ? S3L_TDEC_MAX_DEPTH : max_depth;
}

int s3l__tdec_fail(struct s3l_tdec *d, const char *what)
{
    if (d->status == 0) {
        d->status = S3L_ECORRUPT;
        d->error_pos = d->pos;
        d->error_what = what;
    }
    return d->status;
}

int s3l__tdec_error(const struct s3l_tdec *d, uint64_t base, const char *where,
                    struct s3l_error *err)
{
    if (d->status == 0)
        return 0;
    return s3l_error_set(err, d->status, "%s: corrupt thrift at offset %llu: %s",
                         where ? where : "thrift", (unsigned long long)(base + d->error_pos),
                         d->error_what ? d->error_what : "invalid data");
}

static size_t left(const struct s3l_tdec *d)
{
    return d->len - d->pos;
}

int s3l__tdec_varint(struct s3l_tdec *d, uint64_t *out)
{
    if (d->status)
        return d->status;
    uint64_t v = 0;
    /* A 64-bit value needs at most 10 groups of 7 bits; the tenth may carry only one bit. */
    for (unsigned i = 0; i < 10; i++) {
        if (d->pos >= d->len)
            return s3l__tdec_fail(d, "truncated varint");
        uint8_t b = d->buf[d->pos++];
        if (i == 9 && (b & 0xfe) != 0)
            return s3l__tdec_fail(d, "varint overflows 64 bits");
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if ((b & 0x80) == 0) {
            *out = v;
            return 0;
        }
    }
    return s3l__tdec_fail(d, "varint longer than 10 bytes");
}

/* zigzagToLong(n) = (n >>> 1) ^ -(n & 1) (thrift-compact-protocol.md, "Integer encoding"). */
static int64_t unzigzag(uint64_t n)
{
    return (int64_t)((n >> 1) ^ (~(n & 1) + 1));
}

int s3l__tdec_i64(struct s3l_tdec *d, int64_t *out)
{
    uint64_t raw;
    int rc = s3l__tdec_varint(d, &raw);
    if (rc)
        return rc;
    *out = unzigzag(raw);
    return 0;
}

int s3l__tdec_i32(struct s3l_tdec *d, int32_t *out)
{
    uint64_t raw;
    int rc = s3l__tdec_varint(d, &raw);
    if (rc)
        return rc;
    /* An i32 is zigzagged in 32 bits, so the raw value never exceeds 2^32 - 1. */
    if (raw > UINT32_MAX)
        return s3l__tdec_fail(d, "i32 value out of range");
    *out = (int32_t)unzigzag(raw);
    return 0;
}

int s3l__tdec_i16(struct s3l_tdec *d, int16_t *out)
{
    uint64_t raw;
    int rc = s3l__tdec_varint(d, &raw);
    if (rc)
        return rc;
    if (raw > UINT16_MAX)
        return s3l__tdec_fail(d, "i16 value out of range");
    *out = (int16_t)unzigzag(raw);
    return 0;
}

int s3l__tdec_i8(struct s3l_tdec *d, int8_t *out)
{
    if (d->status)
        return d->status;
    if (left(d) < 1)
        return s3l__tdec_fail(d, "truncated i8");
    *out = (int8_t)d->buf[d->pos++];
    return 0;
}

int s3l__tdec_double(struct s3l_tdec *d, double *out)
{
    if (d->status)
        return d->status;
    if (left(d) < 8)
        return s3l__tdec_fail(d, "truncated double");
    /* Little-endian IEEE 754 bits ("Double encoding"). */
    uint64_t bits = 0;
    for (unsigned i = 0; i < 8; i++)
        bits |= (uint64_t)d->buf[d->pos + i] << (8 * i);
    d->pos += 8;
    memcpy(out, &bits, sizeof(*out));
    return 0;
}

int s3l__tdec_binary(struct s3l_tdec *d, struct s3l_slice *out)
{
    uint64_t n;
    int rc = s3l__tdec_varint(d, &n);
    if (rc)
        return rc;
    if (n > left(d))
        return s3l__tdec_fail(d, "binary length beyond the buffer");
    *out = s3l_slice_make(d->buf + d->pos, (size_t)n);
    d->pos += (size_t)n;
    return 0;
}

int s3l__tdec_bool_elem(struct s3l_tdec *d, bool *out)
{
    if (d->status)
        return d->status;
    if (left(d) < 1)
        return s3l__tdec_fail(d, "truncated bool");
    /* The spec says 1 true, 0 false; the C++ and Java libraries write 1 and 2 (the field header
     * codes). Accept both, reject anything else as corrupt. */
    uint8_t b = d->buf[d->pos];
    if (b > 2)
        return s3l__tdec_fail(d, "bool element not 0, 1 or 2");
    d->pos++;
    *out = b == 1;
    return 0;
}

static int push(struct s3l_tdec *d)
{
    if (d->status)
        return d->status;
    if (d->depth >= d->max_depth)
        return s3l__tdec_fail(d, "nesting too deep");
    d->depth++;
    d->last_id[d->depth] = 0;
    return 0;
}

static int pop(struct s3l_tdec *d)
{
    if (d->status)
        return d->status;
    if (d->depth == 0)
        return s3l__tdec_fail(d, "unbalanced end of struct or list");
    d->depth--;
    return 0;
}

int s3l__tdec_struct_begin(struct s3l_tdec *d)
{
    return push(d);
}

int s3l__tdec_struct_end(struct s3l_tdec *d)
{
    return pop(d);
}

int s3l__tdec_list_end(struct s3l_tdec *d)
{
    return pop(d);
}

int s3l__tdec_field(struct s3l_tdec *d, struct s3l_tdec_field *f)
{
    if (d->status)
        return d->status;
    if (d->depth == 0)
        return s3l__tdec_fail(d, "field read outside a struct");
    if (left(d) < 1)
        return s3l__tdec_fail(d, "truncated struct: no stop field");
    uint8_t b = d->buf[d->pos++];
    f->type = b & 0x0f;
    f->bool_value = false;
    f->id = 0;
    if (b == 0)
        return 0; /* stop field */
    if (f->type == S3L_TDEC_STOP || f->type > S3L_TDEC_UUID) {
        d->pos--;
        return s3l__tdec_fail(d, "unknown field type");
    }
    int32_t id;
    unsigned delta = b >> 4;
    if (delta != 0) {
        id = (int32_t)d->last_id[d->depth] + (int32_t)delta;
    } else {
        int16_t id16;
        int rc = s3l__tdec_i16(d, &id16);
        if (rc)
            return rc;
        id = id16;
    }
    if (id <= 0 || id > INT16_MAX)
        return s3l__tdec_fail(d, "field id out of range");
    f->id = (int16_t)id;
    d->last_id[d->depth] = f->id;
    if (f->type == S3L_TDEC_TRUE || f->type == S3L_TDEC_FALSE)
        f->bool_value = f->type == S3L_TDEC_TRUE;
    return 0;
}

int s3l__tdec_expect(struct s3l_tdec *d, const struct s3l_tdec_field *f, enum s3l_tdec_type want)
{
    if (d->status)
        return d->status;
    bool ok = f->type == want;
    if (want == S3L_TDEC_TRUE || want == S3L_TDEC_FALSE)
        ok = f->type == S3L_TDEC_TRUE || f->type == S3L_TDEC_FALSE;
    /* A set is encoded like a list; accept it where a list is declared. */
    if (want == S3L_TDEC_LIST)
        ok = ok || f->type == S3L_TDEC_SET;
    return ok ? 0 : s3l__tdec_fail(d, "field of unexpected type");
}

static bool valid_elem_type(uint8_t t)
{
    return t >= S3L_TDEC_TRUE && t <= S3L_TDEC_UUID;
}

int s3l__tdec_list_begin(struct s3l_tdec *d, uint8_t *elem_type, uint32_t *count)
{
    if (d->status)
        return d->status;
    if (left(d) < 1)
        return s3l__tdec_fail(d, "truncated list header");
    uint8_t b = d->buf[d->pos++];
    uint8_t t = b & 0x0f;
    uint64_t n = b >> 4;
    if (!valid_elem_type(t)) {
        d->pos--;
        return s3l__tdec_fail(d, "unknown list element type");
    }
    if (n == 15) {
        int rc = s3l__tdec_varint(d, &n);
        if (rc)
            return rc;
    }
    /* Every element takes at least one byte on the wire, so a count beyond the bytes left is
     * corrupt; this also bounds what a caller allocates from it. */
    if (n > left(d) || n > INT32_MAX)
        return s3l__tdec_fail(d, "list count beyond the buffer");
    int rc = push(d);
    if (rc)
        return rc;
    *elem_type = t;
    *count = (uint32_t)n;
    return 0;
}

static int skip_bytes(struct s3l_tdec *d, size_t n, const char *what)
{
    if (n > left(d))
        return s3l__tdec_fail(d, what);
    d->pos += n;
    return 0;
}

static int skip_list(struct s3l_tdec *d)
{
    uint8_t t;
    uint32_t n;
    int rc = s3l__tdec_list_begin(d, &t, &n);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        if (t == S3L_TDEC_TRUE || t == S3L_TDEC_FALSE) {
            bool b;
            rc = s3l__tdec_bool_elem(d, &b);
        } else {
            rc = s3l__tdec_skip(d, t);
        }
    }
    return rc ? rc : s3l__tdec_list_end(d);
}

static int skip_map(struct s3l_tdec *d)
{
    uint64_t n;
    int rc = s3l__tdec_varint(d, &n);
    if (rc)
        return rc;
    if (n == 0)
        return 0; /* an empty map is the single byte 0 */
    if (left(d) < 1)
        return s3l__tdec_fail(d, "truncated map header");
    uint8_t kv = d->buf[d->pos];
    uint8_t kt = kv >> 4, vt = kv & 0x0f;
    if (!valid_elem_type(kt) || !valid_elem_type(vt))
        return s3l__tdec_fail(d, "unknown map element type");
    d->pos++;
    if (n > left(d) / 2)
        return s3l__tdec_fail(d, "map count beyond the buffer");
    rc = push(d);
    for (uint64_t i = 0; rc == 0 && i < n; i++) {
        rc = s3l__tdec_skip(d, kt);
        if (rc == 0)
            rc = s3l__tdec_skip(d, vt);
    }
    return rc ? rc : pop(d);
}

int s3l__tdec_skip_field(struct s3l_tdec *d, const struct s3l_tdec_field *f)
{
    /* A boolean field's value is in its header: nothing follows it. */
    if (f->type == S3L_TDEC_TRUE || f->type == S3L_TDEC_FALSE)
        return d->status;
    return s3l__tdec_skip(d, f->type);
}

int s3l__tdec_skip_struct(struct s3l_tdec *d)
{
    int rc = s3l__tdec_struct_begin(d);
    struct s3l_tdec_field f;
    while (rc == 0) {
        rc = s3l__tdec_field(d, &f);
        if (rc || f.type == S3L_TDEC_STOP)
            break;
        rc = s3l__tdec_skip_field(d, &f);
    }
    return rc ? rc : s3l__tdec_struct_end(d);
}

int s3l__tdec_skip(struct s3l_tdec *d, uint8_t type)
{
    if (d->status)
        return d->status;
    uint64_t v;
    struct s3l_slice s;
    switch (type) {
    case S3L_TDEC_TRUE:
    case S3L_TDEC_FALSE:
        /* Reached only for list/map elements, whose bools are one byte. */
        return skip_bytes(d, 1, "truncated bool");
    case S3L_TDEC_I8:
        return skip_bytes(d, 1, "truncated i8");
    case S3L_TDEC_I16:
    case S3L_TDEC_I32:
    case S3L_TDEC_I64:
        return s3l__tdec_varint(d, &v);
    case S3L_TDEC_DOUBLE:
        return skip_bytes(d, 8, "truncated double");
    case S3L_TDEC_BINARY:
        return s3l__tdec_binary(d, &s);
    case S3L_TDEC_UUID:
        return skip_bytes(d, 16, "truncated uuid");
    case S3L_TDEC_LIST:
    case S3L_TDEC_SET:
        return skip_list(d);
    case S3L_TDEC_MAP:
        return skip_map(d);
    case S3L_TDEC_STRUCT:
        return s3l__tdec_skip_struct(d);
    default:
        return s3l__tdec_fail(d, "unknown type");
    }
}
