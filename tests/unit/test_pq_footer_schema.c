/*
 * Unit tests of the footer reader's schema handling on hand-built FileMetaData: the legacy forms
 * of LogicalTypes.md that DuckDB and Arrow no longer write (2-level lists, lists named "array"
 * and "<name>_tuple", bare repeated fields, MAP_KEY_VALUE, converted types without a
 * LogicalType, INT96, INTERVAL), and schemas that break the rules. The bytes are written by a
 * small encoder local to this file (not the product's), field ids from parquet.thrift; the
 * expected Arrow types are read off LogicalTypes.md's backward-compatibility rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "s3l/pq_footer.h"
#include "schema/schema_int.h"
#include "util/util.h"

/* A minimal compact-protocol writer for test input. */
struct tb {
    uint8_t b[8192];
    size_t n;
    int16_t last[32];
    int d;
};

static void put(struct tb *t, uint8_t x)
{
    assert_true(t->n < sizeof(t->b));
    t->b[t->n++] = x;
}

static void varint(struct tb *t, uint64_t v)
{
    do {
        put(t, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
        v >>= 7;
    } while (v);
}

static void zz(struct tb *t, int64_t v)
{
    varint(t, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void field(struct tb *t, int16_t id, uint8_t type)
{
    int delta = id - t->last[t->d];
    if (delta > 0 && delta <= 15) {
        put(t, (uint8_t)(delta << 4 | type));
    } else {
        put(t, type);
        zz(t, id);
    }
    t->last[t->d] = id;
}

static void i32f(struct tb *t, int16_t id, int32_t v)
{
    field(t, id, 5);
    zz(t, v);
}

static void strf(struct tb *t, int16_t id, const char *s)
{
    field(t, id, 8);
    varint(t, strlen(s));
    for (const char *p = s; *p; p++)
        put(t, (uint8_t)*p);
}

static void open_struct(struct tb *t)
{
    t->last[++t->d] = 0;
}

static void close_struct(struct tb *t)
{
    put(t, 0);
    t->d--;
}

static void listf(struct tb *t, int16_t id, uint8_t elem, uint32_t n)
{
    field(t, id, 9);
    if (n < 15) {
        put(t, (uint8_t)(n << 4 | elem));
    } else {
        put(t, (uint8_t)(0xf0 | elem));
        varint(t, n);
    }
}

enum { REQ = 0, OPT = 1, REP = 2, GROUP = -1, NONE = -1 };

/* One SchemaElement: type (-1 group), repetition (-1 none), children, converted (-1 none). */
static void element(struct tb *t, const char *name, int type, int rep, int children, int conv)
{
    open_struct(t);
    if (type >= 0)
        i32f(t, 1, type);
    if (type == S3L_PQ_FIXED_LEN_BYTE_ARRAY)
        i32f(t, 2, 12);
    if (rep >= 0)
        i32f(t, 3, rep);
    strf(t, 4, name);
    if (children > 0)
        i32f(t, 5, children);
    if (conv >= 0)
        i32f(t, 6, conv);
    if (conv == 5) { /* DECIMAL: scale 2, precision 12 on the element */
        i32f(t, 7, 2);
        i32f(t, 8, 12);
    }
    close_struct(t);
}

/* An element with a LogicalType of member `kind` (an empty struct member). */
static void element_lt(struct tb *t, const char *name, int type, int kind)
{
    open_struct(t);
    i32f(t, 1, type);
    i32f(t, 3, OPT);
    strf(t, 4, name);
    field(t, 10, 12);
    open_struct(t);
    field(t, (int16_t)kind, 12);
    open_struct(t);
    close_struct(t);
    close_struct(t);
    close_struct(t);
}

/* FileMetaData {1 version, 2 schema (n elements written by fill), 3 num_rows, 4 row_groups []}. */
static void file_begin(struct tb *t, uint32_t n)
{
    memset(t, 0, sizeof(*t));
    open_struct(t);
    i32f(t, 1, 1);
    listf(t, 2, 12, n);
}

static void file_end(struct tb *t, uint32_t n_row_groups_with_one_column)
{
    field(t, 3, 6);
    zz(t, 0);
    listf(t, 4, 12, n_row_groups_with_one_column);
    for (uint32_t g = 0; g < n_row_groups_with_one_column; g++) {
        open_struct(t);
        listf(t, 1, 12, 1);
        open_struct(t); /* ColumnChunk without meta_data */
        close_struct(t);
        field(t, 2, 6);
        zz(t, 0);
        field(t, 3, 6);
        zz(t, 0);
        close_struct(t);
    }
    close_struct(t);
}

static struct s3l_pq_footer *decode(struct tb *t, int want, const char *msg)
{
    struct s3l_pq_footer *f = NULL;
    struct s3l_error err = {0};
    int rc = s3l_pq_footer_decode(t->b, t->n, 100, NULL, &f, &err);
    if (rc != want)
        fail_msg("decode gave %d (%s), expected %d", rc, err.message, want);
    if (msg && !strstr(err.message, msg))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, msg);
    return f;
}

static void legacy_lists(void **state)
{
    (void)state;
    struct tb t;
    file_begin(&t, 15);
    element(&t, "root", GROUP, NONE, 5, NONE);
    element(&t, "a", GROUP, OPT, 1, 3);           /* LIST */
    element(&t, "array", S3L_PQ_INT32, REP, 0, NONE); /* rule 1: repeated primitive */
    element(&t, "b", GROUP, OPT, 1, 3);
    element(&t, "array", GROUP, REP, 1, NONE);    /* rule 3: named "array" */
    element(&t, "str", S3L_PQ_BYTE_ARRAY, REQ, 0, 0);
    element(&t, "c", GROUP, OPT, 1, 3);
    element(&t, "c_tuple", GROUP, REP, 1, NONE);  /* rule 3: named "<list>_tuple" */
    element(&t, "x", S3L_PQ_INT64, REQ, 0, NONE);
    element(&t, "d", GROUP, REQ, 1, 3);
    element(&t, "bag", GROUP, REP, 1, NONE);      /* rule 4: the 3-level form */
    element(&t, "el", S3L_PQ_INT32, OPT, 0, NONE);
    element(&t, "e", S3L_PQ_INT32, REP, 0, NONE); /* a bare repeated field */
    /* A sixth top-level group, beyond the root's num_children: corrupt. */
    element(&t, "f", GROUP, OPT, 1, NONE);
    element(&t, "g", S3L_PQ_BOOLEAN, REQ, 0, NONE);
    file_end(&t, 0);
    struct s3l_pq_footer *f = decode(&t, S3L_ECORRUPT, "element 13 (f) is outside the root's 5");
    assert_null(f);

    file_begin(&t, 13);
    element(&t, "root", GROUP, NONE, 5, NONE);
    element(&t, "a", GROUP, OPT, 1, 3);
    element(&t, "array", S3L_PQ_INT32, REP, 0, NONE);
    element(&t, "b", GROUP, OPT, 1, 3);
    element(&t, "array", GROUP, REP, 1, NONE);
    element(&t, "str", S3L_PQ_BYTE_ARRAY, REQ, 0, 0);
    element(&t, "c", GROUP, OPT, 1, 3);
    element(&t, "c_tuple", GROUP, REP, 1, NONE);
    element(&t, "x", S3L_PQ_INT64, REQ, 0, NONE);
    element(&t, "d", GROUP, REQ, 1, 3);
    element(&t, "bag", GROUP, REP, 1, NONE);
    element(&t, "el", S3L_PQ_INT32, OPT, 0, NONE);
    element(&t, "e", S3L_PQ_INT32, REP, 0, NONE);
    file_end(&t, 0);
    f = decode(&t, 0, NULL);
    /* Levels: a.array def 2 rep 1; b.array.str 2/1; c.c_tuple.x 2/1; d.bag.el 2/1; e 1/1. */
    static const int defs[] = {2, 2, 2, 2, 1};
    assert_int_equal(f->n_leaves, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(s3l_pq_footer_leaf(f, i)->max_def, defs[i]);
        assert_int_equal(s3l_pq_footer_leaf(f, i)->max_rep, 1);
    }
    struct s3l_schema *s;
    struct s3l_error err = {0};
    assert_int_equal(s3l_pq_footer_schema(f, &s, &err), 0);
    const struct s3l_field *fl = s->fields;
    assert_int_equal(fl[0].type.id, S3L_TYPE_LIST); /* a: list<array: int32 not null> */
    assert_string_equal(fl[0].type.children[0].name, "array");
    assert_int_equal(fl[0].type.children[0].type.id, S3L_TYPE_INT32);
    assert_false(fl[0].type.children[0].nullable);
    assert_int_equal(fl[1].type.children[0].type.id, S3L_TYPE_STRUCT); /* b: list<struct<str>> */
    assert_string_equal(fl[1].type.children[0].type.children[0].name, "str");
    assert_int_equal(fl[1].type.children[0].type.children[0].type.id, S3L_TYPE_UTF8);
    assert_int_equal(fl[2].type.children[0].type.id, S3L_TYPE_STRUCT); /* c: list<struct<x>> */
    assert_int_equal(fl[2].type.children[0].type.children[0].type.id, S3L_TYPE_INT64);
    assert_int_equal(fl[3].type.children[0].type.id, S3L_TYPE_INT32);  /* d: list<el: int32> */
    assert_string_equal(fl[3].type.children[0].name, "el");
    assert_true(fl[3].type.children[0].nullable);
    assert_false(fl[3].nullable);
    assert_int_equal(fl[4].type.id, S3L_TYPE_LIST);                    /* e: list<e: int32> */
    assert_int_equal(fl[4].type.children[0].type.id, S3L_TYPE_INT32);
    assert_false(fl[4].type.children[0].nullable);
    assert_false(fl[4].nullable);
    s3l_schema_free(s);
    s3l_pq_footer_free(f);
}

static void legacy_map_and_converted_types(void **state)
{
    (void)state;
    struct tb t;
    file_begin(&t, 13);
    element(&t, "schema", GROUP, NONE, 9, NONE);
    element(&t, "m", GROUP, OPT, 1, 2);               /* MAP_KEY_VALUE */
    element(&t, "map", GROUP, REP, 2, NONE);
    element(&t, "key", S3L_PQ_BYTE_ARRAY, REQ, 0, 0);
    element(&t, "value", S3L_PQ_INT32, OPT, 0, NONE);
    element(&t, "ts", S3L_PQ_INT64, OPT, 0, 9);       /* TIMESTAMP_MILLIS */
    element(&t, "u16", S3L_PQ_INT32, OPT, 0, 12);     /* UINT_16 */
    element(&t, "dec", S3L_PQ_INT64, OPT, 0, 5);      /* DECIMAL(12, 2) */
    element(&t, "i96", S3L_PQ_INT96, OPT, 0, NONE);
    element(&t, "iv", S3L_PQ_FIXED_LEN_BYTE_ARRAY, OPT, 0, 21); /* INTERVAL */
    element(&t, "tm", S3L_PQ_INT32, OPT, 0, 7);       /* TIME_MILLIS */
    element(&t, "en", S3L_PQ_BYTE_ARRAY, OPT, 0, 4);  /* ENUM */
    element(&t, "bs", S3L_PQ_BYTE_ARRAY, OPT, 0, 20); /* BSON */
    file_end(&t, 0);
    struct s3l_pq_footer *f = decode(&t, 0, NULL);
    struct s3l_schema *s;
    struct s3l_error err = {0};
    assert_int_equal(s3l_pq_footer_schema(f, &s, &err), 0);
    const struct s3l_field *fl = s->fields;
    assert_int_equal(s->n_fields, 9);
    assert_int_equal(fl[0].type.id, S3L_TYPE_MAP);
    assert_int_equal(fl[0].type.children[0].type.id, S3L_TYPE_UTF8);
    assert_int_equal(fl[0].type.children[1].type.id, S3L_TYPE_INT32);
    assert_int_equal(fl[1].type.id, S3L_TYPE_TIMESTAMP);
    assert_int_equal(fl[1].type.unit, S3L_UNIT_MILLI);
    assert_string_equal(fl[1].type.tz, "UTC");
    assert_int_equal(fl[2].type.id, S3L_TYPE_UINT16);
    assert_int_equal(fl[3].type.id, S3L_TYPE_DECIMAL128);
    assert_int_equal(fl[3].type.precision, 12);
    assert_int_equal(fl[3].type.scale, 2);
    assert_int_equal(fl[4].type.id, S3L_TYPE_TIMESTAMP);
    assert_int_equal(fl[4].type.unit, S3L_UNIT_NANO);
    assert_null(fl[4].type.tz);
    assert_int_equal(fl[5].type.id, S3L_TYPE_FIXED_SIZE_BINARY);
    assert_int_equal(fl[5].type.byte_width, 12);
    assert_int_equal(fl[6].type.id, S3L_TYPE_TIME32);
    assert_int_equal(fl[6].type.unit, S3L_UNIT_MILLI);
    assert_int_equal(fl[7].type.id, S3L_TYPE_UTF8);
    assert_int_equal(fl[8].type.id, S3L_TYPE_BINARY);
    s3l_schema_free(s);
    s3l_pq_footer_free(f);
}

static void logical_types_new_and_unknown(void **state)
{
    (void)state;
    struct tb t;
    file_begin(&t, 4);
    element(&t, "schema", GROUP, NONE, 3, NONE);
    element_lt(&t, "f16", S3L_PQ_FIXED_LEN_BYTE_ARRAY, S3L_PQ_LT_FLOAT16);
    element_lt(&t, "geo", S3L_PQ_BYTE_ARRAY, S3L_PQ_LT_GEOMETRY);
    element_lt(&t, "future", S3L_PQ_INT64, 30); /* a member id this reader does not know */
    file_end(&t, 0);
    struct s3l_pq_footer *f = decode(&t, 0, NULL);
    assert_int_equal(f->schema[3].logical.kind, S3L_PQ_LT_OTHER);
    struct s3l_schema *s;
    struct s3l_error err = {0};
    assert_int_equal(s3l_pq_footer_schema(f, &s, &err), 0);
    assert_int_equal(s->fields[0].type.id, S3L_TYPE_FLOAT16);
    assert_int_equal(s->fields[1].type.id, S3L_TYPE_BINARY);
    assert_int_equal(s->fields[2].type.id, S3L_TYPE_INT64);
    s3l_schema_free(s);
    s3l_pq_footer_free(f);

    file_begin(&t, 2);
    element(&t, "schema", GROUP, NONE, 1, NONE);
    element_lt(&t, "v", S3L_PQ_BYTE_ARRAY, S3L_PQ_LT_VARIANT);
    file_end(&t, 0);
    f = decode(&t, 0, NULL);
    s3l_error_clear(&err);
    assert_int_equal(s3l_pq_footer_schema(f, &s, &err), S3L_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "column v: VARIANT"));
    s3l_pq_footer_free(f);
}

static void broken_groups_and_trees(void **state)
{
    (void)state;
    struct tb t;
    struct s3l_schema *s;
    struct s3l_error err = {0};
    /* A LIST with two children. */
    file_begin(&t, 4);
    element(&t, "schema", GROUP, NONE, 1, NONE);
    element(&t, "l", GROUP, OPT, 2, 3);
    element(&t, "x", S3L_PQ_INT32, REP, 0, NONE);
    element(&t, "y", S3L_PQ_INT32, REP, 0, NONE);
    file_end(&t, 0);
    struct s3l_pq_footer *f = decode(&t, 0, NULL);
    assert_int_equal(s3l_pq_footer_schema(f, &s, &err), S3L_ECORRUPT);
    assert_non_null(strstr(err.message, "column l: a LIST must hold exactly one repeated field"));
    s3l_pq_footer_free(f);
    /* A MAP whose repeated group has one child. */
    file_begin(&t, 4);
    element(&t, "schema", GROUP, NONE, 1, NONE);
    element(&t, "m", GROUP, OPT, 1, 1);
    element(&t, "kv", GROUP, REP, 1, NONE);
    element(&t, "key", S3L_PQ_INT32, REQ, 0, NONE);
    file_end(&t, 0);
    f = decode(&t, 0, NULL);
    s3l_error_clear(&err);
    assert_int_equal(s3l_pq_footer_schema(f, &s, &err), S3L_ECORRUPT);
    s3l_pq_footer_free(f);
    /* A group claiming more children than elements follow. */
    file_begin(&t, 2);
    element(&t, "schema", GROUP, NONE, 1, NONE);
    element(&t, "g", GROUP, OPT, 4, NONE);
    file_end(&t, 0);
    decode(&t, S3L_ECORRUPT, "element 1 (g) claims 4 children but 0 elements follow");
    /* A root without children. */
    file_begin(&t, 1);
    element(&t, "schema", GROUP, NONE, 0, NONE);
    file_end(&t, 0);
    f = decode(&t, 0, NULL); /* an empty schema with no row groups is valid */
    assert_int_equal(f->n_leaves, 0);
    s3l_pq_footer_free(f);
    /* A row group with one column chunk for two leaves. */
    file_begin(&t, 3);
    element(&t, "schema", GROUP, NONE, 2, NONE);
    element(&t, "a", S3L_PQ_INT32, OPT, 0, NONE);
    element(&t, "b", S3L_PQ_INT32, OPT, 0, NONE);
    file_end(&t, 1);
    decode(&t, S3L_ECORRUPT, "row group 0 has 1 column chunks for 2 leaf columns");
    /* No schema at all. */
    file_begin(&t, 0);
    file_end(&t, 0);
    decode(&t, S3L_ECORRUPT, "the schema is empty");
    /* A SchemaElement without its name: the offset is base (100) + position. */
    memset(&t, 0, sizeof(t));
    open_struct(&t);
    i32f(&t, 1, 1);
    listf(&t, 2, 12, 1);
    open_struct(&t);
    i32f(&t, 5, 0);
    close_struct(&t);
    decode(&t, S3L_ECORRUPT,
           "corrupt thrift at offset 107: SchemaElement without its required name");
    /* Nesting deeper than 256 groups. */
    file_begin(&t, 300);
    element(&t, "schema", GROUP, NONE, 1, NONE);
    for (int i = 0; i < 298; i++)
        element(&t, "g", GROUP, OPT, 1, NONE);
    element(&t, "leaf", S3L_PQ_INT32, OPT, 0, NONE);
    file_end(&t, 0);
    decode(&t, S3L_EUNSUPPORTED, "schema nested deeper than 256 levels");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(legacy_lists),
        cmocka_unit_test(legacy_map_and_converted_types),
        cmocka_unit_test(logical_types_new_and_unknown),
        cmocka_unit_test(broken_groups_and_trees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
