/*
 * Unit tests of os/watch.c, the wait of follow mode: in both modes (inotify, and the stat poll
 * that stands in when inotify is unavailable) a wait with nothing changed ends with 0 after its
 * timeout, and an append, a rename away (rotation), a new file at the path and a new file in the
 * directory each end a wait with 1. The poll mode is asked for through the API
 * (S3L__OS_WATCH_POLL), as production code never has a test-only switch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "os/os.h"

struct fixture {
    char dir[64];
    char path[128];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "/tmp/s3l-watch-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/app.log", f->dir);
    FILE *fp = fopen(f->path, "w");
    if (!fp)
        return -1;
    fputs("{\"a\":1}\n", fp);
    fclose(fp);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
}

static void append(const char *path, const char *text)
{
    FILE *fp = fopen(path, "a");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits up to about 3 s for the watch to report a change (in slices, as the runner does). */
static int woke(struct s3l__os_watch *w)
{
    int64_t t0 = mono_ms();
    while (mono_ms() - t0 < 3000)
        if (s3l__os_watch_wait(w, 100) == 1)
            return 1;
    return 0;
}

/* Nothing changes: waits end with 0, and no sooner than asked (allowing for a coarse clock). */
static void quiet(struct s3l__os_watch *w)
{
    for (int k = 0; k < 3; k++) {
        int64_t t0 = mono_ms();
        assert_int_equal(s3l__os_watch_wait(w, 200), 0);
        assert_true(mono_ms() - t0 >= 150);
    }
}

static void changes_end_waits(struct fixture *f, enum s3l__os_watch_mode mode)
{
    struct s3l__os_watch *w = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l__os_watch_new(mode, 50, &w, &err), 0);
    assert_int_equal(s3l__os_watch_add(w, f->path, &err), 0);
    assert_int_equal(s3l__os_watch_add(w, f->path, &err), 0); /* twice: watched once */
    if (mode == S3L__OS_WATCH_POLL)
        assert_true(s3l__os_watch_polling(w));
    quiet(w);

    append(f->path, "{\"a\":2}\n");
    assert_int_equal(woke(w), 1);
    quiet(w);

    char moved[160];
    snprintf(moved, sizeof(moved), "%s.1", f->path);
    assert_int_equal(rename(f->path, moved), 0);
    assert_int_equal(woke(w), 1);
    quiet(w);

    append(f->path, "{\"a\":3}\n"); /* a new file at the path */
    assert_int_equal(woke(w), 1);
    quiet(w);

    char other[160];
    snprintf(other, sizeof(other), "%s/other.log", f->dir);
    append(other, "x\n"); /* a new file a glob may match */
    assert_int_equal(woke(w), 1);
    s3l__os_watch_free(w);
    s3l__os_watch_free(NULL);
}

static void poll_mode_sees_appends_renames_and_new_files(void **state)
{
    changes_end_waits(*state, S3L__OS_WATCH_POLL);
}

static void inotify_mode_sees_appends_renames_and_new_files(void **state)
{
    struct fixture *f = *state;
    struct s3l__os_watch *w = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l__os_watch_new(S3L__OS_WATCH_AUTO, 50, &w, &err), 0);
    assert_int_equal(s3l__os_watch_add(w, f->path, &err), 0);
    /* This machine has inotify (Linux): the auto mode must use it, not fall back silently. */
    assert_false(s3l__os_watch_polling(w));
    s3l__os_watch_free(w);
    changes_end_waits(f, S3L__OS_WATCH_AUTO);
}

/* A poll with the file missing, then created: a change (presence is compared). */
static void poll_mode_sees_a_missing_file_appear(void **state)
{
    struct fixture *f = *state;
    char later[160];
    snprintf(later, sizeof(later), "%s/later.log", f->dir);
    struct s3l__os_watch *w = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l__os_watch_new(S3L__OS_WATCH_POLL, 50, &w, &err), 0);
    assert_int_equal(s3l__os_watch_add(w, later, &err), 0);
    quiet(w);
    append(later, "{\"b\":1}\n");
    assert_int_equal(woke(w), 1);
    s3l__os_watch_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(poll_mode_sees_appends_renames_and_new_files, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(inotify_mode_sees_appends_renames_and_new_files, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(poll_mode_sees_a_missing_file_appear, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
