/*
 * Inputs for reader tests: a descriptor reading given bytes, from an unlinked temporary file
 * (seekable) or from a pipe (not seekable: readers must read and drop to skip). Header-only
 * (static functions) for cmocka tests: include it after <cmocka.h>.
 */
#ifndef S3L_TEST_INPUT_FD_H
#define S3L_TEST_INPUT_FD_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A file holding text[0..len), opened for reading at offset 0 (unlinked at once). */
static inline int test_file_with(const char *text, size_t len)
{
    char path[] = "/tmp/s3l_test_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    return fd;
}

/* A pipe holding text (small enough for the pipe buffer), its write end closed. */
static inline int test_pipe_with(const char *text)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
    close(p[1]);
    return p[0];
}

#endif
