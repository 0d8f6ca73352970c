/*
 * Unit tests of the os wrappers that took over the last direct OS calls of the reader, the
 * pipeline id and the S3 transport (issue 9 item 5): s3l__os_seek (a file seeks, a pipe says 1 so
 * the caller reads and drops, a bad descriptor names lseek), s3l__os_getcwd and s3l__os_realpath
 * (compared with the C library's own answers, a symbolic link resolved, a missing path
 * NOT_FOUND naming realpath), and the monotonic clock s3l__os_mono_ns (never goes back, and
 * counts a sleep).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "os/os.h"
#include "s3l/alloc.h"

static void seek_file_pipe_and_bad_fd(void **state)
{
    (void)state;
    char path[] = "/tmp/s3l-seek-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(write(fd, "0123456789", 10), 10);
    struct s3l_error err = {0};
    assert_int_equal(s3l__os_seek(fd, 7, "f.ndjson", &err), 0);
    char c[4] = {0};
    assert_int_equal(read(fd, c, 3), 3);
    assert_string_equal(c, "789");
    close(fd);

    int p[2];
    assert_int_equal(pipe(p), 0);
    err = (struct s3l_error){0};
    assert_int_equal(s3l__os_seek(p[0], 3, "pipe", &err), 1); /* cannot seek: read and drop */
    assert_int_equal(err.code, 0);                            /* not an error */
    close(p[0]);
    close(p[1]);

    err = (struct s3l_error){0};
    int rc = s3l__os_seek(p[0], 3, "gone.ndjson", &err); /* closed: EBADF */
    assert_true(rc < 0);
    assert_int_equal(rc, err.code);
    assert_non_null(strstr(err.message, "lseek gone.ndjson to byte offset 3"));
}

static void getcwd_and_realpath(void **state)
{
    (void)state;
    char expect[PATH_MAX];
    assert_non_null(getcwd(expect, sizeof(expect)));
    struct s3l_error err = {0};
    char *cwd = NULL;
    assert_int_equal(s3l__os_getcwd(&cwd, &err), 0);
    assert_string_equal(cwd, expect);
    s3l_free(cwd);

    char dir[] = "/tmp/s3l-real-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char target[128], link_path[128], sub[128], dotted[160];
    snprintf(target, sizeof(target), "%s/target", dir);
    snprintf(link_path, sizeof(link_path), "%s/link", dir);
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    snprintf(dotted, sizeof(dotted), "%s/./sub/../link", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(symlink("target", link_path), 0);
    char *libc = realpath(target, NULL); /* the independent answer (/tmp may itself be a link) */
    assert_non_null(libc);
    char *real = NULL;
    assert_int_equal(s3l__os_realpath(link_path, &real, &err), 0);
    assert_string_equal(real, libc);
    s3l_free(real);
    assert_int_equal(s3l__os_realpath(dotted, &real, &err), 0);
    assert_string_equal(real, libc);
    s3l_free(real);
    free(libc);

    char missing[160];
    snprintf(missing, sizeof(missing), "%s/missing/x", dir);
    err = (struct s3l_error){0};
    real = (char *)"unchanged";
    assert_int_equal(s3l__os_realpath(missing, &real, &err), S3L_ENOT_FOUND);
    assert_null(real);
    assert_non_null(strstr(err.message, "realpath "));
    assert_non_null(strstr(err.message, missing));

    unlink(link_path);
    unlink(target);
    rmdir(sub);
    rmdir(dir);
}

static void monotonic_clock(void **state)
{
    (void)state;
    int64_t a = s3l__os_mono_ns();
    for (int i = 0; i < 1000; i++) {
        int64_t b = s3l__os_mono_ns();
        assert_true(b >= a);
        a = b;
    }
    s3l__os_sleep_ms(20);
    assert_true(s3l__os_mono_ns() - a >= 20 * 1000000LL); /* a sleep is at least its length */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seek_file_pipe_and_bad_fd),
        cmocka_unit_test(getcwd_and_realpath),
        cmocka_unit_test(monotonic_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
