/*
 * A test source kind declared at_least_once (issue 12, item 5): a source that may send rows
 * again after a restart, as the Postgres incremental source to come will. Its rows are read from
 * files like any source's; only its capability record differs, so the delivery gate's
 * at_least_once path is tested now (tests/unit/test_pipeline_delivery.c). A record it sends
 * names its source position in the member "pos" (as the Postgres source's rows will carry
 * their cursor): a record sent again, anywhere in the input, has the same "pos", so its rows
 * get the same _openetl_id.
 */
#include "least_once_source.h"

/* A record's source position is its "pos" member, the same when the source sends it again. */
static const char *const position[] = {S3L_TEST_LEAST_ONCE_POSITION, NULL};

static const struct s3l_source_kind kind = {
    S3L_TEST_LEAST_ONCE_KIND, S3L_DELIVERY_AT_LEAST_ONCE,
    "a source that may send rows again after a restart (a test double; readers drop repeats by "
    "_openetl_id)", position};

int s3l_test_least_once_register(void)
{
    int rc = s3l_source_kind_register(&kind);
    return rc == S3L_EEXISTS ? 0 : rc;
}
