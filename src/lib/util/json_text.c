/*
 * JSON text of a jansson value that is whole or absent. jansson 2.14's json_dumps ignores a
 * failed write of an object's key (dump.c: dump_string's result is not checked for keys), so
 * when growing its buffer fails it returns text with the key missing, `{":"id"...`, as if it
 * had succeeded; an allocation failure then left a corrupt schema record on storage
 * (unit.commit_alloc at k=47). Here the bytes go to our own buffer through json_dump_callback,
 * and a failed append fails the whole text, whatever jansson returns.
 */
#include <jansson.h>

#include "util/util.h"

struct dump {
    struct s3l_buf b;
    bool failed;
};

static int append(const char *p, size_t n, void *ctx)
{
    struct dump *d = ctx;
    if (!d->failed && s3l_buf_append(&d->b, p, n) != 0)
        d->failed = true;
    return d->failed ? -1 : 0;
}

struct json_t *s3l__json_loadb(const char *text, size_t len, size_t flags,
                               struct json_error_t *je, bool *nomem)
{
    unsigned long before = s3l__json_alloc_failures();
    json_t *v = json_loadb(text, len, flags, je);
    *nomem = s3l__json_alloc_failures() != before;
    if (*nomem) {
        json_decref(v);
        return NULL;
    }
    return v;
}

char *s3l__json_dumps(const struct json_t *json, size_t flags)
{
    struct dump d = {.failed = false};
    s3l_buf_init(&d.b, SIZE_MAX / 2);
    uint8_t *out = NULL;
    size_t len = 0;
    unsigned long before = s3l__json_alloc_failures();
    if (!json || json_dump_callback(json, append, &d, flags) != 0 || d.failed ||
        s3l__json_alloc_failures() != before ||
        s3l_buf_detach(&d.b, &out, &len) != 0) {
        s3l_buf_free(&d.b);
        return NULL;
    }
    return (char *)out;
}
