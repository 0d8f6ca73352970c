/*
 * Unit tests of a driver's state file (src/lib/sink/state.c, s3l_sink_state_save/load): bytes
 * saved are the bytes loaded; a save replaces the file whole and leaves no temp file beside it;
 * missing parent directories are made; a missing file is NOT_FOUND; a file over max is
 * TOO_LARGE; a directory that cannot be written is an error naming the path, the old file kept.
 */
#include <dirent.h>
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

#include "s3l/s3l.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/s3l-state-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "chmod -R u+w %s; rm -rf %s", dir, dir);
    return system(cmd) == 0 ? 0 : -1;
}

static size_t entries(const char *d)
{
    DIR *h = opendir(d);
    size_t n = 0;
    for (struct dirent *e; h && (e = readdir(h));)
        n += e->d_name[0] != '.';
    if (h)
        closedir(h);
    return n;
}

static void round_trip_and_replace(void **state)
{
    (void)state;
    char path[256], sub[128];
    snprintf(sub, sizeof(sub), "%s/a/b", dir);
    snprintf(path, sizeof(path), "%s/state.json", sub);
    struct s3l_error err = {0};
    uint8_t *data = NULL;
    size_t len = 99;
    assert_int_equal(s3l_sink_state_load(path, 1024, &data, &len, &err), S3L_ENOT_FOUND);
    assert_null(data);
    assert_int_equal(s3l_sink_state_save(path, "first\0x", 7, &err), 0); /* parents made */
    assert_int_equal(s3l_sink_state_load(path, 1024, &data, &len, &err), 0);
    assert_int_equal(len, 7);
    assert_memory_equal(data, "first\0x", 7);
    assert_int_equal(data[7], 0); /* a NUL after the bytes */
    s3l_free(data);
    assert_int_equal(s3l_sink_state_save(path, "second, longer", 14, &err), 0);
    assert_int_equal(s3l_sink_state_load(path, 1024, &data, &len, &err), 0);
    assert_int_equal(len, 14);
    assert_memory_equal(data, "second, longer", 14);
    s3l_free(data);
    assert_int_equal(entries(sub), 1); /* no temp file left */
    assert_int_equal(s3l_sink_state_load(path, 10, &data, &len, &err), S3L_ETOO_LARGE);
    assert_int_equal(s3l_sink_state_save(path, "", 0, &err), 0);
    assert_int_equal(s3l_sink_state_load(path, 10, &data, &len, &err), 0);
    assert_int_equal(len, 0);
    s3l_free(data);
    assert_int_equal(s3l_sink_state_save(NULL, "x", 1, &err), S3L_EINVALID_ARGUMENT);
    assert_int_equal(s3l_sink_state_save(path, NULL, 1, &err), S3L_EINVALID_ARGUMENT);
    /* The documented limit (4,000 bytes), refused before any directory is made from it. */
    char longp[4100];
    memset(longp, 'a', sizeof(longp) - 1);
    longp[0] = '/';
    longp[sizeof(longp) - 1] = 0;
    struct s3l_error e2 = {0};
    assert_int_equal(s3l_sink_state_save(longp, "x", 1, &e2), S3L_EINVALID_ARGUMENT);
    assert_non_null(strstr(e2.message, "path over 4000 bytes"));
}

static void unwritable_directory(void **state)
{
    (void)state;
    if (geteuid() == 0) {
        /* root writes anywhere: a path under a regular file cannot be made, by anyone. */
        char f[128], path[160];
        snprintf(f, sizeof(f), "%s/plain", dir);
        FILE *h = fopen(f, "w");
        assert_non_null(h);
        fclose(h);
        snprintf(path, sizeof(path), "%s/state.json", f);
        struct s3l_error err = {0};
        int rc = s3l_sink_state_save(path, "x", 1, &err);
        assert_true(rc < 0);
        assert_non_null(strstr(err.message, "plain"));
        return;
    }
    char ro[128], path[160];
    snprintf(ro, sizeof(ro), "%s/ro", dir);
    assert_int_equal(mkdir(ro, 0755), 0);
    snprintf(path, sizeof(path), "%s/state.json", ro);
    struct s3l_error err = {0};
    assert_int_equal(s3l_sink_state_save(path, "old", 3, &err), 0);
    assert_int_equal(chmod(ro, 0555), 0);
    assert_int_equal(s3l_sink_state_save(path, "new", 3, &err), S3L_EPERMISSION_DENIED);
    assert_non_null(strstr(err.message, ro));
    uint8_t *data = NULL;
    size_t len = 0;
    assert_int_equal(s3l_sink_state_load(path, 16, &data, &len, &err), 0);
    assert_memory_equal(data, "old", 3);
    s3l_free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(round_trip_and_replace, setup, teardown),
        cmocka_unit_test_setup_teardown(unwritable_directory, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
