/*
 * Schema growth from a record: the keys a record has and the schema lacks, at any depth. A key
 * first seen after the inference sample is growth of the schema, whether it is a new top-level
 * column or a new field of a struct (also of the structs inside lists and map values): the
 * caller grows the schema, later files carry the field, and s3l_schema_merge takes a struct that
 * gains nullable fields as an addition. The walk follows the schema, not the record: it only
 * descends where the schema has a struct, list or map, so its depth is bounded by the schema's.
 */
#include <string.h>

#include "input/input.h"
#include "schema/schema_int.h"

static int grow_value(struct s3l_type *t, const struct s3l_value *values, size_t i,
                      const struct s3l_infer_options *opt, int depth, bool apply, size_t *added)
{
    const struct s3l_value *v = &values[i];
    if (t->id == S3L_TYPE_STRUCT && v->kind == S3L_VALUE_OBJECT)
        return s3l__grow_fields(&t->children, &t->n_children, values, i, opt, depth + 1, apply,
                                added);
    if ((t->id == S3L_TYPE_LIST && v->kind == S3L_VALUE_ARRAY) ||
        (t->id == S3L_TYPE_MAP && v->kind == S3L_VALUE_OBJECT)) {
        bool map = t->id == S3L_TYPE_MAP;
        struct s3l_type *item = &t->children[map ? 1 : 0].type;
        if (item->id != S3L_TYPE_STRUCT && item->id != S3L_TYPE_LIST && item->id != S3L_TYPE_MAP)
            return 0;
        size_t j = i + 1;
        for (uint32_t e = 0; e < v->len; e++) {
            j += map; /* a map member's key */
            int rc = grow_value(item, values, j, opt, depth + 1, apply, added);
            if (rc)
                return rc;
            j = values[j].end;
        }
    }
    return 0;
}

static int find(const struct s3l_field *fields, size_t n, size_t hint, const char *name, size_t len)
{
    if (hint < n && strlen(fields[hint].name) == len && memcmp(fields[hint].name, name, len) == 0)
        return (int)hint;
    for (size_t k = 0; k < n; k++)
        if (strlen(fields[k].name) == len && memcmp(fields[k].name, name, len) == 0)
            return (int)k;
    return -1;
}

static int add(struct s3l_field **fields, size_t *n, const struct s3l_value *key,
               struct s3l_type *type)
{
    struct s3l_field *f = s3l_realloc(*fields, (*n + 1) * sizeof(*f));
    if (!f)
        return S3L_ENOMEM;
    *fields = f;
    f += *n;
    memset(f, 0, sizeof(*f));
    if (!(f->name = s3l_strndup(key->str, key->len)))
        return S3L_ENOMEM;
    f->type = *type;
    memset(type, 0, sizeof(*type));
    f->nullable = true;
    (*n)++;
    return 0;
}

int s3l__grow_fields(struct s3l_field **fields, size_t *n, const struct s3l_value *values, size_t i,
                     const struct s3l_infer_options *opt, int depth, bool apply, size_t *added)
{
    size_t j = i + 1;
    for (uint32_t m = 0; m < values[i].len; m++, j = values[j + 1].end) {
        const struct s3l_value *key = &values[j], *val = &values[j + 1];
        int k = find(*fields, *n, m, key->str, key->len);
        if (k >= 0) {
            int rc = grow_value(&(*fields)[k].type, values, j + 1, opt, depth, apply, added);
            if (rc)
                return rc;
            continue;
        }
        if (val->kind == S3L_VALUE_NULL || key->len == 0 || memchr(key->str, 0, key->len))
            continue;
        struct s3l_type t = {0};
        if (s3l__infer_value_at(values, j + 1, opt, depth, &t) != 0)
            return S3L_ENOMEM;
        int rc = 0;
        if ((int)t.id != S3L__TYPE_NONE) {
            if (!apply) {
                s3l__type_cleanup(&t);
                return 1;
            }
            rc = add(fields, n, key, &t);
            *added += rc == 0;
        }
        s3l__type_cleanup(&t);
        if (rc)
            return rc;
    }
    return 0;
}

int s3l_infer_grow(const struct s3l_schema *schema, const struct s3l_record *rec,
                   const struct s3l_infer_options *opt, struct s3l_schema **out,
                   struct s3l_error *err)
{
    *out = NULL;
    const struct s3l_value *v = rec->values;
    if (!rec->n_values || !v || v[0].kind != S3L_VALUE_OBJECT)
        return 0;
    /* The check walk changes nothing: the casts only share the code with the growing walk. */
    struct s3l_field *fields = schema->fields;
    size_t n = schema->n_fields, added = 0;
    int rc = s3l__grow_fields(&fields, &n, v, 0, opt, 0, false, &added);
    if (rc == 0)
        return 0;
    struct s3l_schema *s = rc == 1 ? s3l_schema_copy(schema) : NULL;
    if (s)
        rc = s3l__grow_fields(&s->fields, &s->n_fields, v, 0, opt, 0, true, &added);
    if (!s || rc) {
        s3l_schema_free(s);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory growing the schema");
    }
    *out = s;
    return 0;
}
