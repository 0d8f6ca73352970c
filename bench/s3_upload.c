/*
 * The s3land side of bench/s3_upload.sh: uploads each file given on the command line to
 * s3://BUCKET/PREFIX/<file name> through the streaming upload API (parts of S3L_BENCH_PART_MB
 * MiB, S3L_BENCH_IN_FLIGHT parts at once, S3L_BENCH_INTEGRITY md5 or crc32c), reading each
 * file in 1 MiB pieces, so that memory is bounded by part size times (parts in flight + 1).
 * Endpoint, region and keys come from the environment, as for the AWS CLI. Prints the bytes sent and the client's request counters.
 *   s3_upload BUCKET PREFIX FILE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3l/s3.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: s3_upload BUCKET PREFIX FILE...\n");
        return 2;
    }
    const char *mb = getenv("S3L_BENCH_PART_MB"), *fl = getenv("S3L_BENCH_IN_FLIGHT");
    const char *integ = getenv("S3L_BENCH_INTEGRITY"); /* md5 (default) or crc32c */
    struct s3l_s3_config cfg = {.version = S3L_S3_CONFIG_VERSION,
                                .max_in_flight = fl ? atoi(fl) : 4};
    if (integ && strcmp(integ, "crc32c") == 0)
        cfg.integrity = S3L_S3_INTEGRITY_CRC32C;
    size_t part = (size_t)(mb ? atoi(mb) : 8) << 20;
    struct s3l_s3_client *c = NULL;
    struct s3l_error err = {0};
    if (s3l_s3_client_new(&cfg, &c, &err) != 0) {
        fprintf(stderr, "s3_upload: %s\n", err.message);
        return 1;
    }
    static char buf[1 << 20];
    unsigned long long total = 0;
    int rc = 0;
    for (int i = 3; i < argc && rc == 0; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            rc = 1;
            break;
        }
        const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        char key[1024];
        snprintf(key, sizeof(key), "%s/%s", argv[2], base);
        struct s3l_s3_upload *u = NULL;
        rc = s3l_s3_upload_begin(c, argv[1], key, NULL, part, &u, &err);
        size_t n;
        while (rc == 0 && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
            rc = s3l_s3_upload_write(u, buf, n, &err);
            total += n;
        }
        fclose(f);
        if (rc == 0)
            rc = s3l_s3_upload_publish(u, NULL, &err);
        else
            s3l_s3_upload_abort(u);
    }
    uint64_t req = 0, retries = 0, slow = 0;
    s3l_s3_client_counters(c, &req, &retries, &slow);
    s3l_s3_client_free(c);
    if (rc != 0) {
        fprintf(stderr, "s3_upload: %s\n", err.message);
        return 1;
    }
    printf("bytes=%llu requests=%llu retries=%llu slowdowns=%llu\n", total,
           (unsigned long long)req, (unsigned long long)retries, (unsigned long long)slow);
    return 0;
}
