/*
 * The error table's names and strings, and the helpers that fill a struct s3l_error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "s3l/error.h"
#include "util/util.h"

struct error_entry {
    int code;
    bool retryable;
    const char *name;
    const char *text;
};

static const struct error_entry entries[] = {
#define ENTRY_(name, value, retry, text) {value, retry, #name, text},
    S3L_ERROR_TABLE(ENTRY_)
#undef ENTRY_
};

static const struct error_entry *find(int code)
{
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
        if (entries[i].code == code)
            return &entries[i];
    return NULL;
}

const char *s3l_error_name(int code)
{
    const struct error_entry *e = find(code);
    return e ? e->name : "UNKNOWN";
}

const char *s3l_strerror(int code)
{
    const struct error_entry *e = find(code);
    return e ? e->text : "unknown error";
}

bool s3l_error_retryable(int code)
{
    const struct error_entry *e = find(code);
    return e ? e->retryable : false;
}

void s3l_error_clear(struct s3l_error *err)
{
    if (err)
        memset(err, 0, sizeof(*err));
}

static int vset(struct s3l_error *err, int code, int sys_errno, const char *fmt, va_list ap)
{
    if (!err || err->code != 0)
        return code;
    err->code = code;
    err->sys_errno = sys_errno;
    err->retryable = s3l_error_retryable(code);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    if (sys_errno) {
        size_t len = strlen(err->message);
        char tmp[128];
        /* strerror_r (XSI) is thread-safe; strerror is not. */
        if (strerror_r(sys_errno, tmp, sizeof(tmp)) != 0)
            snprintf(tmp, sizeof(tmp), "errno %d", sys_errno);
        snprintf(err->message + len, sizeof(err->message) - len, ": %s", tmp);
    }
    return code;
}

int s3l_error_set(struct s3l_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, 0, fmt, ap);
    va_end(ap);
    return code;
}

int s3l_error_set_errno(struct s3l_error *err, int code, int sys_errno, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, sys_errno, fmt, ap);
    va_end(ap);
    return code;
}

int s3l_error_prefix(struct s3l_error *err, const char *fmt, ...)
{
    if (!err)
        return 0;
    char prefix[256];
    char old[S3L_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof(old));
    /* Truncation is intended: the message is capped at S3L_ERROR_MESSAGE_MAX. */
    size_t plen = strlen(prefix);
    if (plen > sizeof(err->message) - 3)
        plen = sizeof(err->message) - 3;
    memcpy(err->message, prefix, plen);
    memcpy(err->message + plen, ": ", 2);
    size_t room = sizeof(err->message) - plen - 3;
    size_t olen = strnlen(old, sizeof(old) - 1);
    if (olen > room)
        olen = room;
    memcpy(err->message + plen + 2, old, olen);
    err->message[plen + 2 + olen] = 0;
    return err->code;
}

int s3l__oom(struct s3l_error *err, int rc, const char *what)
{
    if (rc == S3L_ENOMEM && err && !err->message[0])
        s3l_error_set(err, rc, "out of memory %s", what);
    return rc;
}
