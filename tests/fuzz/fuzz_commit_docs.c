/*
 * Fuzz target for the destination's stored documents, which come back from the store and may be
 * damaged: the checkpoint parser (s3l__ckpt_decode) and the marker parser (s3l__marker_decode).
 * Properties: no crash, no leak, no read out of bounds; a checkpoint that parses re-encodes to a
 * document that parses to the same fields (round trip); every pending key passes the store's key
 * rules (so a damaged checkpoint can never make recovery write outside the root).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "commit/commit.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_marker(void *ctx, const struct s3l_dest_marker *m)
{
    size_t *n = ctx;
    for (size_t i = 0; i < m->n_files; i++)
        *n += strlen(m->files[i].key) + strlen(m->files[i].sha256);
    return 0;
}

static void check_round_trip(const struct s3l__ckpt *a)
{
    char *text = NULL;
    size_t len = 0;
    if (s3l__ckpt_encode(a, &text, &len, NULL) != 0)
        return;
    struct s3l__ckpt b = {0};
    if (s3l__ckpt_decode(text, len, "fuzz", &b, NULL) != 0)
        abort(); /* what we write, we must read */
    if (a->generation != b.generation || a->committed_epoch != b.committed_epoch
        || a->has_pending != b.has_pending || a->n_files != b.n_files
        || strcmp(a->pipeline, b.pipeline) != 0 || (!a->state) != (!b.state)
        || (a->state && strcmp(a->state, b.state) != 0))
        abort();
    for (size_t i = 0; i < a->n_files; i++)
        if (strcmp(a->files[i].staged, b.files[i].staged) != 0
            || strcmp(a->files[i].final, b.files[i].final) != 0
            || a->files[i].size != b.files[i].size || a->files[i].rows != b.files[i].rows
            || a->files[i].deadletter != b.files[i].deadletter)
            abort();
    s3l__ckpt_cleanup(&b);
    s3l_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct s3l__ckpt c = {0};
    struct s3l_error err = {0};
    if (s3l__ckpt_decode((const char *)data, size, "fuzz", &c, &err) == 0) {
        for (size_t i = 0; i < c.n_files; i++)
            if (!s3l_store_key_valid(c.files[i].staged) || !s3l_store_key_valid(c.files[i].final))
                abort();
        check_round_trip(&c);
    }
    s3l__ckpt_cleanup(&c);
    size_t n = 0;
    s3l_error_clear(&err);
    s3l__marker_decode((const char *)data, size, "fuzz", on_marker, &n, &err);
    return 0;
}
