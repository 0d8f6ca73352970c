/*
 * Records that outlive their reader's buffer: s3l_record_clone copies a record's tape and every
 * byte it points to into one allocation, so that a caller can keep a sample of records (to infer
 * a schema before converting them) without holding the reader's buffer.
 */
#include <string.h>

#include "input/input.h"

static bool add(size_t *total, size_t n)
{
    return !__builtin_add_overflow(*total, n, total);
}

int s3l_record_clone(const struct s3l_record *rec, struct s3l_record **out)
{
    size_t total = sizeof(struct s3l_record), tape;
    if (!s3l_mul_size(rec->n_values, sizeof(struct s3l_value), &tape) || !add(&total, tape))
        return S3L_ENOMEM;
    for (size_t i = 0; i < rec->n_values; i++) {
        uint16_t k = rec->values[i].kind;
        if ((k == S3L_VALUE_STRING || k == S3L_VALUE_NUMBER) && !add(&total, rec->values[i].len))
            return S3L_ENOMEM;
    }
    size_t src_len = rec->source ? strlen(rec->source) + 1 : 0;
    if (!add(&total, rec->raw ? rec->raw_len : 0) || !add(&total, src_len))
        return S3L_ENOMEM;
    struct s3l_record *c = s3l_malloc(total);
    if (!c)
        return S3L_ENOMEM;
    *c = *rec;
    struct s3l_value *values = (struct s3l_value *)(c + 1);
    char *bytes = (char *)(values + rec->n_values);
    if (rec->n_values)
        memcpy(values, rec->values, tape);
    for (size_t i = 0; i < rec->n_values; i++) {
        struct s3l_value *v = &values[i];
        if (v->kind != S3L_VALUE_STRING && v->kind != S3L_VALUE_NUMBER)
            continue;
        if (v->len)
            memcpy(bytes, v->str, v->len);
        v->str = bytes;
        bytes += v->len;
    }
    c->values = rec->n_values ? values : NULL;
    if (rec->raw) {
        if (rec->raw_len)
            memcpy(bytes, rec->raw, rec->raw_len);
        c->raw = bytes;
        bytes += rec->raw_len;
    }
    if (rec->source) {
        memcpy(bytes, rec->source, src_len);
        c->source = bytes;
    }
    *out = c;
    return 0;
}
