/*
 * Fuzz target: Thrift compact round trip between the two independent halves of the module, the
 * encoder (thrift.h, the writer's) and the decoder (decode.h, the reader's). The input is a
 * program: each byte picks an operation (a field of some type with an id and a value taken from
 * the next bytes, a nested struct, a list of i32/i64/bool/binary/struct elements, the end of a
 * struct). The program is encoded, recording every event; the bytes are then decoded and each
 * field id, wire type, value, list header and element must come back as recorded, and the
 * decoder must end exactly at the last byte. Any difference aborts.
 * Built with libFuzzer under clang (S3L_FUZZ), else replayed over corpus/thrift_roundtrip by
 * replay_main.c (random programs of several lengths, and edge cases: ids that need the long
 * header form, 15+ element lists, empty binaries, the deepest nesting the encoder allows).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "thrift/decode.h"
#include "thrift/thrift.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum ev_kind { EV_I8, EV_I16, EV_I32, EV_I64, EV_BOOL, EV_BIN, EV_STRUCT, EV_END, EV_LIST };

struct ev {
    enum ev_kind kind;
    int16_t id;
    uint8_t elem;    /* EV_LIST: element wire type */
    uint32_t n;      /* EV_LIST: count; EV_BIN: length */
    int64_t v;
    const uint8_t *p; /* EV_BIN and binary elements: bytes in the input */
};

#define MAX_EVENTS 4096

struct prog {
    const uint8_t *in;
    size_t len, pos;
    struct ev ev[MAX_EVENTS];
    size_t n_ev;
    int16_t next_id[S3L_TC_MAX_DEPTH + 1];
};

static uint64_t take(struct prog *g, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++)
        v = v << 8 | (g->pos < g->len ? g->in[g->pos++] : 0);
    return v;
}

/* A field id: usually the next one (short form), sometimes a jump (long form). */
static int16_t next_id(struct prog *g, int depth)
{
    uint8_t j = (uint8_t)take(g, 1);
    int32_t id = g->next_id[depth] + (j < 200 ? 1 + j % 15 : 16 + j * 97);
    if (id > 32767 || id < 1)
        id = 1 + j;
    g->next_id[depth] = (int16_t)id;
    return (int16_t)id;
}

static struct ev *add(struct prog *g, enum ev_kind k, int16_t id)
{
    struct ev *e = &g->ev[g->n_ev++];
    memset(e, 0, sizeof(*e));
    e->kind = k;
    e->id = id;
    return e;
}

static void encode_list(struct prog *g, struct s3l_tc_enc *enc, int16_t id)
{
    static const enum s3l_tc_type types[] = {S3L_TC_I32, S3L_TC_I64, S3L_TC_BOOL_TRUE,
                                             S3L_TC_BINARY, S3L_TC_STRUCT};
    uint8_t sel = (uint8_t)take(g, 1);
    enum s3l_tc_type t = types[sel % 5];
    uint32_t n = (uint32_t)take(g, 1) % 40;
    if (g->n_ev + n + 2 >= MAX_EVENTS)
        n = 0;
    struct ev *l = add(g, EV_LIST, id);
    l->elem = (uint8_t)t;
    l->n = n;
    s3l__tc_field_list(enc, id, t, n);
    for (uint32_t i = 0; i < n; i++) {
        struct ev *e;
        switch (t) {
        case S3L_TC_I32:
            e = add(g, EV_I32, 0);
            e->v = (int32_t)take(g, 4);
            s3l__tc_elem_i32(enc, (int32_t)e->v);
            break;
        case S3L_TC_I64:
            e = add(g, EV_I64, 0);
            e->v = (int64_t)take(g, 8);
            s3l__tc_elem_i64(enc, e->v);
            break;
        case S3L_TC_BOOL_TRUE:
            e = add(g, EV_BOOL, 0);
            e->v = take(g, 1) & 1;
            s3l__tc_elem_bool(enc, e->v != 0);
            break;
        case S3L_TC_BINARY:
            e = add(g, EV_BIN, 0);
            e->n = (uint32_t)take(g, 1) % 8;
            e->p = g->in + g->pos;
            if (g->pos + e->n > g->len)
                e->n = (uint32_t)(g->len - g->pos);
            g->pos += e->n;
            s3l__tc_elem_binary(enc, e->p, e->n);
            break;
        default: /* an element struct with one i32 field 1 */
            add(g, EV_STRUCT, 0);
            e = add(g, EV_I32, 1);
            e->v = (int32_t)take(g, 2);
            add(g, EV_END, 0);
            s3l__tc_elem_struct(enc);
            s3l__tc_field_i32(enc, 1, (int32_t)e->v);
            s3l__tc_struct_end(enc);
            break;
        }
    }
}

/* Encodes the program; depth counts open structs, the outermost included. */
static void encode(struct prog *g, struct s3l_tc_enc *enc)
{
    int depth = 1;
    while (g->pos < g->len && g->n_ev + 8 < MAX_EVENTS) {
        uint8_t op = (uint8_t)take(g, 1) % 10;
        if (op == 7 && depth > 1) {
            add(g, EV_END, 0);
            s3l__tc_struct_end(enc);
            depth--;
            continue;
        }
        int16_t id = next_id(g, depth);
        struct ev *e;
        switch (op) {
        case 0: e = add(g, EV_I8, id); e->v = (int8_t)take(g, 1);
                s3l__tc_field_i8(enc, id, (int8_t)e->v); break;
        case 1: e = add(g, EV_I16, id); e->v = (int16_t)take(g, 2);
                s3l__tc_field_i16(enc, id, (int16_t)e->v); break;
        case 2: e = add(g, EV_I32, id); e->v = (int32_t)take(g, 4);
                s3l__tc_field_i32(enc, id, (int32_t)e->v); break;
        case 3: e = add(g, EV_I64, id); e->v = (int64_t)take(g, 8);
                s3l__tc_field_i64(enc, id, e->v); break;
        case 4: e = add(g, EV_BOOL, id); e->v = take(g, 1) & 1;
                s3l__tc_field_bool(enc, id, e->v != 0); break;
        case 5:
            e = add(g, EV_BIN, id);
            e->n = (uint32_t)take(g, 1);
            if (g->pos + e->n > g->len)
                e->n = (uint32_t)(g->len - g->pos);
            e->p = g->in + g->pos;
            g->pos += e->n;
            s3l__tc_field_binary(enc, id, e->p, e->n);
            break;
        case 6:
            if (depth + 1 >= S3L_TC_MAX_DEPTH)
                break;
            add(g, EV_STRUCT, id);
            s3l__tc_field_struct(enc, id);
            g->next_id[++depth] = 0;
            break;
        default: encode_list(g, enc, id); break;
        }
    }
    for (; depth > 1; depth--) {
        add(g, EV_END, 0);
        s3l__tc_struct_end(enc);
    }
    add(g, EV_END, 0);
    s3l__tc_struct_end(enc); /* the outermost */
}

static size_t at; /* next event to match while decoding */

static void expect_value(struct prog *g, struct s3l_tdec *d, const struct ev *e, uint8_t wire);

static void expect_struct(struct prog *g, struct s3l_tdec *d)
{
    struct s3l_tdec_field f;
    if (s3l__tdec_struct_begin(d))
        abort();
    for (;;) {
        if (s3l__tdec_field(d, &f) || at >= g->n_ev)
            abort();
        const struct ev *e = &g->ev[at++];
        if (f.type == S3L_TDEC_STOP) {
            if (e->kind != EV_END || s3l__tdec_struct_end(d))
                abort();
            return;
        }
        if (f.id != e->id)
            abort();
        if (f.type == S3L_TDEC_TRUE || f.type == S3L_TDEC_FALSE) {
            if (e->kind != EV_BOOL || f.bool_value != (e->v != 0))
                abort();
            continue;
        }
        expect_value(g, d, e, f.type);
    }
}

static void expect_list(struct prog *g, struct s3l_tdec *d, const struct ev *l)
{
    uint8_t t;
    uint32_t n;
    if (s3l__tdec_list_begin(d, &t, &n) || n != l->n)
        abort();
    if (t != l->elem)
        abort();
    for (uint32_t i = 0; i < n; i++) {
        const struct ev *e = &g->ev[at++];
        if (t == S3L_TDEC_TRUE || t == S3L_TDEC_FALSE) {
            bool b;
            if (e->kind != EV_BOOL || s3l__tdec_bool_elem(d, &b) || b != (e->v != 0))
                abort();
        } else {
            expect_value(g, d, e, t);
        }
    }
    if (s3l__tdec_list_end(d))
        abort();
}

static void expect_value(struct prog *g, struct s3l_tdec *d, const struct ev *e, uint8_t wire)
{
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    struct s3l_slice s;
    switch (e->kind) {
    case EV_I8: if (wire != S3L_TDEC_I8 || s3l__tdec_i8(d, &i8) || i8 != e->v) abort(); break;
    case EV_I16: if (wire != S3L_TDEC_I16 || s3l__tdec_i16(d, &i16) || i16 != e->v) abort(); break;
    case EV_I32: if (wire != S3L_TDEC_I32 || s3l__tdec_i32(d, &i32) || i32 != e->v) abort(); break;
    case EV_I64: if (wire != S3L_TDEC_I64 || s3l__tdec_i64(d, &i64) || i64 != e->v) abort(); break;
    case EV_BIN:
        if (wire != S3L_TDEC_BINARY || s3l__tdec_binary(d, &s) || s.len != e->n ||
            (s.len && memcmp(s.ptr, e->p, s.len)))
            abort();
        break;
    case EV_STRUCT: if (wire != S3L_TDEC_STRUCT) abort(); expect_struct(g, d); break;
    case EV_LIST: if (wire != S3L_TDEC_LIST) abort(); expect_list(g, d, e); break;
    default: abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct prog *g = calloc(1, sizeof(*g));
    if (!g)
        return 0;
    g->in = data;
    g->len = size;
    struct s3l_buf out;
    s3l_buf_init(&out, 1 << 20);
    struct s3l_tc_enc enc;
    s3l__tc_init(&enc, &out);
    encode(g, &enc);
    if (s3l__tc_status(&enc) == 0) {
        struct s3l_tdec d;
        s3l__tdec_init(&d, out.ptr, out.len, S3L_TDEC_MAX_DEPTH);
        at = 0;
        expect_struct(g, &d);
        if (at != g->n_ev || d.pos != out.len || d.depth != 0)
            abort();
    }
    s3l_buf_free(&out);
    free(g);
    return 0;
}
