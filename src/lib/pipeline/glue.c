/*
 * The runner's sources and destination over the public input readers and table destination.
 * Until those modules land, a run stops here with S3L_EUNSUPPORTED, before touching anything.
 */
#include "runner.h"

int s3l__glue_run(const struct s3l_pipeline_options *opts, const char *url, const char *id,
                  struct s3l_input_position *pos, const int *fds, size_t n,
                  struct s3l_pipeline_stats *stats, enum s3l_pipeline_side *side,
                  struct s3l_error *err)
{
    *side = S3L_SIDE_DESTINATION;
    return s3l_error_set(err, S3L_EUNSUPPORTED, "pipeline %s to %s: the table destination is "
                         "not built in yet", id, url);
}
