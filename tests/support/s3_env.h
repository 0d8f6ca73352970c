/*
 * What the s3land CLI reads from the environment for an S3 client (src/cli/s3_env.c; the library
 * reads none), for the C tests and tools that stand where the CLI does: the region (AWS_REGION,
 * then AWS_DEFAULT_REGION), the endpoint (AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL) and the
 * trace (S3LAND_TRACE, appended to).
 */
#ifndef S3L_TEST_S3_ENV_H
#define S3L_TEST_S3_ENV_H

#include "s3l/s3.h"
#include "s3l/store.h"

/* Fills cfg's region, endpoint and trace (each only when NULL) from the environment; the trace
 * file is opened once per process and left open. Returns 0, or -1 when $S3LAND_TRACE cannot be
 * opened (errno set). */
int s3l_test_s3_env(struct s3l_s3_config *cfg);

/* A store's options carrying s3l_test_s3_env's client config, for s3l_store_open. */
struct s3l_test_s3_store {
    struct s3l_s3_config cfg;
    struct s3l_s3_store_options s3;
    struct s3l_store_options so;
};
/* Fills t (zeroed here) so that &t->so opens an s3:// store as the CLI would. 0 or -1 as
 * above. */
int s3l_test_s3_store_env(struct s3l_test_s3_store *t);

#endif
