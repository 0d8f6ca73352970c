/*
 * Fuzz target for the object source's name parser and order (src/lib/source/order.c): keys
 * come from a listing, so any bytes. The input is split at '\n' into up to three keys (NUL bytes
 * end a key early). Checked: no crash or out-of-bounds read; the order is reflexive only for
 * equal keys, antisymmetric and transitive over the three (qsort needs a total order); a parsed
 * two-phase name's fields are where the parser says (digits, hex digits, dashes); readable is
 * false for any key with an _openetl segment. Built with libFuzzer under clang (S3L_FUZZ),
 * otherwise replayed over tests/fuzz/corpus/object_name/ by CTest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sign(int v)
{
    return (v > 0) - (v < 0);
}

static void check_name(const char *k)
{
    struct s3l__twopc_name n;
    if (!s3l__twopc_name_parse(k, &n))
        return;
    size_t len = strlen(k);
    if (n.sub_len < 1 || n.sub_len > 10 || n.run_ms != n.sub + n.sub_len + 1 ||
        n.run_hex != n.run_ms + 13 || n.ckpt != n.run_hex + 9 || n.ckpt + 20 + 7 > len)
        abort();
    for (size_t i = 0; i < 13; i++)
        if (k[n.run_ms + i] < '0' || k[n.run_ms + i] > '9')
            abort();
    for (size_t i = 0; i < 20; i++)
        if (k[n.ckpt + i] < '0' || k[n.ckpt + i] > '9')
            abort();
    if (k[n.run_ms - 1] != '-' || k[n.ckpt - 1] != '-' || strncmp(k + n.sub - 3, "sub", 3) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    const char *k[3] = {"", "", ""};
    char *p = buf;
    for (int i = 0; i < 3 && p; i++) {
        k[i] = p;
        p = strchr(p, '\n');
        if (p)
            *p++ = 0;
    }
    for (int i = 0; i < 3; i++) {
        check_name(k[i]);
        if (s3l_object_key_compare(k[i], k[i]) != 0)
            abort();
        if (s3l_object_key_readable(k[i]) &&
            (strncmp(k[i], "_openetl/", 9) == 0 || strstr(k[i], "/_openetl/") ||
             strcmp(k[i], "_openetl") == 0))
            abort();
        for (int j = 0; j < 3; j++) {
            int ij = s3l_object_key_compare(k[i], k[j]);
            if (sign(ij) != -sign(s3l_object_key_compare(k[j], k[i])))
                abort();
            if ((ij == 0) != (strcmp(k[i], k[j]) == 0))
                abort();
            for (int m = 0; m < 3; m++)
                if (ij < 0 && s3l_object_key_compare(k[j], k[m]) < 0 &&
                    s3l_object_key_compare(k[i], k[m]) >= 0)
                    abort();
        }
    }
    free(buf);
    return 0;
}
