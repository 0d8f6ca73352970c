/*
 * bucket_probe: opens an s3:// store and asks whether its bucket can be reached, and in which
 * region (s3l_s3_store_bucket_probe: HeadBucket, a 403 settled by x-amz-bucket-region or by a
 * ListObjectsV2 of PREFIX/), for tests/integration/test_cli_rgw_policy.sh: under the minimal
 * policy HeadBucket is refused and the list under the prefix is not. Credentials, region and
 * endpoint come from the environment, read as the CLI reads it (tests/support/s3_env.h). Usage:
 *   bucket_probe s3://BUCKET[/PREFIX]
 * Prints "reachable region=REGION" and exits 0, or "error=CODE_NAME message=MESSAGE" and
 * exits 1 (2 for usage).
 */
#include <stdio.h>
#include <string.h>

#include "s3_env.h"
#include "s3l/s3.h"
#include "s3l/store.h"

int main(int argc, char **argv)
{
    if (argc != 2 || strncmp(argv[1], "s3://", 5) != 0) {
        fprintf(stderr, "usage: bucket_probe s3://BUCKET[/PREFIX]\n");
        return 2;
    }
    struct s3l_error err = {0};
    struct s3l_store *st = NULL;
    char region[64] = "";
    struct s3l_test_s3_store env; /* the environment, read as the CLI reads it */
    if (s3l_test_s3_store_env(&env) != 0) {
        perror("S3LAND_TRACE");
        return 1;
    }
    int rc = s3l_store_open(argv[1], &env.so, &st, &err);
    if (rc == 0)
        rc = s3l_s3_store_bucket_probe(st, region, &err);
    s3l_store_free(st);
    if (rc != 0) {
        printf("error=%s message=%s\n", s3l_error_name(rc), err.message);
        return 1;
    }
    printf("reachable region=%s\n", region);
    return 0;
}
