/*
 * Unit tests of the two-phase sink (src/lib/sink/twopc.c, sink.c) and of the local backend's
 * staged uploads (src/lib/store/local_staged.c) on file://: the object's name; a commit round
 * trip (nothing visible before commit, the bytes after it, the staged file gone); recovery by a
 * second process (a forked child prepares and dies with SIGKILL; the parent commits its
 * committable through a new store); abort (and abort again; commit after abort refused, naming
 * the key); idempotent commit (twice, and after a crash between link(2) and unlink, redone by
 * hand); an empty interval (no object, no staged file); an interval over part_size x 10,000
 * (TOO_LARGE naming part_size); commit_group with the second of three commits failing (the
 * crash_store wrapper's fail mode), then recovery committing all three. What landed is read back
 * with stdio and readdir; the expected token is the SHA-256 of the content computed here.
 */
#include <dirent.h>
#include <openssl/evp.h>
#include <regex.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "crash_store.h"
#include "s3l/ndjson_sink.h"
#include "s3l/store.h"
#include "util/util.h"

static char root[256];

static struct s3l_store *store_at(const char *dir)
{
    char url[300];
    snprintf(url, sizeof(url), "file://%s", dir);
    struct s3l_store_options o = {.version = S3L_STORE_OPTIONS_VERSION, .create = true};
    struct s3l_store *st = NULL;
    struct s3l_error err = {0};
    if (s3l_store_open(url, &o, &st, &err) != 0)
        fail_msg("open %s: %s", url, err.message);
    return st;
}

static struct s3l_store *open_store(void)
{
    static int n;
    snprintf(root, sizeof(root), "/tmp/s3l-twopc-sink-%d-%d", (int)getpid(), n++);
    return store_at(root);
}

static void rm_root(void)
{
    char cmd[320];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* The content of root/rel (malloc'd, NUL-terminated), or NULL when it does not exist. */
static char *slurp(const char *rel)
{
    char path[1300];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat sb;
    fstat(fileno(f), &sb);
    char *b = malloc((size_t)sb.st_size + 1);
    size_t n = fread(b, 1, (size_t)sb.st_size, f);
    b[n] = 0;
    fclose(f);
    return b;
}

/* Entries of root/rel: visible ones, and hidden ones starting with hidden_prefix. */
static int count_dir(const char *rel, const char *hidden_prefix)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (hidden_prefix && strncmp(e->d_name, hidden_prefix, strlen(hidden_prefix)) == 0)
            n++;
        else if (!hidden_prefix && e->d_name[0] != '.')
            n++;
    }
    closedir(d);
    return n;
}

static struct s3l_sink *open_sink(struct s3l_store *st, const char *prefix, uint32_t sub,
                                  uint32_t par)
{
    struct s3l_sink_options o = {.version = S3L_SINK_OPTIONS_VERSION,
                                 .store = st,
                                 .delivery = S3L_SINK_EXACTLY_ONCE,
                                 .key_prefix = prefix,
                                 .subtask = sub,
                                 .parallelism = par};
    struct s3l_sink *s = NULL;
    struct s3l_error err = {0};
    if (s3l_sink_open(&o, &s, &err) != 0)
        fail_msg("sink open: %s", err.message);
    return s;
}

/* begin(ckpt), the records, prepare(ckpt): the committable's bytes. */
static uint8_t *interval(struct s3l_sink *s, uint64_t ckpt, const char *const *recs, size_t n,
                         size_t *len)
{
    struct s3l_error err = {0};
    assert_int_equal(s3l_sink_begin(s, ckpt, &err), 0);
    for (size_t i = 0; i < n; i++)
        if (s3l_sink_write(s, recs[i], strlen(recs[i]), &err) != 0)
            fail_msg("write: %s", err.message);
    uint8_t *c = NULL;
    if (s3l_sink_prepare(s, ckpt, &c, len, &err) != 0)
        fail_msg("prepare: %s", err.message);
    return c;
}

static void sha256_hex(const char *p, char out[65])
{
    uint8_t md[32];
    unsigned int n = 0;
    EVP_Digest(p, strlen(p), md, &n, EVP_sha256(), NULL);
    for (int i = 0; i < 32; i++)
        sprintf(out + 2 * i, "%02x", md[i]);
}

static const char *const recs3[] = {"{\"seq\":1}", "{\"seq\":2}\n", "{\"seq\":3}"};
static const char *const want3 = "{\"seq\":1}\n{\"seq\":2}\n{\"seq\":3}\n";

static void round_trip(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    struct s3l_sink *s = open_sink(st, "events/", 2, 4);
    size_t n = 0;
    uint8_t *c = interval(s, 7, recs3, 3, &n);
    struct s3l_committable d;
    struct s3l_error err = {0};
    assert_int_equal(s3l_committable_decode(c, n, &d, &err), 0);
    assert_int_equal(d.kind, S3L_COMMITTABLE_MULTIPART);
    assert_int_equal(d.checkpoint, 7);
    regex_t re;
    assert_int_equal(regcomp(&re,
                             "^events/sub2-[0-9]{13}[0-9a-f]{8}-00000000000000000007\\.ndjson$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
    assert_int_equal(regexec(&re, d.key, 0, NULL, 0), 0);
    regfree(&re);
    assert_int_equal(d.records, 3);
    assert_int_equal(d.bytes, strlen(want3));
    assert_int_equal(d.n_parts, 1);
    assert_int_equal(d.parts[0].size, strlen(want3));
    char sha[65];
    sha256_hex(want3, sha);
    assert_string_equal(d.token, sha); /* local token: the staged file's ETag, its SHA-256 */
    /* Before commit: no visible object, one staged file. */
    assert_null(slurp(d.key));
    assert_int_equal(count_dir("events", NULL), 0);
    assert_int_equal(count_dir("events", ".s3l-mpu-"), 1);
    assert_int_equal(s3l_sink_commit(s, c, n, &err), 0);
    char *got = slurp(d.key);
    assert_non_null(got);
    assert_string_equal(got, want3);
    free(got);
    assert_int_equal(count_dir("events", NULL), 1);
    assert_int_equal(count_dir("events", ".s3l-mpu-"), 0);
    /* Idempotent: committed again, nothing changes. */
    assert_int_equal(s3l_sink_commit(s, c, n, &err), 0);
    assert_int_equal(count_dir("events", NULL), 1);
    uint64_t r, p, b;
    s3l_sink_stats(s, &r, &p, &b);
    assert_int_equal(r, 3);
    assert_int_equal(b, strlen(want3));
    assert_int_equal(s3l_sink_close(s, &err), 0);
    s3l_committable_cleanup(&d);
    s3l_free(c);
    s3l_sink_free(s);
    s3l_store_free(st);
    rm_root();
}

/* An empty key prefix gives no leading slash; another run's object gets another name. */
static void names(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    struct s3l_sink *a = open_sink(st, NULL, 0, 0), *b = open_sink(st, "", 0, 0);
    size_t na, nb;
    uint8_t *ca = interval(a, 1, recs3, 1, &na), *cb = interval(b, 1, recs3, 1, &nb);
    struct s3l_committable da, db;
    assert_int_equal(s3l_committable_decode(ca, na, &da, NULL), 0);
    assert_int_equal(s3l_committable_decode(cb, nb, &db, NULL), 0);
    assert_int_equal(strncmp(da.key, "sub0-", 5), 0);
    assert_int_equal(strlen(da.key), strlen("sub0-") + 21 + 1 + 20 + strlen(".ndjson"));
    assert_string_not_equal(da.key, db.key); /* the run ids differ (8 random hex digits) */
    assert_int_equal(s3l_sink_commit(a, ca, na, NULL), 0);
    assert_int_equal(s3l_sink_commit(b, cb, nb, NULL), 0);
    assert_int_equal(count_dir("", NULL), 2);
    s3l_committable_cleanup(&da);
    s3l_committable_cleanup(&db);
    s3l_free(ca);
    s3l_free(cb);
    s3l_sink_free(a);
    s3l_sink_free(b);
    s3l_store_free(st);
    rm_root();
}

/* A child prepares checkpoint 3, writes the committable to a file and is killed before it
 * commits; the parent, another process with its own store, completes it. */
static void recovery_by_another_process(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    char cpath[300];
    snprintf(cpath, sizeof(cpath), "%s.committable", root);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct s3l_store *cst = store_at(root);
        struct s3l_sink *s = open_sink(cst, "r", 0, 0);
        size_t n;
        uint8_t *c = interval(s, 3, recs3, 3, &n);
        FILE *f = fopen(cpath, "wb");
        fwrite(c, 1, n, f);
        fclose(f);
        kill(getpid(), SIGKILL);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    FILE *f = fopen(cpath, "rb");
    assert_non_null(f);
    uint8_t buf[4096];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    unlink(cpath);
    assert_int_equal(count_dir("r", NULL), 0);
    assert_int_equal(count_dir("r", ".s3l-mpu-"), 1);
    struct s3l_sink *s = open_sink(st, "r", 0, 0);
    struct s3l_error err = {0};
    assert_int_equal(s3l_sink_commit(s, buf, n, &err), 0);
    struct s3l_committable d;
    assert_int_equal(s3l_committable_decode(buf, n, &d, NULL), 0);
    char *got = slurp(d.key);
    assert_non_null(got);
    assert_string_equal(got, want3);
    free(got);
    assert_int_equal(count_dir("r", ".s3l-mpu-"), 0);
    /* A crash between link(2) and the unlink of the staged name, made by hand: the object and
     * the staged file are one inode; the repeated commit finishes it. */
    char staged[1400], obj[1400];
    snprintf(staged, sizeof(staged), "%s/r/.s3l-mpu-%s", root, d.upload_id);
    snprintf(obj, sizeof(obj), "%s/%s", root, d.key);
    assert_int_equal(link(obj, staged), 0);
    assert_int_equal(s3l_sink_commit(s, buf, n, &err), 0);
    assert_int_equal(count_dir("r", ".s3l-mpu-"), 0);
    assert_int_equal(count_dir("r", NULL), 1);
    /* Another object at the key (not this upload's): refused, naming the key, not replaced. */
    f = fopen(obj, "wb");
    fputs("other\n", f);
    fclose(f);
    s3l_error_clear(&err);
    assert_int_equal(s3l_sink_commit(s, buf, n, &err), S3L_ECONFLICT);
    assert_non_null(strstr(err.message, d.key));
    got = slurp(d.key);
    assert_string_equal(got, "other\n");
    free(got);
    s3l_committable_cleanup(&d);
    s3l_sink_free(s);
    s3l_store_free(st);
    rm_root();
}

static void abort_drops(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    struct s3l_sink *s = open_sink(st, "a", 0, 0);
    size_t n;
    uint8_t *c = interval(s, 9, recs3, 2, &n);
    assert_int_equal(count_dir("a", ".s3l-mpu-"), 1);
    struct s3l_error err = {0};
    assert_int_equal(s3l_sink_abort(s, c, n, &err), 0);
    assert_int_equal(count_dir("a", ".s3l-mpu-"), 0);
    assert_int_equal(count_dir("a", NULL), 0);
    assert_int_equal(s3l_sink_abort(s, c, n, &err), 0); /* gone already: done */
    struct s3l_committable d;
    assert_int_equal(s3l_committable_decode(c, n, &d, NULL), 0);
    s3l_error_clear(&err);
    assert_int_equal(s3l_sink_commit(s, c, n, &err), S3L_ENOT_FOUND);
    assert_non_null(strstr(err.message, d.key));
    assert_int_equal(count_dir("a", NULL), 0);
    /* A multipart committable without a token cannot be settled: refused, nothing done. */
    char *tok = d.token;
    d.token = NULL;
    uint8_t *nt = NULL;
    size_t nn = 0;
    assert_int_equal(s3l_committable_encode(&d, &nt, &nn, NULL), 0);
    d.token = tok;
    s3l_error_clear(&err);
    assert_int_equal(s3l_sink_commit(s, nt, nn, &err), S3L_ECORRUPT);
    assert_non_null(strstr(err.message, "no upload token"));
    s3l_free(nt);
    /* The sink goes on: the next interval commits. */
    size_t n2;
    uint8_t *c2 = interval(s, 10, recs3, 3, &n2);
    assert_int_equal(s3l_sink_commit(s, c2, n2, &err), 0);
    assert_int_equal(count_dir("a", NULL), 1);
    s3l_committable_cleanup(&d);
    s3l_free(c);
    s3l_free(c2);
    s3l_sink_free(s);
    s3l_store_free(st);
    rm_root();
}

/* An interval without records: an empty committable, no object, no staged file, no temp. */
static void empty_interval(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    struct s3l_sink *s = open_sink(st, "e", 0, 0);
    size_t n;
    uint8_t *c = interval(s, 4, NULL, 0, &n);
    struct s3l_committable d;
    assert_int_equal(s3l_committable_decode(c, n, &d, NULL), 0);
    assert_int_equal(d.kind, S3L_COMMITTABLE_EMPTY);
    assert_int_equal(d.checkpoint, 4);
    assert_int_equal(s3l_sink_commit(s, c, n, NULL), 0);
    assert_int_equal(s3l_sink_abort(s, c, n, NULL), 0);
    struct stat sb;
    char path[300];
    snprintf(path, sizeof(path), "%s/e", root);
    assert_int_equal(stat(path, &sb), -1); /* not even the directory */
    assert_int_equal(s3l_sink_close(s, NULL), 0);
    s3l_free(c);
    s3l_sink_free(s);
    s3l_store_free(st);
    rm_root();
}

/* States: prepare with another id, close with records unprepared, more than part_size x
 * 10,000 bytes (checked before the record's bytes are read). */
static void states_and_limits(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    struct s3l_sink *s = open_sink(st, "s", 0, 0);
    struct s3l_error err = {0};
    assert_int_equal(s3l_sink_begin(s, 5, NULL), 0);
    assert_int_equal(s3l_sink_write(s, "x", 1, NULL), 0);
    uint8_t *c = NULL;
    size_t n;
    assert_int_equal(s3l_sink_prepare(s, 6, &c, &n, &err), S3L_EINVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "begin announced checkpoint 5"));
    s3l_error_clear(&err);
    assert_int_equal(s3l_sink_close(s, &err), S3L_ESTATE);
    if (!strstr(err.message, "not prepared"))
        fail_msg("close: %s", err.message);
    s3l_error_clear(&err);
    assert_int_equal(s3l_sink_write(s, "y", (size_t)S3L_SINK_PART_DEFAULT * 10000, &err),
                     S3L_ETOO_LARGE);
    assert_non_null(strstr(err.message, "part_size"));
    assert_int_equal(s3l_sink_prepare(s, 5, &c, &n, NULL), S3L_ESTATE); /* failed */
    assert_int_equal(count_dir("s", ".s3l-"), 0); /* the upload's temp file went with it */
    s3l_sink_free(s);
    s3l_store_free(st);
    rm_root();
}

/* Three subtasks' committables of one checkpoint; the second commit fails (the store fails
 * from that operation on): the call stops, having committed one; recovery commits them all. */
static void commit_group_second_fails(void **state)
{
    (void)state;
    s3l_test_fail_arm(UINT64_MAX); /* wraps the store, passes everything */
    struct s3l_store *st = open_store();
    struct s3l_sink *s[3];
    uint8_t *c[3];
    size_t n[3];
    struct s3l_committable d[3];
    struct s3l_committable_bytes g[3];
    for (int i = 0; i < 3; i++) {
        s[i] = open_sink(st, "g", (uint32_t)i, 3);
        c[i] = interval(s[i], 11, recs3, (size_t)i + 1, &n[i]);
        assert_int_equal(s3l_committable_decode(c[i], n[i], &d[i], NULL), 0);
        g[i] = (struct s3l_committable_bytes){c[i], n[i]};
    }
    s3l_test_fail_arm(2); /* operation 1 (the first complete) works, 2 and later fail */
    size_t done = 9;
    struct s3l_error err = {0};
    assert_int_equal(s3l_sink_commit_group(s[0], g, 3, &done, &err), S3L_EIO);
    assert_int_equal(done, 1);
    assert_non_null(strstr(err.message, "committable 1 of 3"));
    assert_non_null(strstr(err.message, d[1].key));
    char *got = slurp(d[0].key);
    assert_string_equal(got, "{\"seq\":1}\n");
    free(got);
    assert_null(slurp(d[1].key));
    assert_null(slurp(d[2].key));
    s3l_test_fail_arm(UINT64_MAX);
    assert_int_equal(s3l_sink_commit_group(s[0], g, 3, &done, &err), 0);
    assert_int_equal(done, 3);
    got = slurp(d[2].key);
    assert_string_equal(got, want3);
    free(got);
    assert_int_equal(count_dir("g", NULL), 3);
    assert_int_equal(count_dir("g", ".s3l-mpu-"), 0);
    for (int i = 0; i < 3; i++) {
        s3l_committable_cleanup(&d[i]);
        s3l_free(c[i]);
        s3l_sink_free(s[i]);
    }
    s3l_store_free(st);
    s3l_test_crash_disarm();
    rm_root();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(names),
        cmocka_unit_test(recovery_by_another_process),
        cmocka_unit_test(abort_drops),
        cmocka_unit_test(empty_interval),
        cmocka_unit_test(states_and_limits),
        cmocka_unit_test(commit_group_second_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
