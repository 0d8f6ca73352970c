/*
 * The exactly-once protocol on S3 (Ceph's RADOS Gateway, started by tests/stores/start-rgw.sh,
 * or the running store named by S3L_RGW_ENV): the same model pipeline as test_crash_points.c,
 * through the s3 backend (conditional writes as If-Match / If-None-Match, CopyObject, ListObjects).
 * A child is SIGKILLed before every store write k of a small run (the state before a read is the
 * state before the next write) and at each named point; every store write k, in-process, has its
 * reply lost (the request acted, the answer never came,
 * the S3 case that matters most). Each time the state must be consistent, and a rerun must leave
 * every row of the model visible exactly once. Each k gets its own prefix in the bucket. The
 * model pipelines its commits; the pipelined interleavings (epoch 1's finish held at each point
 * until epoch 2 staged a file, then killed) have their own case.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "crash_store.h"
#include "model_runner.h"
#include "rgw_store.h"
#include "util/util.h"

static char bucket[64];

static int setup(void **state)
{
    (void)state;
    if (s3l_test_rgw_start("crash", NULL) != 0)
        return -1;
    return s3l_test_rgw_use(bucket, sizeof(bucket));
}

static int teardown(void **state)
{
    (void)state;
    return s3l_test_rgw_stop();
}

static int run_child(const struct s3l_test_run *r, uint64_t at, const char *point, unsigned nth)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        s3l_test_crash_arm(at, point, nth);
        struct s3l_error err = {0};
        int rc = s3l_test_run(r, &err);
        if (rc)
            fprintf(stderr, "child failed without a crash: %s\n", err.message);
        _exit(rc ? 3 : 0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void recover_and_check(struct s3l_test_run *r, const char *what)
{
    char why[300] = "";
    if (s3l_test_verify(r, false, why, sizeof(why)) != 0)
        fail_msg("%s: inconsistent after the failure: %s", what, why);
    struct s3l_error err = {0};
    r->gc = true;
    int rc = s3l_test_run(r, &err);
    r->gc = false;
    if (rc)
        fail_msg("%s: rerun failed: %s", what, err.message);
    if (s3l_test_verify(r, true, why, sizeof(why)) != 0)
        fail_msg("%s: after the rerun: %s", what, why);
    struct s3l_test_census c;
    assert_int_equal(s3l_test_census(r, &c), 0);
    if (c.staged || c.pending)
        fail_msg("%s: %u staged files, pending %d after the rerun", what, c.staged, c.pending);
}

/* Two tables for the named points; one for the enumerations, which cost a few seconds each on
 * RGW (its listings are slow), so that the test stays around two minutes. */
static unsigned n_tables = 2;

static struct s3l_test_run small_run(char *url, size_t cap, const char *what, unsigned k)
{
    snprintf(url, cap, "s3://%s/%s-%d-%u", bucket, what, (int)getpid(), k);
    struct s3l_test_run r = {.url = url,
                             .pipeline = "ps",
                             .lanes = 2,
                             .tables = n_tables,
                             .file_size = 40,
                             .total_rows = 16,
                             .epoch_rows = 8,
                             .reject_every = 7};
    return r;
}

static bool mutates[4096];

static uint64_t count_ops(void)
{
    static unsigned counts;
    char url[160];
    struct s3l_test_run r = small_run(url, sizeof(url), "count", ++counts);
    struct s3l_error err = {0};
    s3l_test_crash_arm(0, NULL, 0);
    int rc = s3l_test_run(&r, &err);
    uint64_t total = s3l_test_crash_ops();
    for (uint64_t k = 1; k <= total && k < S3L_ARRAY_LEN(mutates); k++)
        mutates[k] = s3l_test_crash_op_mutates(k);
    s3l_test_crash_disarm();
    if (rc)
        fail_msg("unfaulted run on S3: %s", err.message);
    char why[300];
    if (s3l_test_verify(&r, true, why, sizeof(why)) != 0)
        fail_msg("unfaulted run on S3: %s", why);
    return total;
}

static void s3_crash_at_every_operation(void **state)
{
    (void)state;
    n_tables = 1;
    uint64_t total = count_ops();
    unsigned n = 0;
    for (unsigned k = 1; k <= total; k++) {
        /* The store's state before a read is the state before the next write: killing before
         * each write (and at the end) reaches every state a crash can leave. */
        if (!mutates[k])
            continue;
        n++;
        char url[160], what[32];
        struct s3l_test_run r = small_run(url, sizeof(url), "kill", k);
        snprintf(what, sizeof(what), "k=%u", k);
        int status = run_child(&r, k, NULL, 0);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
            fail_msg("%s: the child did not die by SIGKILL (status %d)", what, status);
        recover_and_check(&r, what);
    }
    print_message("S3: killed before each of %u writes of %llu operations\n", n,
                  (unsigned long long)total);
    assert_true(n > 8);
}

static void s3_lost_reply_at_every_operation(void **state)
{
    (void)state;
    n_tables = 1;
    uint64_t total = count_ops();
    unsigned n = 0;
    for (unsigned k = 1; k <= total; k++) {
        if (!mutates[k])
            continue; /* a read's lost reply is just a failed read */
        n++;
        char url[160], what[32];
        struct s3l_test_run r = small_run(url, sizeof(url), "lost", k);
        snprintf(what, sizeof(what), "lost reply k=%u", k);
        struct s3l_error err = {0};
        s3l_test_fail_after_arm(k);
        int rc = s3l_test_run(&r, &err);
        s3l_test_crash_disarm();
        (void)rc; /* failed or absorbed: either way the result must be right */
        recover_and_check(&r, what);
    }
    print_message("S3: %u lost replies of %llu operations\n", n, (unsigned long long)total);
    assert_true(n > 8);
}

static void s3_named_points(void **state)
{
    (void)state;
    static const char *points[] = {"after-stage",    "after-prepare",   "after-checkpoint",
                                   "between-copies", "before-marker",   "between-markers",
                                   "after-marker",   "after-commit"};
    for (unsigned i = 0; i < S3L_ARRAY_LEN(points); i++) {
        char url[160];
        struct s3l_test_run r = small_run(url, sizeof(url), points[i], i);
        int status = run_child(&r, 0, points[i], 1);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
            fail_msg("%s: the child did not die by SIGKILL (status %d)", points[i], status);
        struct s3l_test_census c;
        assert_int_equal(s3l_test_census(&r, &c), 0);
        /* Epoch 1 of ns/t0 has one data file and a dead-letter file; t1 one data file. Every
         * copy of both streams precedes the markers, put together (the crash store passes the
         * batch on one by one, between-markers between two). */
        static const unsigned want_files[] = {0, 0, 0, 1, 2, 2, 2, 2};
        static const unsigned want_markers[] = {0, 0, 0, 0, 0, 1, 2, 2};
        bool want_pending = i >= 2 && i <= 6;
        if (c.pending != want_pending || c.data_files != want_files[i] ||
            c.markers != want_markers[i])
            fail_msg("%s: pending %d files %u markers %u", points[i], c.pending, c.data_files,
                     c.markers);
        recover_and_check(&r, points[i]);
    }
}

/*
 * The pipelined commit's interleavings on S3 (issue 14 item 1): epoch 1's finish held on the
 * committer's thread at each of its points until the stager staged a file of epoch 2 (after-stage
 * #4: epoch 1 stages 3 files of its one table), then killed; the state in between, then the rerun
 * and the model.
 */
static void s3_pipelined_interleavings(void **state)
{
    (void)state;
    static const struct {
        const char *point;
        bool pending;
        unsigned data_files, markers, staged_min;
    } cases[] = {
        {"after-checkpoint", true, 0, 0, 4}, {"between-copies", true, 1, 0, 4},
        {"before-marker", true, 3, 0, 4},    {"after-marker", true, 3, 1, 4},
        {"after-commit", false, 3, 1, 1}, /* epoch 1's staged files deleted by then */
    };
    for (unsigned i = 0; i < S3L_ARRAY_LEN(cases); i++) {
        char url[160];
        snprintf(url, sizeof(url), "s3://%s/held-%s-%d", bucket, cases[i].point, (int)getpid());
        struct s3l_test_run r = {.url = url,
                                 .pipeline = "ph",
                                 .lanes = 1,
                                 .tables = 1,
                                 .file_size = 30,
                                 .total_rows = 36,
                                 .epoch_rows = 12};
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            s3l_test_hold_arm(cases[i].point, 1, "after-stage", 4, true, 30000);
            struct s3l_error err = {0};
            int rc = s3l_test_run(&r, &err);
            if (rc)
                fprintf(stderr, "child failed without a crash: %s\n", err.message);
            _exit(rc ? 3 : 0);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
            fail_msg("%s: the child did not die by SIGKILL (status %d)", cases[i].point, status);
        struct s3l_test_census c;
        assert_int_equal(s3l_test_census(&r, &c), 0);
        if (c.pending != cases[i].pending || c.data_files != cases[i].data_files ||
            c.markers != cases[i].markers || c.staged < cases[i].staged_min)
            fail_msg("held %s: pending %d staged %u files %u markers %u", cases[i].point,
                     c.pending, c.staged, c.data_files, c.markers);
        recover_and_check(&r, cases[i].point);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(s3_named_points),
        cmocka_unit_test(s3_pipelined_interleavings),
        cmocka_unit_test(s3_crash_at_every_operation),
        cmocka_unit_test(s3_lost_reply_at_every_operation),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
