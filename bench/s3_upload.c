/*
 * The s3land side of bench/s3_upload.sh: uploads each file given on the command line to
 * s3://BUCKET/PREFIX/<file name> through the streaming upload API of include/s3l/s3.h: parts of
 * S3L_BENCH_PART_MB MiB, S3L_BENCH_IN_FLIGHT requests at once for the whole client, integrity
 * S3L_BENCH_INTEGRITY (md5, the default, or crc32c). S3L_BENCH_LANES threads (default 2) share
 * one client and take the files in turn, so that one file's Complete overlaps the next file's
 * parts, as the s3 store's lanes do; the client's cap on part buffers is in flight + lanes (each
 * lane filling one part), + lanes more with Content-MD5 (a full part waits for its partner in
 * the MD5 pair), so part memory stays there whatever the files' sizes. Each file is
 * read with read(2) straight into the part buffer (s3l_s3_upload_reserve / _commit): no copy of
 * our own. Endpoint, region and keys come from the environment, as for the AWS CLI. Prints the
 * bytes sent and the client's request counters.
 *   s3_upload BUCKET PREFIX FILE...
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "s3l/s3.h"

#define READ_PIECE (512u << 10) /* read and hashed while it sits in the cache */

struct job {
    struct s3l_s3_client *c;
    const char *bucket, *prefix;
    char **files;
    int n_files;
    size_t part;
    atomic_int next;
    atomic_ullong total;
    atomic_int failed;
    pthread_mutex_t err_lock;
    struct s3l_error err;
};

static int upload_file(struct job *j, const char *path, struct s3l_error *err)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return -1;
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char key[1024];
    snprintf(key, sizeof(key), "%s/%s", j->prefix, base);
    struct s3l_s3_upload *u = NULL;
    int rc = s3l_s3_upload_begin(j->c, j->bucket, key, NULL, j->part, &u, err);
    while (rc == 0) {
        void *buf;
        size_t room;
        if ((rc = s3l_s3_upload_reserve(u, &buf, &room, err)) != 0)
            break;
        ssize_t n = read(fd, buf, room < READ_PIECE ? room : READ_PIECE);
        if (n < 0) {
            perror(path);
            rc = -1;
        }
        if (n <= 0 || (rc = s3l_s3_upload_commit(u, (size_t)n, err)) != 0)
            break;
        j->total += (unsigned long long)n;
    }
    close(fd);
    if (rc == 0)
        return s3l_s3_upload_publish(u, NULL, err);
    s3l_s3_upload_abort(u);
    return rc;
}

static void *lane(void *arg)
{
    struct job *j = arg;
    for (int i; !j->failed && (i = j->next++) < j->n_files;) {
        struct s3l_error err = {0};
        if (upload_file(j, j->files[i], &err) != 0) {
            pthread_mutex_lock(&j->err_lock);
            if (!j->failed++)
                j->err = err;
            pthread_mutex_unlock(&j->err_lock);
        }
    }
    return NULL;
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && atoi(v) > 0 ? atoi(v) : dflt;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: s3_upload BUCKET PREFIX FILE...\n");
        return 2;
    }
    const char *integ = getenv("S3L_BENCH_INTEGRITY");
    int lanes = env_int("S3L_BENCH_LANES", 2);
    struct s3l_s3_config cfg = {.version = S3L_S3_CONFIG_VERSION,
                                .max_in_flight = env_int("S3L_BENCH_IN_FLIGHT", 4)};
    if (integ && strcmp(integ, "crc32c") == 0)
        cfg.integrity = S3L_S3_INTEGRITY_CRC32C;
    /* each lane fills one part (and holds a full one for its MD5 partner with Content-MD5) */
    int md5 = cfg.integrity == S3L_S3_INTEGRITY_MD5;
    cfg.max_part_buffers = cfg.max_in_flight + lanes * (1 + md5);
    struct job j = {.bucket = argv[1], .prefix = argv[2], .files = argv + 3, .n_files = argc - 3,
                    .part = (size_t)env_int("S3L_BENCH_PART_MB", 8) << 20};
    pthread_mutex_init(&j.err_lock, NULL);
    if (s3l_s3_client_new(&cfg, &j.c, &j.err) != 0) {
        fprintf(stderr, "s3_upload: %s\n", j.err.message);
        return 1;
    }
    pthread_t t[64];
    lanes = lanes < 64 ? lanes : 64;
    for (int i = 0; i < lanes; i++)
        pthread_create(&t[i], NULL, lane, &j);
    for (int i = 0; i < lanes; i++)
        pthread_join(t[i], NULL);
    uint64_t req = 0, retries = 0, slow = 0;
    s3l_s3_client_counters(j.c, &req, &retries, &slow);
    s3l_s3_client_free(j.c);
    if (j.failed) {
        fprintf(stderr, "s3_upload: %s\n", j.err.message);
        return 1;
    }
    printf("bytes=%llu requests=%llu retries=%llu slowdowns=%llu\n", (unsigned long long)j.total,
           (unsigned long long)req, (unsigned long long)retries, (unsigned long long)slow);
    return 0;
}
