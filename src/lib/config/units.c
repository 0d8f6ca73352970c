/*
 * Sizes and durations as the command line writes them ("256MiB", "1m"). The CLI's options and the
 * config documents both parse through these two functions, so a value means the same thing in
 * either place; the schemas' patterns (schemas/KIND.schema.json, $defs size and duration) accept a
 * subset of what these accept that never overflows 64 bits.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#include "s3l/config.h"

bool s3l_parse_size(const char *s, uint64_t *out)
{
    return s3l_parse_size_ex(s, out) == 0;
}

int s3l_parse_size_ex(const char *s, uint64_t *out)
{
    /* IEC 80000-13 binary prefixes (K, KiB ...) and SI decimal ones (KB ...), as docs/cli.md. */
    static const struct {
        const char *suffix;
        uint64_t mult;
    } units[] = {
        {"", 1},
        {"b", 1},
        {"k", 1ULL << 10},
        {"kib", 1ULL << 10},
        {"kb", 1000ULL},
        {"m", 1ULL << 20},
        {"mib", 1ULL << 20},
        {"mb", 1000000ULL},
        {"g", 1ULL << 30},
        {"gib", 1ULL << 30},
        {"gb", 1000000000ULL},
        {"t", 1ULL << 40},
        {"tib", 1ULL << 40},
        {"tb", 1000000000000ULL},
    };
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    bool overflow = errno == ERANGE;
    while (*end == ' ')
        end++;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(end, units[i].suffix) == 0) {
            uint64_t r;
            if (overflow || __builtin_mul_overflow((uint64_t)v, units[i].mult, &r))
                return 1;
            *out = r;
            return 0;
        }
    }
    return -1;
}

bool s3l_parse_duration(const char *s, int64_t *out_ns)
{
    static const struct {
        const char *suffix;
        int64_t mult;
    } units[] = {
        {"", 1000000000LL},   {"s", 1000000000LL},    {"ms", 1000000LL},
        {"m", 60000000000LL}, {"min", 60000000000LL}, {"h", 3600000000000LL},
    };
    if (!s || !isdigit((unsigned char)*s))
        return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || v < 0)
        return false;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(end, units[i].suffix) == 0) {
            int64_t r;
            if (__builtin_mul_overflow((int64_t)v, units[i].mult, &r))
                return false;
            *out_ns = r;
            return true;
        }
    }
    return false;
}
