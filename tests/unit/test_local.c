/*
 * Unit tests of the local (file://) backend: write-then-publish, put-if-absent, conditional put
 * with the documented ETag, get ranges and caps, stat, sorted recursive listing that hides temp
 * files, remove (idempotent, prunes empty directories, keeps a lock file in use), copy, and
 * errno mapping: a full tmpfs gives NO_SPACE, an unprivileged writer PERMISSION_DENIED, a missing
 * key NOT_FOUND.
 * Expected SHA-256 values are the published digests of the strings (sha256sum of "hello").
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "store/store.h"
#include "util/util.h"

struct fixture {
    char dir[64];
    struct s3l_store *s;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/s3l-local-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    char url[96];
    snprintf(url, sizeof(url), "file://%s", f->dir);
    struct s3l_error err = {0};
    if (s3l_store_open(url, NULL, &f->s, &err) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    s3l_store_free(f->s);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    int rc = system(cmd);
    free(f);
    return rc;
}

static char *read_all(struct s3l_store *s, const char *key)
{
    uint8_t *d = NULL;
    size_t n = 0;
    struct s3l_error err = {0};
    if (s3l_store_get(s, key, 0, UINT64_MAX, 1 << 20, &d, &n, NULL, &err) != 0)
        return NULL;
    return (char *)d;
}

static void upload_is_invisible_until_publish(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    struct s3l_upload *u = NULL;
    assert_int_equal(s3l_store_upload_begin(f->s, "t/x/file.bin", NULL, &u, &err), 0);
    assert_int_equal(s3l_store_upload_write(u, "hel", 3, &err), 0);
    assert_int_equal(s3l_store_upload_write(u, "lo", 2, &err), 0);
    struct s3l_object_info info;
    assert_int_equal(s3l_store_stat(f->s, "t/x/file.bin", &info, &err), S3L_ENOT_FOUND);
    s3l_error_clear(&err);
    assert_int_equal(s3l_store_upload_publish(u, &info, &err), 0);
    assert_int_equal(info.size, 5);
    assert_string_equal(info.etag,
                        "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    char *d = read_all(f->s, "t/x/file.bin");
    assert_string_equal(d, "hello");
    s3l_free(d);
    /* An aborted upload leaves nothing, not even its temp file. */
    assert_int_equal(s3l_store_upload_begin(f->s, "t/x/other", NULL, &u, &err), 0);
    assert_int_equal(s3l_store_upload_write(u, "zz", 2, &err), 0);
    s3l_store_upload_abort(u);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "test \"$(ls -A %s/t/x | grep -v '^.s3l-lock')\" = file.bin",
             f->dir);
    assert_int_equal(system(cmd), 0);
}

static void put_if_absent_and_if_match(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    struct s3l_put_options pia = {.if_none_match = true};
    struct s3l_object_info info;
    assert_int_equal(s3l_store_put(f->s, "m/k.json", "hello", 5, &pia, &info, &err), 0);
    assert_int_equal(s3l_store_put(f->s, "m/k.json", "other", 5, &pia, NULL, &err),
                     S3L_EPRECONDITION_FAILED);
    assert_non_null(strstr(err.message, "m/k.json"));
    char *d = read_all(f->s, "m/k.json");
    assert_string_equal(d, "hello");
    s3l_free(d);
    s3l_error_clear(&err);
    struct s3l_put_options cas = {.if_match = "0000"};
    assert_int_equal(s3l_store_put(f->s, "m/k.json", "v2", 2, &cas, NULL, &err),
                     S3L_EPRECONDITION_FAILED);
    s3l_error_clear(&err);
    cas.if_match = info.etag;
    struct s3l_object_info info2;
    assert_int_equal(s3l_store_put(f->s, "m/k.json", "v2", 2, &cas, &info2, &err), 0);
    assert_string_not_equal(info2.etag, info.etag);
    /* The old ETag no longer matches: a lost update is refused. */
    assert_int_equal(s3l_store_put(f->s, "m/k.json", "v3", 2, &cas, NULL, &err),
                     S3L_EPRECONDITION_FAILED);
    s3l_error_clear(&err);
    cas.if_match = "x";
    assert_int_equal(s3l_store_put(f->s, "m/absent", "v", 1, &cas, NULL, &err),
                     S3L_EPRECONDITION_FAILED);
    /* get reports the ETag of what it read. */
    uint8_t *p;
    size_t n;
    struct s3l_object_info gi;
    s3l_error_clear(&err);
    assert_int_equal(s3l_store_get(f->s, "m/k.json", 0, UINT64_MAX, 100, &p, &n, &gi, &err), 0);
    assert_string_equal(gi.etag, info2.etag);
    s3l_free(p);
}

/* s3l_store_put_many on a backend without put_many (file://): one put each, every item tried and
 * answered on its own, each counted as a put; a bad key refuses the batch before any put. A read
 * ahead is nothing here (no op): the reads after it are store operations as before. */
static void put_many_item_by_item(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    struct s3l_put_options pia = {.if_none_match = true};
    assert_int_equal(s3l_store_put(f->s, "m/b.json", "old", 3, NULL, NULL, &err), 0);
    struct s3l_put_item items[3] = {{"m/a.json", "A", 1, &pia, 0, {0}},
                                    {"m/b.json", "B", 1, &pia, 0, {0}},
                                    {"m/c.json", "C", 1, &pia, 0, {0}}};
    uint64_t puts = f->s->op_n[S3L_STORE_OP_PUT];
    assert_int_equal(s3l_store_put_many(f->s, items, 3, &err), S3L_EPRECONDITION_FAILED);
    assert_non_null(strstr(err.message, "m/b.json"));
    assert_int_equal(items[0].rc, 0);
    assert_int_equal(items[1].rc, S3L_EPRECONDITION_FAILED);
    assert_int_equal(items[2].rc, 0);
    assert_int_equal(f->s->op_n[S3L_STORE_OP_PUT] - puts, 3);
    const char *want[] = {"A", "old", "C"};
    for (int i = 0; i < 3; i++) {
        char *d = read_all(f->s, items[i].key);
        assert_non_null(d);
        assert_string_equal(d, want[i]);
        s3l_free(d);
    }
    struct s3l_put_item bad[2] = {{"m/d.json", "D", 1, NULL, 0, {0}}, {"../x", "X", 1, NULL, 0, {0}}};
    s3l_error_clear(&err);
    assert_int_equal(s3l_store_put_many(f->s, bad, 2, &err), S3L_EINVALID_ARGUMENT);
    assert_int_equal(bad[0].rc, S3L_EINVALID_ARGUMENT); /* the batch as a whole: none sent */
    assert_int_equal(bad[1].rc, S3L_EINVALID_ARGUMENT);
    assert_null(read_all(f->s, "m/d.json"));
    struct s3l_read_item ra[] = {{S3L_READ_GET, "m/a.json", 100}, {S3L_READ_LIST, "m/", 0}};
    uint64_t ops = f->s->n_ops;
    s3l_store_read_ahead(f->s, ra, 2);
    assert_int_equal(f->s->n_ops, ops);
}

static void get_ranges_and_caps(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_put(f->s, "g", "0123456789", 10, NULL, NULL, &err), 0);
    uint8_t *p;
    size_t n;
    assert_int_equal(s3l_store_get(f->s, "g", 3, 4, 100, &p, &n, NULL, &err), 0);
    assert_int_equal(n, 4);
    assert_memory_equal(p, "3456", 4);
    s3l_free(p);
    assert_int_equal(s3l_store_get(f->s, "g", 8, UINT64_MAX, 100, &p, &n, NULL, &err), 0);
    assert_int_equal(n, 2);
    s3l_free(p);
    assert_int_equal(s3l_store_get(f->s, "g", 0, UINT64_MAX, 9, &p, &n, NULL, &err),
                     S3L_ETOO_LARGE);
    s3l_error_clear(&err);
    assert_int_equal(s3l_store_get(f->s, "nope", 0, 1, 9, &p, &n, NULL, &err), S3L_ENOT_FOUND);
    assert_non_null(strstr(err.message, "/nope"));
}

struct listing {
    char keys[16][64];
    uint64_t sizes[16];
    int n;
};

static int collect(void *ctx, const struct s3l_object_info *info)
{
    struct listing *l = ctx;
    snprintf(l->keys[l->n], 64, "%s", info->key);
    l->sizes[l->n++] = info->size;
    return 0;
}

static void list_is_sorted_recursive_and_hides_temp(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    static const char *keys[] = {"b/2", "a/z", "a/b/c", "a b/1", "ab", "a/=x", "__q/é"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(keys); i++)
        assert_int_equal(s3l_store_put(f->s, keys[i], "x", 1, NULL, NULL, &err), 0);
    struct s3l_upload *u;
    assert_int_equal(s3l_store_upload_begin(f->s, "a/pending", NULL, &u, &err), 0);
    struct listing l = {0};
    assert_int_equal(s3l_store_list(f->s, "", collect, &l, &err), 0);
    /* Byte order of the whole key, as S3 lists. */
    static const char *want[] = {"__q/é", "a b/1", "a/=x", "a/b/c", "a/z", "ab", "b/2"};
    assert_int_equal(l.n, 7);
    for (int i = 0; i < l.n; i++)
        assert_string_equal(l.keys[i], want[i]);
    memset(&l, 0, sizeof(l));
    assert_int_equal(s3l_store_list(f->s, "a/", collect, &l, &err), 0);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.keys[0], "a/=x");
    memset(&l, 0, sizeof(l));
    assert_int_equal(s3l_store_list(f->s, "a", collect, &l, &err), 0);
    assert_int_equal(l.n, 5); /* a b/1, a/=x, a/b/c, a/z, ab */
    memset(&l, 0, sizeof(l));
    assert_int_equal(s3l_store_list(f->s, "zzz/", collect, &l, &err), 0);
    assert_int_equal(l.n, 0);
    s3l_store_upload_abort(u);
}

static void remove_is_idempotent_and_prunes(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_put(f->s, "s/g1/t/f", "x", 1, NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_put(f->s, "s/keep", "x", 1, NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_remove(f->s, "s/g1/t/f", &err), 0);
    assert_int_equal(s3l_store_remove(f->s, "s/g1/t/f", &err), 0);
    char path[128];
    struct stat st;
    snprintf(path, sizeof(path), "%s/s/g1", f->dir);
    assert_int_not_equal(stat(path, &st), 0);
    snprintf(path, sizeof(path), "%s/s", f->dir);
    assert_int_equal(stat(path, &st), 0);
}

/* A remove keeps the directory's lock file while other objects are left beside it, even when a
 * publisher holds the lock (before: every remove unlinked it, so a second publisher could lock a
 * new file and pass its If-Match check beside the first); the last object takes it along. */
static void remove_keeps_a_lock_in_use(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    struct s3l_object_info info;
    assert_int_equal(s3l_store_put(f->s, "c/a", "a", 1, NULL, &info, &err), 0);
    assert_int_equal(s3l_store_put(f->s, "c/b", "b", 1, NULL, NULL, &err), 0);
    struct s3l_put_options cas = {.if_match = info.etag};
    assert_int_equal(s3l_store_put(f->s, "c/a", "A", 1, &cas, NULL, &err), 0);
    char lock[128], dir[96];
    snprintf(dir, sizeof(dir), "%s/c", f->dir);
    snprintf(lock, sizeof(lock), "%s/.s3l-lock-dir", dir);
    struct stat before, after;
    assert_int_equal(stat(lock, &before), 0);
    int fd = open(lock, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX), 0); /* held, as a publisher in its If-Match check */
    assert_int_equal(s3l_store_remove(f->s, "c/b", &err), 0);
    assert_int_equal(stat(lock, &after), 0);
    assert_true(after.st_ino == before.st_ino);
    close(fd);
    assert_int_equal(s3l_store_remove(f->s, "c/a", &err), 0);
    assert_int_not_equal(stat(dir, &after), 0); /* the last object took the directory along */
}

static void remove_sweeps_abandoned_temp_files(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    /* A temp file nobody holds (its writer was killed) goes with its directory... */
    assert_int_equal(s3l_store_put(f->s, "s/g2/t/f", "x", 1, NULL, NULL, &err), 0);
    char path[160];
    snprintf(path, sizeof(path), "%s/s/g2/t/.s3l-tmp-dead", f->dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    /* A temp file created just now and not locked yet may be a writer's between its create and
     * its flock (another thread of this process, the pipelined commit): kept. */
    assert_int_equal(s3l_store_put(f->s, "s/g2/t/g", "x", 1, NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_remove(f->s, "s/g2/t/g", &err), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    usleep(1100 * 1000); /* older than a second (by ctime): a dead writer's */
    assert_int_equal(s3l_store_remove(f->s, "s/g2/t/f", &err), 0);
    snprintf(path, sizeof(path), "%s/s/g2", f->dir);
    assert_int_not_equal(stat(path, &st), 0);
    /* ...but the temp file of an upload in progress stays, and so does its directory. */
    struct s3l_upload *u;
    assert_int_equal(s3l_store_upload_begin(f->s, "s/g1/t/live", NULL, &u, &err), 0);
    assert_int_equal(s3l_store_put(f->s, "s/g1/t/f", "x", 1, NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_remove(f->s, "s/g1/t/f", &err), 0);
    snprintf(path, sizeof(path), "%s/s/g1/t", f->dir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(s3l_store_upload_write(u, "ok", 2, &err), 0);
    assert_int_equal(s3l_store_upload_publish(u, NULL, &err), 0);
}

/* A destination that is a regular file (or under one) is a config error naming the file, not
 * "does not exist ... Not a directory [NOT_FOUND]". */
static void regular_file_destination_is_not_a_directory(void **state)
{
    struct fixture *f = *state;
    char path[128], url[160];
    snprintf(path, sizeof(path), "%s/plain", f->dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    static const char *const suffix[] = {"", "/sub/dir"};
    for (int create = 0; create < 2; create++) {
        for (size_t i = 0; i < 2; i++) {
            snprintf(url, sizeof(url), "file://%s%s", path, suffix[i]);
            struct s3l_store_options o = {.version = S3L_STORE_OPTIONS_VERSION, .create = create};
            struct s3l_store *s = NULL;
            struct s3l_error err = {0};
            assert_int_equal(s3l_store_open(url, &o, &s, &err), S3L_EINVALID_CONFIG);
            assert_null(s);
            if (!strstr(err.message, "is not a directory") || !strstr(err.message, path) ||
                strstr(err.message, "does not exist"))
                fail_msg("create=%d %s: %s", create, url, err.message);
        }
    }
    /* A really missing destination still says so. */
    snprintf(url, sizeof(url), "file://%s/missing", f->dir);
    struct s3l_store *s = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_open(url, NULL, &s, &err), S3L_ENOT_FOUND);
    assert_non_null(strstr(err.message, "does not exist"));
}

static void touch_file(const char *dir, const char *name)
{
    char path[200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
}

static bool present(const char *dir, const char *name)
{
    char path[200];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

/* sweep removes only temp files nobody holds, older than before_ns, under the prefix; never an
 * object, a lock file, or a held (live) temp file. */
static void sweep_removes_only_dead_temp_files(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_put(f->s, "a/x", "x", 1, NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_put(f->s, "b/c/y", "y", 1, NULL, NULL, &err), 0);
    struct s3l_upload *live;
    assert_int_equal(s3l_store_upload_begin(f->s, "a/live", NULL, &live, &err), 0);
    char a[128], bc[128];
    snprintf(a, sizeof(a), "%s/a", f->dir);
    snprintf(bc, sizeof(bc), "%s/b/c", f->dir);
    touch_file(a, ".s3l-tmp-dead1");
    touch_file(bc, ".s3l-tmp-dead2");
    touch_file(f->dir, ".s3l-tmp-dead3");
    touch_file(a, ".s3l-lock-dir");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + 1000000000;
    uint64_t n = 0;
    /* Before their creation: nothing goes. */
    assert_int_equal(s3l_store_sweep(f->s, "", now - 3600000000000LL, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(s3l_store_sweep(f->s, "a/", now, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_false(present(a, ".s3l-tmp-dead1"));
    assert_true(present(bc, ".s3l-tmp-dead2"));
    assert_true(present(f->dir, ".s3l-tmp-dead3"));
    assert_int_equal(s3l_store_sweep(f->s, "", now, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_false(present(bc, ".s3l-tmp-dead2"));
    assert_false(present(f->dir, ".s3l-tmp-dead3"));
    assert_true(present(a, ".s3l-lock-dir"));
    assert_true(present(a, "x"));
    assert_true(present(bc, "y"));
    assert_int_equal(s3l_store_upload_write(live, "ok", 2, &err), 0);
    assert_int_equal(s3l_store_upload_publish(live, NULL, &err), 0);
    assert_true(present(a, "live"));
    /* A prefix cannot leave the root. */
    assert_int_equal(s3l_store_sweep(f->s, "../", now, &n, &err), S3L_EINVALID_ARGUMENT);
    assert_int_equal(s3l_store_sweep(f->s, "a/../../x", now, &n, &err), S3L_EINVALID_ARGUMENT);
}

/* A directory the sweep leaves empty (a killed writer's staging directory: its dead temp file
 * and the lock file its publishes took) is pruned with the lock file; one that still holds an
 * object keeps both (before: gc left the directories and their .s3l-lock-dir behind). */
static void sweep_prunes_the_directories_it_empties(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_put(f->s, "s/keep/y", "y", 1, NULL, NULL, &err), 0);
    char g1[128], g1t[160], keep[128];
    snprintf(g1, sizeof(g1), "%s/s/g1", f->dir);
    snprintf(g1t, sizeof(g1t), "%s/t", g1);
    snprintf(keep, sizeof(keep), "%s/s/keep", f->dir);
    assert_int_equal(mkdir(g1, 0755), 0);
    assert_int_equal(mkdir(g1t, 0755), 0);
    touch_file(g1t, ".s3l-tmp-dead");
    touch_file(g1t, ".s3l-lock-dir");
    touch_file(keep, ".s3l-lock-dir");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + 1000000000;
    uint64_t n = 0;
    assert_int_equal(s3l_store_sweep(f->s, "s/", now, &n, &err), 0);
    assert_int_equal(n, 1);
    struct stat st;
    assert_int_not_equal(stat(g1, &st), 0);
    assert_true(present(keep, "y"));
    assert_true(present(keep, ".s3l-lock-dir"));
}

static int collect_key(void *ctx, const struct s3l_object_info *info)
{
    char **keys = ctx;
    for (int i = 0; i < 4; i++)
        if (!keys[i]) {
            keys[i] = strdup(info->key);
            return 0;
        }
    return -1;
}

/* Key components over NAME_MAX (255 bytes) are stored under a mapped name; every operation and
 * listing (with a prefix filter on the long component) sees the real key. */
static void long_key_components(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    char lng[301], k1[400], k2[400], k3[400], pfx[400];
    memset(lng, 'L', 300);
    lng[300] = 0;
    snprintf(k1, sizeof(k1), "d/%s.json", lng);
    snprintf(k2, sizeof(k2), "d/%s/f", lng); /* a long directory */
    snprintf(k3, sizeof(k3), "d/%s/g", lng);
    assert_int_equal(s3l_store_put(f->s, k1, "one", 3, NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_put(f->s, k2, "two", 3, NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_copy(f->s, k2, k3, &err), 0);
    struct s3l_put_options pia = {.if_none_match = true};
    assert_int_equal(s3l_store_put(f->s, k1, "x", 1, &pia, NULL, &err),
                     S3L_EPRECONDITION_FAILED);
    char *got = read_all(f->s, k1);
    assert_string_equal(got, "one");
    s3l_free(got);
    char *keys[4] = {0};
    snprintf(pfx, sizeof(pfx), "d/%.280s", lng); /* filters on the long component */
    assert_int_equal(s3l_store_list(f->s, pfx, collect_key, keys, &err), 0);
    assert_non_null(keys[2]);
    assert_null(keys[3]);
    /* Byte order of the real keys: "L...L.json" < "L...L/f" < "L...L/g". */
    assert_string_equal(keys[0], k1);
    assert_string_equal(keys[1], k2);
    assert_string_equal(keys[2], k3);
    for (int i = 0; i < 4; i++)
        free(keys[i]);
    assert_int_equal(s3l_store_remove(f->s, k2, &err), 0);
    struct s3l_object_info info;
    assert_int_equal(s3l_store_stat(f->s, k2, &info, NULL), S3L_ENOT_FOUND);
    assert_int_equal(s3l_store_stat(f->s, k3, &info, &err), 0);
    assert_int_equal(info.size, 3);
    /* The mark of mapped names cannot come from a key. */
    s3l_error_clear(&err);
    assert_int_equal(s3l_store_put(f->s, "d/a\\b", "x", 1, NULL, NULL, &err),
                     S3L_EINVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "backslash"));
}

static void copy_links_and_replaces(void **state)
{
    struct fixture *f = *state;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_put(f->s, "st/a", "payload", 7, NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_copy(f->s, "st/a", "t/final", &err), 0);
    assert_int_equal(s3l_store_copy(f->s, "st/a", "t/final", &err), 0); /* idempotent */
    char *d = read_all(f->s, "t/final");
    assert_string_equal(d, "payload");
    s3l_free(d);
    assert_int_equal(s3l_store_remove(f->s, "st/a", &err), 0);
    d = read_all(f->s, "t/final");
    assert_string_equal(d, "payload");
    s3l_free(d);
    assert_int_equal(s3l_store_copy(f->s, "st/a", "t/final2", &err), S3L_ENOT_FOUND);
    assert_non_null(strstr(err.message, "st/a"));
}

/* The tmpfs of a full-disk test, unmounted by the teardown even when the test fails. */
static char mounted[64];

static int unmount_teardown(void **state)
{
    (void)state;
    if (mounted[0]) {
        umount2(mounted, MNT_DETACH);
        rmdir(mounted);
        mounted[0] = 0;
    }
    return 0;
}

static void full_disk_is_no_space(void **state)
{
    (void)state;
    char dir[] = "/tmp/s3l-tmpfs-XXXXXX";
    assert_non_null(mkdtemp(dir));
    if (mount("tmpfs", dir, "tmpfs", 0, "size=256k") != 0)
        fail_msg("mount tmpfs at %s: %s (tests run as root)", dir, strerror(errno));
    snprintf(mounted, sizeof(mounted), "%s", dir);
    char url[64];
    snprintf(url, sizeof(url), "file://%s", dir);
    struct s3l_store *s;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_open(url, NULL, &s, &err), 0);
    static uint8_t chunk[64 * 1024];
    struct s3l_upload *u;
    assert_int_equal(s3l_store_upload_begin(s, "t/big", NULL, &u, &err), 0);
    int rc = 0;
    for (int i = 0; i < 16 && rc == 0; i++)
        rc = s3l_store_upload_write(u, chunk, sizeof(chunk), &err);
    assert_int_equal(rc, S3L_ENO_SPACE);
    assert_non_null(strstr(err.message, "write"));
    assert_non_null(strstr(err.message, dir));
    s3l_store_upload_abort(u);
    struct s3l_object_info info;
    s3l_error_clear(&err);
    assert_int_equal(s3l_store_stat(s, "t/big", &info, &err), S3L_ENOT_FOUND);
    s3l_store_free(s);
    assert_int_equal(umount(dir), 0);
    mounted[0] = 0;
    rmdir(dir);
}

static void unprivileged_writer_is_denied(void **state)
{
    struct fixture *f = *state;
    chmod(f->dir, 0755);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* nobody: the root-owned 0755 directory is read-only for it. */
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        struct s3l_error err = {0};
        int rc = s3l_store_put(f->s, "t/x", "x", 1, NULL, NULL, &err);
        _exit(rc == S3L_EPERMISSION_DENIED && strstr(err.message, f->dir) ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(upload_is_invisible_until_publish, setup, teardown),
        cmocka_unit_test_setup_teardown(put_if_absent_and_if_match, setup, teardown),
        cmocka_unit_test_setup_teardown(put_many_item_by_item, setup, teardown),
        cmocka_unit_test_setup_teardown(get_ranges_and_caps, setup, teardown),
        cmocka_unit_test_setup_teardown(list_is_sorted_recursive_and_hides_temp, setup, teardown),
        cmocka_unit_test_setup_teardown(remove_is_idempotent_and_prunes, setup, teardown),
        cmocka_unit_test_setup_teardown(remove_keeps_a_lock_in_use, setup, teardown),
        cmocka_unit_test_setup_teardown(remove_sweeps_abandoned_temp_files, setup, teardown),
        cmocka_unit_test_setup_teardown(copy_links_and_replaces, setup, teardown),
        cmocka_unit_test_setup_teardown(sweep_removes_only_dead_temp_files, setup, teardown),
        cmocka_unit_test_setup_teardown(sweep_prunes_the_directories_it_empties, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(long_key_components, setup, teardown),
        cmocka_unit_test_setup_teardown(regular_file_destination_is_not_a_directory, setup,
                                        teardown),
        cmocka_unit_test_teardown(full_disk_is_no_space, unmount_teardown),
        cmocka_unit_test_setup_teardown(unprivileged_writer_is_denied, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
