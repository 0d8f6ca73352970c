/*
 * Crash tests of the exactly-once protocol through the destination API (the CLI-level ones are
 * the shell scripts beside this file). A child process runs the model pipeline with the crash
 * store armed and is SIGKILLed at store operation k -- every k of a small run -- or at a named
 * protocol point; the parent checks that the child died by SIGKILL, that the state in between
 * is the expected one (e.g. one final file and no marker between two copies) and consistent
 * (every marker's files whole, no row twice), then reruns to the end (recovery + gc) and
 * requires every row of the model exactly once. The model pipelines its commits (epoch E
 * finishes while E+1 stages) unless a case says serial; the pipelined interleavings are killed
 * with the committer held at each point of E until E+1 staged a file. Then 50 runs killed at
 * random operations (seed printed), and a rerun of a finished run, which must change nothing.
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <openssl/evp.h>

#include "crash_store.h"
#include "model_runner.h"
#include "s3l/store.h"
#include "util/util.h"

struct lake {
    char dir[64];
    char url[96];
};

/* Lakes live on tmpfs when there is one: the protocol is what is tested here, and thousands
 * of fsyncs on a real disk would make the test slow. */
static void lake_new(struct lake *l)
{
    snprintf(l->dir, sizeof(l->dir), "%s/s3l-crash-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    assert_non_null(mkdtemp(l->dir));
    snprintf(l->url, sizeof(l->url), "file://%s", l->dir);
}

static void lake_rm(struct lake *l)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", l->dir);
    assert_int_equal(system(cmd), 0);
}

/* Runs r in a child armed to crash; returns the wait status. */
static int run_child(const struct s3l_test_run *r, uint64_t at, const char *point, unsigned nth)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* Quiet: the crash store writes one line to stderr when it kills. */
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

static bool killed(int status)
{
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

static void recover_and_check(struct s3l_test_run *r, const char *what)
{
    char why[300] = "";
    if (s3l_test_verify(r, false, why, sizeof(why)) != 0)
        fail_msg("%s: inconsistent after the crash: %s", what, why);
    struct s3l_error err = {0};
    bool gc = r->gc;
    r->gc = true;
    int rc = s3l_test_run(r, &err);
    r->gc = gc;
    if (rc)
        fail_msg("%s: rerun failed: %s", what, err.message);
    if (s3l_test_verify(r, true, why, sizeof(why)) != 0)
        fail_msg("%s: after the rerun: %s", what, why);
    struct s3l_test_census c;
    assert_int_equal(s3l_test_census(r, &c), 0);
    if (c.staged || c.pending)
        fail_msg("%s: %u staged files, pending %d after the rerun", what, c.staged, c.pending);
}

static void crash_at_every_operation(void **state)
{
    (void)state;
    unsigned k;
    for (k = 1;; k++) {
        struct lake l;
        lake_new(&l);
        struct s3l_test_run r = {.url = l.url,
                                 .pipeline = "pk",
                                 .lanes = 2,
                                 .tables = 2,
                                 .file_size = 40,
                                 .total_rows = 20,
                                 .epoch_rows = 8,
                                 .reject_every = 9};
        int status = run_child(&r, k, NULL, 0);
        char what[32];
        snprintf(what, sizeof(what), "k=%u", k);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            lake_rm(&l);
            break;
        }
        if (!killed(status))
            fail_msg("%s: the child did not die by SIGKILL (status %d)", what, status);
        recover_and_check(&r, what);
        lake_rm(&l);
    }
    print_message("crash at every operation: %u kill points enumerated\n", k - 1);
    assert_true(k > 60);
}

/* A named point of the protocol, its occurrence, and the store's state a kill there leaves. */
struct named_case {
    const char *point;
    unsigned nth;
    bool pending;
    unsigned staged, data_files, markers;
};

/* Kills a run of `tables` tables (24 rows, epochs of 12, files of 30 bytes, serial commits: the
 * states in series; pipelined below) at each case's point, checks the state left, then that the
 * rerun lands every row once. */
static void kill_at_named(const struct named_case *cases, size_t n, unsigned tables,
                          const char *pipeline)
{
    for (size_t i = 0; i < n; i++) {
        struct lake l;
        lake_new(&l);
        struct s3l_test_run r = {.url = l.url,
                                 .pipeline = pipeline,
                                 .lanes = 1,
                                 .tables = tables,
                                 .file_size = 30,
                                 .total_rows = 24,
                                 .epoch_rows = 12,
                                 .serial = true};
        char what[64];
        snprintf(what, sizeof(what), "%u table(s), %s #%u", tables, cases[i].point,
                 cases[i].nth);
        int status = run_child(&r, 0, cases[i].point, cases[i].nth);
        if (!killed(status))
            fail_msg("%s: the child did not die by SIGKILL (status %d)", what, status);
        struct s3l_test_census c;
        assert_int_equal(s3l_test_census(&r, &c), 0);
        if (c.pending != cases[i].pending || c.staged != cases[i].staged ||
            c.data_files != cases[i].data_files || c.markers != cases[i].markers)
            fail_msg("%s: pending %d staged %u files %u markers %u; expected %d %u %u %u", what,
                     c.pending, c.staged, c.data_files, c.markers, cases[i].pending,
                     cases[i].staged, cases[i].data_files, cases[i].markers);
        recover_and_check(&r, what);
        lake_rm(&l);
    }
}

/* The expected state at each named point, for a run whose first epoch stages 3 files of one
 * table (file_size 30, lane 0 only). */
static void named_points(void **state)
{
    (void)state;
    static const struct named_case cases[] = {
        {"after-stage", 1, false, 1, 0, 0},   {"after-stage", 2, false, 2, 0, 0},
        {"after-prepare", 1, false, 3, 0, 0}, {"after-checkpoint", 1, true, 3, 0, 0},
        {"between-copies", 1, true, 3, 1, 0}, {"between-copies", 2, true, 3, 2, 0},
        {"before-marker", 1, true, 3, 3, 0},  {"after-marker", 1, true, 3, 3, 1},
        {"after-commit", 1, false, 0, 3, 1},
    };
    kill_at_named(cases, S3L_ARRAY_LEN(cases), 1, "pn");
}

/* The same for an epoch of two tables (issue 14 item 2): every copy of both streams comes before
 * the first marker, and the markers follow one another (between-markers, on S3 sent together).
 * Epoch 1 stages 2 files per table (6 rows each, file_size 30); the four copies, both tables',
 * are one batch (the crash store passes it on item by item, between-copies between two: t0's,
 * then t1's), so the second between-copies falls between the two tables' copies and the third
 * between t1's, with no marker put yet (before, each table's copies were a batch of their own,
 * and before that each stream's marker followed its own copies). */
static void named_points_two_tables(void **state)
{
    (void)state;
    static const struct named_case cases[] = {
        {"after-checkpoint", 1, true, 4, 0, 0}, {"between-copies", 1, true, 4, 1, 0},
        {"between-copies", 2, true, 4, 2, 0},   {"between-copies", 3, true, 4, 3, 0},
        {"before-marker", 1, true, 4, 4, 0},
        {"between-markers", 1, true, 4, 4, 1},  {"after-marker", 1, true, 4, 4, 2},
        {"after-commit", 1, false, 0, 4, 2},
    };
    kill_at_named(cases, S3L_ARRAY_LEN(cases), 2, "pm");
}

static void crash_in_gc(void **state)
{
    (void)state;
    struct lake l;
    lake_new(&l);
    struct s3l_test_run r = {.url = l.url,
                             .pipeline = "pg",
                             .lanes = 1,
                             .tables = 1,
                             .file_size = 30,
                             .total_rows = 24,
                             .epoch_rows = 12,
                             .serial = true};
    /* Garbage: a writer killed after staging, before its commit point (serial: pipelined, the
     * committer publishes epoch 1's last file while the stager stages epoch 2's, so the count of
     * staged files at the kill would vary; pipelined_interleavings kills there pipelined). */
    assert_true(killed(run_child(&r, 0, "after-prepare", 1)));
    struct s3l_test_census c;
    assert_int_equal(s3l_test_census(&r, &c), 0);
    assert_int_equal(c.staged, 3);
    r.gc = true;
    assert_true(killed(run_child(&r, 0, "in-gc", 2)));
    assert_int_equal(s3l_test_census(&r, &c), 0);
    assert_int_equal(c.staged, 2); /* one removed before the kill */
    recover_and_check(&r, "in-gc");
    lake_rm(&l);
}

struct snap {
    char text[1 << 16];
    size_t len;
};

static int snap_key(void *ctx, const struct s3l_object_info *info)
{
    struct snap *s = ctx;
    s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len, "%s\n", info->key);
    return 0;
}

/* Every object's name, size, mtime and content digest (keys listed first: a list callback must
 * not call the store). A rerun must change none of them. */
static void snapshot(const char *url, struct snap *s)
{
    struct s3l_store *st;
    struct s3l_error err = {0};
    s->len = 0;
    assert_int_equal(s3l_store_open(url, NULL, &st, &err), 0);
    assert_int_equal(s3l_store_list(st, "", snap_key, s, &err), 0);
    char *keys = strdup(s->text);
    s->len = 0;
    for (char *k = strtok(keys, "\n"); k; k = strtok(NULL, "\n")) {
        uint8_t *p = NULL;
        size_t n = 0;
        uint8_t md[32];
        char hex[65] = "";
        unsigned int mdlen = 0;
        struct s3l_object_info info = {0};
        assert_int_equal(s3l_store_stat(st, k, &info, &err), 0);
        if (s3l_store_get(st, k, 0, UINT64_MAX, 1 << 26, &p, &n, NULL, NULL) == 0
            && EVP_Digest(p, n, md, &mdlen, EVP_sha256(), NULL))
            s3l_hex_encode(md, 32, hex);
        s3l_free(p);
        s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len,
                                   "%s %llu %lld %s\n", k, (unsigned long long)info.size,
                                   (long long)info.mtime_ns, hex);
    }
    free(keys);
    s3l_store_free(st);
}

static void random_kills_and_idempotent_rerun(void **state)
{
    (void)state;
    const char *env = getenv("S3L_CRASH_SEED");
    unsigned seed = env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL);
    print_message("random kills: seed %u (S3L_CRASH_SEED=%u reproduces)\n", seed, seed);
    srand(seed);
    struct lake l;
    lake_new(&l);
    struct s3l_test_run r = {.url = l.url,
                             .pipeline = "pr",
                             .lanes = 2,
                             .tables = 2,
                             .file_size = 400,
                             .total_rows = 2000,
                             .epoch_rows = 300,
                             .reject_every = 97};
    /* Learn the run's length once, then kill 50 runs at random operations of it. */
    struct s3l_error err = {0};
    s3l_test_crash_arm(0, NULL, 0);
    assert_int_equal(s3l_test_run(&r, &err), 0);
    uint64_t total = s3l_test_crash_ops();
    s3l_test_crash_disarm();
    lake_rm(&l);
    for (int i = 0; i < 50; i++) {
        lake_new(&l);
        r.url = l.url;
        uint64_t k = 1 + (uint64_t)rand() % total;
        char what[64];
        snprintf(what, sizeof(what), "seed %u run %d k=%llu", seed, i, (unsigned long long)k);
        int status = run_child(&r, k, NULL, 0);
        if (!killed(status) && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            fail_msg("%s: status %d", what, status);
        /* Kill the recovery too, once in a while. */
        if (killed(status) && rand() % 3 == 0) {
            r.gc = true;
            status = run_child(&r, 1 + (uint64_t)rand() % 200, NULL, 0);
            r.gc = false;
        }
        recover_and_check(&r, what);
        if (i == 49) {
            /* A rerun of a finished command changes nothing at all. */
            struct snap *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
            snapshot(r.url, a);
            assert_int_equal(s3l_test_run(&r, &err), 0);
            snapshot(r.url, b);
            assert_int_equal(a->len, b->len);
            assert_memory_equal(a->text, b->text, a->len);
            free(a);
            free(b);
        }
        lake_rm(&l);
    }
}

/* Runs r in a child whose committer is held at point #1 (epoch 1's finish) until the stager
 * announced after-stage #until (a file of epoch 2), then killed; returns the wait status. */
static int run_child_held(const struct s3l_test_run *r, const char *point, unsigned until)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        s3l_test_hold_arm(point, 1, "after-stage", until, true, 20000);
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

/*
 * The pipelined commit's interleavings (issue 14 item 1): a kill while epoch 1 finishes on the
 * committer's thread and epoch 2 stages, at each point of its completion (after its last file,
 * closed by the commit, was published there: before its commit point; after its commit point,
 * between two copies, before and after the marker, after the committed write and the staged
 * delete that runs with it), once the stager has staged a file of epoch 2. The store then holds
 * epoch 1 not yet recorded, pending or committed, and epoch 2's staged files (garbage: never
 * recorded); the rerun must show every row once and leave nothing staged.
 */
static void pipelined_interleavings(void **state)
{
    (void)state;
    static const struct {
        const char *point;
        bool pending;
        unsigned data_files, markers, staged_min;
    } cases[] = {
        {"after-prepare", false, 0, 0, 4},   {"after-checkpoint", true, 0, 0, 4},
        {"between-copies", true, 1, 0, 4},
        {"before-marker", true, 3, 0, 4},    {"after-marker", true, 3, 1, 4},
        {"after-commit", false, 3, 1, 1},
    };
    for (size_t i = 0; i < S3L_ARRAY_LEN(cases); i++) {
        struct lake l;
        lake_new(&l);
        /* Epoch 1 stages 3 files (after-stage #1 to #3) of one table; #4 is epoch 2's first. */
        struct s3l_test_run r = {.url = l.url,
                                 .pipeline = "pi",
                                 .lanes = 1,
                                 .tables = 1,
                                 .file_size = 30,
                                 .total_rows = 36,
                                 .epoch_rows = 12};
        int status = run_child_held(&r, cases[i].point, 4);
        if (!killed(status))
            fail_msg("%s: the child did not die by SIGKILL (status %d)", cases[i].point, status);
        struct s3l_test_census c;
        assert_int_equal(s3l_test_census(&r, &c), 0);
        /* Epoch 1's 3 staged files (deleted while its committed checkpoint is written, so gone
         * at after-commit) and epoch 2's at least one. */
        if (c.pending != cases[i].pending || c.data_files != cases[i].data_files ||
            c.markers != cases[i].markers || c.staged < cases[i].staged_min)
            fail_msg("%s: pending %d staged %u files %u markers %u; expected %d >=%u %u %u",
                     cases[i].point, c.pending, c.staged, c.data_files, c.markers,
                     cases[i].pending, cases[i].staged_min, cases[i].data_files,
                     cases[i].markers);
        recover_and_check(&r, cases[i].point);
        lake_rm(&l);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crash_at_every_operation),
        cmocka_unit_test(named_points),
        cmocka_unit_test(named_points_two_tables),
        cmocka_unit_test(crash_in_gc),
        cmocka_unit_test(random_kills_and_idempotent_rerun),
        cmocka_unit_test(pipelined_interleavings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
