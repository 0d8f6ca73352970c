/*
 * Fuzz target: the Thrift compact decoder (src/lib/thrift/decode.h) over arbitrary bytes, both
 * generically (skip a whole struct, at two nesting limits) and through the typed walkers of the
 * page index (ColumnIndex, OffsetIndex) and of page headers. It must never read outside the input, recurse past its
 * depth limit, leak, or report success with the decoder in an error state.
 * Built with libFuzzer under clang (S3L_FUZZ), else replayed over corpus/thrift_decode by
 * replay_main.c. The corpus holds FileMetaData and page index bytes of the golden files of
 * tests/golden/duckdb, truncations and byte flips of them, hand-made edge cases, and the inputs
 * named min-* that a 5-minute coverage-guided libFuzzer run kept (-merge=1).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "s3l/pq_footer.h"
#include "thrift/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct s3l_tdec d;
    unsigned depths[] = {4, S3L_TDEC_MAX_DEPTH};
    for (size_t i = 0; i < 2; i++) {
        s3l__tdec_init(&d, data, size, depths[i]);
        int rc = s3l__tdec_skip_struct(&d);
        if (rc == 0 && (d.status != 0 || d.depth != 0 || d.pos > size))
            abort();
        if (rc != 0 && (rc != d.status || d.error_pos > size || !d.error_what))
            abort();
    }
    struct s3l_error err = {0};
    struct s3l_pq_column_index *ci = NULL;
    if (s3l_pq_column_index_decode(data, size, 0, NULL, &ci, &err) == 0) {
        for (size_t p = 0; p < ci->n_pages; p++) /* touch every entry: ASan checks the sizes */
            if (ci->null_pages[p] && ci->min_values[p].len > size)
                abort();
        s3l_pq_column_index_free(ci);
    }
    struct s3l_pq_offset_index *oi = NULL;
    if (s3l_pq_offset_index_decode(data, size, 0, NULL, &oi, &err) == 0) {
        for (size_t p = 0; p < oi->n_pages; p++)
            if (oi->pages[p].compressed_page_size == 0x7fffffff && oi->pages[p].offset == -1)
                err.code = 1; /* a read of every field, nothing more */
        s3l_pq_offset_index_free(oi);
    }
    struct s3l_pq_page_header h;
    if (s3l_pq_page_header_decode(data, size, 0, &h, &err) == 0 && h.header_len > size)
        abort();
    return 0;
}
