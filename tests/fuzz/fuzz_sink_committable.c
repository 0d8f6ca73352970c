/*
 * Fuzz target for the committable decoder (src/lib/sink/codec.c): the bytes an engine hands back
 * from its checkpoint, which may be truncated, altered or another program's. The decoder must
 * never crash, leak or read out of bounds; whatever it accepts must encode back to the same
 * bytes (the layout has one encoding per committable), and whatever it refuses must leave the
 * struct empty. Built with libFuzzer under clang (S3L_FUZZ), otherwise replayed over
 * tests/fuzz/corpus/sink_committable/ by CTest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "s3l/ndjson_sink.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct s3l_error err = {0};
    struct s3l_committable c;
    if (s3l_committable_decode(data, size, &c, &err) != 0) {
        if (c.key || c.parts || c.n_parts || err.code != S3L_ECORRUPT || !err.message[0])
            abort();
        return 0;
    }
    uint8_t *again = NULL;
    size_t n = 0;
    s3l_error_clear(&err);
    if (s3l_committable_encode(&c, &again, &n, &err) != 0)
        abort(); /* decoded means valid, and valid means encodable */
    if (n != size || memcmp(again, data, size) != 0)
        abort();
    s3l_free(again);
    s3l_committable_cleanup(&c);
    return 0;
}
