/*
 * A byte source over a file descriptor for the Parquet footer reader's tests and tools: the
 * library's parquet/ reads only through an s3l_pq_read_fn (include/s3l/pq_footer.h), so the
 * pread(2) and fstat(2) of a local file are the caller's, here. Header-only (static functions).
 */
#ifndef S3L_TEST_PQ_FD_H
#define S3L_TEST_PQ_FD_H

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "s3l/pq_footer.h"

/* An s3l_pq_read_fn over a descriptor (ctx: a pointer to the int fd): exactly len bytes at off,
 * EINTR retried. S3L_EIO names pread and errno, or the end of the file (a file that shrank). */
static inline int s3l_test_pq_read_fd(void *ctx, uint64_t off, void *buf, size_t len,
                                      struct s3l_error *err)
{
    int fd = *(const int *)ctx;
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return s3l_error_set_errno(err, S3L_EIO, errno, "pread of %zu bytes at offset %llu",
                                       len, (unsigned long long)off);
        if (n == 0)
            return s3l_error_set(err, S3L_EIO,
                                 "pread at offset %llu: unexpected end of file (file shrank?)",
                                 (unsigned long long)off);
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return 0;
}

/* s3l_pq_footer_read of an open descriptor, its size from fstat(2). */
static inline int s3l_test_pq_footer_read_fd(int fd, const struct s3l_pq_footer_options *opts,
                                             struct s3l_pq_footer **out, struct s3l_error *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return s3l_error_set_errno(err, S3L_EIO, errno, "fstat of fd %d", fd);
    return s3l_pq_footer_read(s3l_test_pq_read_fd, &fd, (uint64_t)st.st_size, opts, out, err);
}

#endif
