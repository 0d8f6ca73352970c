/*
 * The sinks' capability records (issue 13, item 3): what each sink of the raw-object connector
 * delivers and what it needs, as the source kinds of src/lib/pipeline/delivery.c declare theirs.
 * `s3land connectors` prints both tables.
 */
#include "sink/sink.h"

static const struct s3l_sink_kind kinds[] = {
    {"s3_text_sink", S3L_SINK_AT_MOST_ONCE,
     "s3:ListBucket to restore (a restored run lists its parts to number new ones after them); "
     "the records buffered since the last part are lost when the process dies"},
    {"s3_2pc_string_sink", S3L_SINK_EXACTLY_ONCE,
     "the engine keeps each committable in its checkpoint and commits it again after a restore; "
     "the only sink of its pipeline (it stages its upload in the checkpoint it owns)"},
};

int s3l_sink_kinds(int (*cb)(void *ctx, const struct s3l_sink_kind *kind), void *ctx)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        int rc = cb(ctx, &kinds[i]);
        if (rc)
            return rc;
    }
    return 0;
}

const char *s3l_sink_delivery_name(enum s3l_sink_delivery d)
{
    return d == S3L_SINK_EXACTLY_ONCE ? "exactly_once" : "at_most_once";
}
