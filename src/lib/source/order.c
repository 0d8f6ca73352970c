/*
 * The order in which the object source reads objects, and which keys it reads at all.
 *
 * Why not bytewise: the rolling text sink numbers its parts without padding (part-0, part-1,
 * ..., part-10), and bytewise part-10 sorts before part-2, so lines would come out of the order
 * they were written in. Runs of digits therefore compare as numbers. The two-phase sink's names,
 * sub<N>-<run>-<ckpt>.ndjson, put 13 digits of milliseconds and 8 random hex digits side by
 * side in <run>: read as one digit run, a run whose hex digits begin with digits would count as
 * a far larger number than one whose hex begins with a letter, and a later run could sort
 * first. Such a name is recognised and its milliseconds end the digit run, so a subtask's
 * objects come in run (start time) order, then checkpoint order (<ckpt> is 20 digits).
 */
#include <string.h>

#include "source/source.h"

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f');
}

/* n digits at s[i..), 0 when not all are digits (s is NUL-terminated, so no overrun). */
static bool digits(const char *s, size_t i, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!is_digit(s[i + k]))
            return false;
    return true;
}

bool s3l__twopc_name_parse(const char *key, struct s3l__twopc_name *out)
{
    const char *slash = strrchr(key, '/');
    size_t i = slash ? (size_t)(slash - key) + 1 : 0;
    struct s3l__twopc_name n = {0};
    if (strncmp(key + i, "sub", 3) != 0)
        return false;
    i += 3;
    n.sub = i;
    while (is_digit(key[i]) && n.sub_len < 10) {
        i++;
        n.sub_len++;
    }
    if (n.sub_len == 0 || key[i] != '-' || !digits(key, i + 1, 13))
        return false;
    n.run_ms = i + 1;
    n.run_hex = n.run_ms + 13;
    for (size_t k = 0; k < 8; k++)
        if (!is_hex(key[n.run_hex + k]))
            return false;
    i = n.run_hex + 8;
    if (key[i] != '-' || !digits(key, i + 1, 20))
        return false;
    n.ckpt = i + 1;
    const char *rest = key + n.ckpt + 20;
    if (strcmp(rest, ".ndjson") != 0 && strcmp(rest, ".ndjson.gz") != 0 &&
        strcmp(rest, ".ndjson.zst") != 0 && strcmp(rest, ".ndjson.zstd") != 0)
        return false;
    if (out)
        *out = n;
    return true;
}

/* A key read token by token: a digit run (a number) or one other byte. split: a digit run never
 * goes on across this offset (the end of a two-phase name's milliseconds), or SIZE_MAX. */
struct cursor {
    const char *s;
    size_t i;
    size_t split;
};

static void init(struct cursor *c, const char *key)
{
    struct s3l__twopc_name n;
    c->s = key;
    c->i = 0;
    c->split = s3l__twopc_name_parse(key, &n) ? n.run_hex : (size_t)-1;
}

/* The digit run at c->i: [*start, *end), advancing c. */
static void number(struct cursor *c, size_t *start, size_t *end)
{
    *start = c->i;
    while (is_digit(c->s[c->i]) && !(c->i == c->split && c->i > *start))
        c->i++;
    *end = c->i;
}

/* Two digit runs as numbers: leading zeros skipped, then the longer is larger, then bytewise. */
static int cmp_numbers(const char *a, size_t as, size_t ae, const char *b, size_t bs, size_t be)
{
    while (as < ae && a[as] == '0')
        as++;
    while (bs < be && b[bs] == '0')
        bs++;
    if (ae - as != be - bs)
        return ae - as < be - bs ? -1 : 1;
    int d = memcmp(a + as, b + bs, ae - as);
    return d < 0 ? -1 : d > 0;
}

int s3l_object_key_compare(const char *a, const char *b)
{
    struct cursor x, y;
    init(&x, a);
    init(&y, b);
    for (;;) {
        unsigned char ca = (unsigned char)a[x.i], cb = (unsigned char)b[y.i];
        if (!ca || !cb) {
            if (ca || cb)
                return ca ? 1 : -1; /* a key that is a prefix of the other comes first */
            break;
        }
        bool da = is_digit((char)ca), db = is_digit((char)cb);
        if (da && db) {
            size_t as, ae, bs, be;
            number(&x, &as, &ae);
            number(&y, &bs, &be);
            int d = cmp_numbers(a, as, ae, b, bs, be);
            if (d)
                return d;
            continue;
        }
        /* A digit run sorts where the byte '0' would (no other byte is a digit). */
        unsigned char ka = da ? '0' : ca, kb = db ? '0' : cb;
        if (ka != kb)
            return ka < kb ? -1 : 1;
        x.i++;
        y.i++;
    }
    int d = strcmp(a, b); /* equal as numbers (leading zeros): bytewise, for a total order */
    return d < 0 ? -1 : d > 0;
}

bool s3l_object_key_readable(const char *key)
{
    size_t n = strlen(key);
    if (n == 0 || key[n - 1] == '/')
        return false;
    for (const char *p = key; p; p = strchr(p, '/')) {
        if (*p == '/')
            p++;
        if (strncmp(p, "_openetl", 8) == 0 && (p[8] == '/' || p[8] == 0))
            return false;
    }
    return true;
}
