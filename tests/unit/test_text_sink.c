/*
 * Unit tests of the rolling text sink (src/lib/sink/text.c, sink.c) on file://: records become
 * lines (a record's own final newline not doubled; an embedded newline refused, naming the
 * record); parts roll at rollover_bytes and at close under part-<n> and sub<i>-part-<n>; a
 * restored run numbers after its own parts; a fresh run never replaces a published part
 * (put-if-absent, next free number); prepare flushes nothing and returns an empty committable;
 * commit, commit_group and abort of committables, a corrupt one refused with nothing done; the
 * interval's state errors; compression: gzip and zstd parts (`.gz`, `.zst`) decompressed here
 * with zlib and libzstd and compared with the lines, rollover counting the lines' bytes, and
 * numbering after a restore over names with and without a suffix. What landed is read back with
 * stdio and readdir, not the store.
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
#include <zlib.h>
#include <zstd.h>

#include "s3l/ndjson_sink.h"
#include "s3l/store.h"
#include "util/util.h"

static char root[256];

static struct s3l_store *open_store(void)
{
    static int n;
    snprintf(root, sizeof(root), "/tmp/s3l-text-sink-%d-%d", (int)getpid(), n++);
    char url[300];
    snprintf(url, sizeof(url), "file://%s", root);
    struct s3l_store_options o = {.version = S3L_STORE_OPTIONS_VERSION, .create = true};
    struct s3l_store *st = NULL;
    struct s3l_error err = {0};
    if (s3l_store_open(url, &o, &st, &err) != 0)
        fail_msg("open %s: %s", url, err.message);
    return st;
}

static void rm_root(void)
{
    char cmd[320];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* The whole content of root/rel, or NULL when it does not exist. */
static char *slurp(const char *rel)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[8][4096];
    static int i;
    char *b = buf[i++ % 8];
    size_t n = fread(b, 1, sizeof(buf[0]) - 1, f);
    b[n] = 0;
    fclose(f);
    return b;
}

/* Visible (non-hidden) entries of root/rel. */
static int count_dir(const char *rel)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static struct s3l_sink *sink(struct s3l_store *st, const char *prefix, uint64_t roll, uint32_t sub,
                             uint32_t par, bool restore)
{
    struct s3l_sink_options o = {.version = S3L_SINK_OPTIONS_VERSION,
                                 .store = st,
                                 .key_prefix = prefix,
                                 .rollover_bytes = roll,
                                 .subtask = sub,
                                 .parallelism = par,
                                 .restore = restore};
    struct s3l_sink *s = NULL;
    struct s3l_error err = {0};
    if (s3l_sink_open(&o, &s, &err) != 0)
        fail_msg("sink open: %s", err.message);
    return s;
}

#define W(s, str) assert_int_equal(s3l_sink_write((s), (str), strlen(str), NULL), 0)

/* rollover 10: "aaaa\n" + "bbbb\n" reaches 10 and rolls; "c\n" goes at close. */
static void lines_and_rollover(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    struct s3l_sink *s = sink(st, "events/", 10, 0, 1, false);
    assert_int_equal(s3l_sink_begin(s, 1, NULL), 0);
    W(s, "aaaa");
    assert_null(slurp("events/part-0"));
    W(s, "bbbb\n"); /* its own line end: not doubled */
    assert_string_equal(slurp("events/part-0"), "aaaa\nbbbb\n");
    struct s3l_error err = {0};
    assert_int_equal(s3l_sink_write(s, "x\ny", 3, &err), S3L_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "record 3 holds a newline at byte 1"));
    W(s, "");
    W(s, "c");
    uint8_t *c = NULL;
    size_t n = 0;
    assert_int_equal(s3l_sink_prepare(s, 1, &c, &n, NULL), 0);
    assert_null(slurp("events/part-1")); /* prepare flushes nothing */
    struct s3l_committable dc;
    assert_int_equal(s3l_committable_decode(c, n, &dc, NULL), 0);
    assert_int_equal(dc.kind, S3L_COMMITTABLE_EMPTY);
    assert_true(dc.checkpoint == 1);
    assert_int_equal(s3l_sink_commit(s, c, n, NULL), 0);
    assert_int_equal(s3l_sink_abort(s, c, n, NULL), 0);
    s3l_free(c);
    assert_int_equal(s3l_sink_close(s, NULL), 0);
    assert_string_equal(slurp("events/part-1"), "\nc\n");
    assert_int_equal(count_dir("events"), 2);
    uint64_t recs, parts, bytes;
    s3l_sink_stats(s, &recs, &parts, &bytes);
    assert_true(recs == 4 && parts == 2 && bytes == 13);
    s3l_sink_free(s);
    s3l_store_free(st);
    rm_root();
}

/* Subtask names; an empty key prefix gives keys at the root; a fresh run skips published parts;
 * a restored one lists its own and goes after the highest, ignoring another subtask's. */
static void names_restore_and_no_replace(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    struct s3l_sink *a = sink(st, "", 1, 1, 3, false);
    assert_int_equal(s3l_sink_begin(a, 5, NULL), 0);
    W(a, "one");
    W(a, "two");
    s3l_sink_free(a);
    assert_string_equal(slurp("sub1-part-0"), "one\n");
    assert_string_equal(slurp("sub1-part-1"), "two\n");
    struct s3l_sink *b = sink(st, NULL, 1, 2, 3, false);
    assert_int_equal(s3l_sink_begin(b, 5, NULL), 0);
    W(b, "other");
    s3l_sink_free(b);
    assert_string_equal(slurp("sub2-part-0"), "other\n");
    /* A fresh run of subtask 1: part-0 and part-1 exist and stay; it lands at part-2. */
    struct s3l_sink *f = sink(st, "", 1, 1, 3, false);
    assert_int_equal(s3l_sink_begin(f, 6, NULL), 0);
    W(f, "fresh");
    s3l_sink_free(f);
    assert_string_equal(slurp("sub1-part-0"), "one\n");
    assert_string_equal(slurp("sub1-part-1"), "two\n");
    assert_string_equal(slurp("sub1-part-2"), "fresh\n");
    /* Restored: after sub1's highest (2), whatever sub2 holds; a gap is not filled. */
    char path[400];
    snprintf(path, sizeof(path), "%s/sub1-part-9", root);
    FILE *g = fopen(path, "w");
    assert_non_null(g);
    fputs("nine\n", g);
    fclose(g);
    struct s3l_sink *r = sink(st, "", 1, 1, 3, true);
    assert_int_equal(s3l_sink_begin(r, 7, NULL), 0);
    W(r, "restored");
    s3l_sink_free(r);
    assert_string_equal(slurp("sub1-part-10"), "restored\n");
    assert_null(slurp("sub1-part-3"));
    assert_int_equal(count_dir(""), 6);
    /* Many published parts: a fresh run still finds the next free number, replacing none. */
    struct s3l_sink *m = sink(st, "many", 1, 0, 1, false);
    assert_int_equal(s3l_sink_begin(m, 1, NULL), 0);
    for (int i = 0; i < 40; i++)
        W(m, "x");
    s3l_sink_free(m);
    struct s3l_sink *m2 = sink(st, "many", 1, 0, 1, false);
    assert_int_equal(s3l_sink_begin(m2, 1, NULL), 0);
    W(m2, "late");
    s3l_sink_free(m2);
    assert_string_equal(slurp("many/part-40"), "late\n");
    assert_string_equal(slurp("many/part-39"), "x\n");
    assert_int_equal(count_dir("many"), 41);
    s3l_store_free(st);
    rm_root();
}

static void states_and_options(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    struct s3l_sink_options o = {.version = S3L_SINK_OPTIONS_VERSION, .store = st};
    struct s3l_sink *s = NULL;
    struct s3l_error err = {0};
    o.delivery = S3L_SINK_EXACTLY_ONCE;
    o.part_size = 1;
    assert_int_equal(s3l_sink_open(&o, &s, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "part_size"));
    assert_null(s);
    o.part_size = 0;
    o.delivery = S3L_SINK_AT_MOST_ONCE;
    o.key_prefix = "a/../b";
    s3l_error_clear(&err);
    assert_int_equal(s3l_sink_open(&o, &s, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "a/../b"));
    o.key_prefix = "p";
    o.subtask = 3;
    o.parallelism = 3;
    assert_int_equal(s3l_sink_open(&o, &s, NULL), S3L_EINVALID_CONFIG);
    o.subtask = 0;
    o.parallelism = 0;
    assert_int_equal(s3l_sink_open(&o, &s, NULL), 0);
    assert_int_equal(s3l_sink_write(s, "a", 1, NULL), S3L_ESTATE);
    uint8_t *c = NULL;
    size_t n = 0;
    assert_int_equal(s3l_sink_prepare(s, 1, &c, &n, NULL), S3L_ESTATE);
    assert_int_equal(s3l_sink_begin(s, 4, NULL), 0);
    assert_int_equal(s3l_sink_begin(s, 5, NULL), S3L_ESTATE);
    s3l_error_clear(&err);
    assert_int_equal(s3l_sink_prepare(s, 5, &c, &n, &err), S3L_EINVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "begin announced checkpoint 4"));
    assert_int_equal(s3l_sink_prepare(s, 4, &c, &n, NULL), 0);
    /* commit_group: the second of three is corrupt; the call stops there, having done one. */
    uint8_t bad[8] = {'S', '3', 'L', 'C', 1, 0, 0, 0};
    struct s3l_committable_bytes g[3] = {{c, n}, {bad, sizeof(bad)}, {c, n}};
    size_t done = 9;
    s3l_error_clear(&err);
    assert_int_equal(s3l_sink_commit_group(s, g, 3, &done, &err), S3L_ECORRUPT);
    assert_int_equal(done, 1);
    assert_non_null(strstr(err.message, "committable 1 of 3"));
    assert_int_equal(s3l_sink_commit_group(s, g, 1, &done, NULL), 0);
    assert_int_equal(done, 1);
    /* A multipart committable of an upload that never was: the store completes nothing. An id
     * that is not the local backend's (32 hex digits) is refused; a made-up one is gone; an
     * abort of it is done (nothing to drop). */
    struct s3l_committable_part p = {1, 1, "\"e\""};
    struct s3l_committable mc = {.kind = S3L_COMMITTABLE_MULTIPART,
                                 .key = "k",
                                 .upload_id = "u",
                                 .token = "t",
                                 .n_parts = 1,
                                 .parts = &p,
                                 .bytes = 1};
    uint8_t *mb = NULL;
    size_t mn = 0;
    assert_int_equal(s3l_committable_encode(&mc, &mb, &mn, NULL), 0);
    assert_int_equal(s3l_sink_commit(s, mb, mn, NULL), S3L_EINVALID_ARGUMENT);
    s3l_free(mb);
    mc.upload_id = "0123456789abcdef0123456789abcdef";
    assert_int_equal(s3l_committable_encode(&mc, &mb, &mn, NULL), 0);
    s3l_error_clear(&err);
    assert_int_equal(s3l_sink_commit(s, mb, mn, &err), S3L_ENOT_FOUND);
    assert_non_null(strstr(err.message, "'k'"));
    assert_int_equal(s3l_sink_abort(s, mb, mn, NULL), 0);
    s3l_free(mb);
    s3l_free(c);
    assert_int_equal(s3l_sink_close(s, NULL), 0); /* nothing buffered: nothing put */
    assert_int_equal(count_dir("p"), 0);
    s3l_sink_free(s);
    s3l_store_free(st);
    rm_root();
}

/* A put that fails (where the part's directory goes there is a regular file) is returned,
 * naming the path; the sink is failed after it, and its later calls say why. */
static void put_error_fails_the_sink(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    struct s3l_sink *s = sink(st, "ro", 4, 0, 1, false);
    char path[400];
    snprintf(path, sizeof(path), "%s/ro", root);
    FILE *in_the_way = fopen(path, "w");
    assert_non_null(in_the_way);
    fclose(in_the_way);
    assert_int_equal(s3l_sink_begin(s, 1, NULL), 0);
    struct s3l_error err = {0};
    int rc = s3l_sink_write(s, "abcd", 4, &err);
    assert_true(rc < 0 && rc != S3L_EPRECONDITION_FAILED && rc != S3L_ESTATE);
    assert_non_null(strstr(err.message, "/ro"));
    char first[64];
    snprintf(first, sizeof(first), "%s", s3l_error_name(rc));
    s3l_error_clear(&err);
    assert_int_equal(s3l_sink_write(s, "e", 1, &err), S3L_ESTATE);
    assert_non_null(strstr(err.message, first));
    assert_int_equal(s3l_sink_close(s, NULL), S3L_ESTATE);
    s3l_sink_free(s);
    s3l_store_free(st);
    rm_root();
}

/* rollover_interval: a part is put once its oldest record is that old, by the next write or by
 * a poll, whatever the bytes; a younger buffer is not. */
static void rollover_interval(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    struct s3l_sink_options o = {.version = S3L_SINK_OPTIONS_VERSION,
                                 .store = st,
                                 .key_prefix = "t",
                                 .rollover_interval_ms = 200};
    struct s3l_sink *s = NULL;
    assert_int_equal(s3l_sink_open(&o, &s, NULL), 0);
    assert_int_equal(s3l_sink_begin(s, 1, NULL), 0);
    W(s, "old");
    assert_int_equal(s3l_sink_poll(s, NULL), 0);
    assert_null(slurp("t/part-0")); /* younger than 200 ms */
    usleep(250 * 1000);
    assert_int_equal(s3l_sink_poll(s, NULL), 0);
    assert_string_equal(slurp("t/part-0"), "old\n");
    W(s, "a");
    usleep(250 * 1000);
    W(s, "b"); /* the write finds the buffer's oldest record 250 ms old: both go */
    assert_string_equal(slurp("t/part-1"), "a\nb\n");
    W(s, "c");
    assert_int_equal(s3l_sink_close(s, NULL), 0);
    assert_string_equal(slurp("t/part-2"), "c\n");
    assert_int_equal(count_dir("t"), 3);
    s3l_sink_free(s);
    s3l_store_free(st);
    rm_root();
}

/* The whole of root/rel in *len bytes (malloc), or NULL when it does not exist. */
static uint8_t *read_all(const char *rel, size_t *len)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    assert_non_null(b);
    for (size_t r; (r = fread(b + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            b = realloc(b, cap *= 2);
            assert_non_null(b);
        }
    }
    fclose(f);
    *len = n;
    return b;
}

/* gzip (one member, RFC 1952) of p[0..n) decoded with zlib's inflate into *out (malloc). */
static size_t gunzip(const uint8_t *p, size_t n, uint8_t **out)
{
    assert_true(n >= 18 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8); /* ID1 ID2 CM=deflate */
    z_stream z = {0};
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    size_t cap = 1 << 20;
    uint8_t *b = malloc(cap);
    assert_non_null(b);
    z.next_in = (Bytef *)p;
    z.avail_in = (uInt)n;
    z.next_out = b;
    z.avail_out = (uInt)cap;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    assert_int_equal(z.avail_in, 0); /* one member, nothing after it */
    size_t got = z.total_out;
    inflateEnd(&z);
    *out = b;
    return got;
}

/* A zstd frame (RFC 8878) of p[0..n) decoded with libzstd into *out (malloc). */
static size_t unzstd(const uint8_t *p, size_t n, uint8_t **out)
{
    assert_true(n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd);
    assert_int_equal(ZSTD_findFrameCompressedSize(p, n), n); /* one frame, nothing after it */
    size_t cap = 1 << 20;
    uint8_t *b = malloc(cap);
    assert_non_null(b);
    size_t got = ZSTD_decompress(b, cap, p, n);
    assert_false(ZSTD_isError(got));
    *out = b;
    return got;
}

/* Lines of about 60 bytes, numbered, some repeated words so compression has work; up to n
 * bytes, whole lines, into a malloc'd string (*len bytes). */
static char *make_lines(size_t n, size_t *len)
{
    char *b = malloc(n + 1);
    assert_non_null(b);
    size_t at = 0;
    for (unsigned i = 0;; i++) {
        char line[96];
        int k = snprintf(line, sizeof(line), "{\"seq\":%u,\"name\":\"station-%u\",\"v\":%u.%02u}\n",
                         i, i % 37, (i * 7919u) % 1000, i % 100);
        if (at + (size_t)k > n)
            break;
        memcpy(b + at, line, (size_t)k);
        at += (size_t)k;
    }
    b[at] = 0;
    *len = at;
    return b;
}

/* Writes the lines (without their "\n": the sink adds it) of text through s. */
static void write_lines(struct s3l_sink *s, const char *text)
{
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        assert_int_equal(s3l_sink_write(s, p, (size_t)(e - p), NULL), 0);
        p = e + 1;
    }
}

static struct s3l_sink *zsink(struct s3l_store *st, const char *prefix, uint64_t roll,
                              enum s3l_sink_compression c, bool restore)
{
    struct s3l_sink_options o = {.version = S3L_SINK_OPTIONS_VERSION,
                                 .store = st,
                                 .key_prefix = prefix,
                                 .rollover_bytes = roll,
                                 .compression = c,
                                 .restore = restore};
    struct s3l_sink *s = NULL;
    struct s3l_error err = {0};
    if (s3l_sink_open(&o, &s, &err) != 0)
        fail_msg("sink open: %s", err.message);
    return s;
}

/* gzip and zstd: each part is one member or frame named part-<n>.gz / .zst, its decompressed
 * bytes are the part's lines, and the parts in order are the input; rollover_bytes counts the
 * lines' bytes (20,000 of well-compressing lines roll at 8,192 uncompressed bytes: 3 parts, not
 * 1); stats count the lines' bytes. */
static void compressed_parts(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    size_t in_len = 0;
    char *in = make_lines(20000, &in_len);
    const struct {
        enum s3l_sink_compression c;
        const char *dir, *suffix;
    } cases[] = {{S3L_SINK_COMPRESSION_GZIP, "gz", ".gz"}, {S3L_SINK_COMPRESSION_ZSTD, "zs", ".zst"}};
    for (size_t i = 0; i < 2; i++) {
        struct s3l_sink *s = zsink(st, cases[i].dir, 8192, cases[i].c, false);
        assert_int_equal(s3l_sink_begin(s, 1, NULL), 0);
        write_lines(s, in);
        assert_int_equal(s3l_sink_close(s, NULL), 0);
        uint64_t recs, parts, bytes;
        s3l_sink_stats(s, &recs, &parts, &bytes);
        s3l_sink_free(s);
        assert_true(parts == 3 && bytes == in_len);
        assert_int_equal(count_dir(cases[i].dir), 3);
        size_t at = 0;
        for (int n = 0; n < 3; n++) {
            char rel[64];
            snprintf(rel, sizeof(rel), "%s/part-%d", cases[i].dir, n);
            size_t zl = 0;
            assert_null(read_all(rel, &zl)); /* no plain part beside the compressed one */
            strcat(rel, cases[i].suffix);
            uint8_t *z = read_all(rel, &zl);
            assert_non_null(z);
            uint8_t *plain = NULL;
            size_t pl = i == 0 ? gunzip(z, zl, &plain) : unzstd(z, zl, &plain);
            assert_true(zl < pl); /* compressed, not stored */
            assert_true(at + pl <= in_len);
            assert_memory_equal(plain, in + at, pl);
            assert_true(pl >= 8192 || n == 2); /* rolled at 8,192 bytes of lines */
            assert_int_equal(plain[pl - 1], '\n');
            at += pl;
            free(z);
            free(plain);
        }
        assert_int_equal(at, in_len);
    }
    free(in);
    /* The two-phase sink writes plain objects only; an unknown value is refused. */
    struct s3l_sink_options o = {.version = S3L_SINK_OPTIONS_VERSION,
                                 .store = st,
                                 .delivery = S3L_SINK_EXACTLY_ONCE,
                                 .compression = S3L_SINK_COMPRESSION_GZIP};
    struct s3l_sink *s = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_sink_open(&o, &s, &err), S3L_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "compression 'gzip'"));
    assert_null(s);
    o.delivery = S3L_SINK_AT_MOST_ONCE;
    o.compression = (enum s3l_sink_compression)9;
    assert_int_equal(s3l_sink_open(&o, &s, NULL), S3L_EINVALID_ARGUMENT);
    enum s3l_sink_compression c = S3L_SINK_COMPRESSION_GZIP;
    assert_int_equal(s3l_sink_compression_parse(NULL, &c, NULL), 0);
    assert_int_equal(c, S3L_SINK_COMPRESSION_NONE);
    assert_int_equal(s3l_sink_compression_parse("ZSTD", &c, NULL), 0);
    assert_int_equal(c, S3L_SINK_COMPRESSION_ZSTD);
    assert_int_equal(s3l_sink_compression_parse("gzip", &c, NULL), 0);
    assert_int_equal(c, S3L_SINK_COMPRESSION_GZIP);
    s3l_error_clear(&err);
    assert_int_equal(s3l_sink_compression_parse("bzip2", &c, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "'bzip2': expected none, gzip or zstd"));
    s3l_store_free(st);
    rm_root();
}

static void touch(const char *rel)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("x\n", f);
    fclose(f);
}

/* A restored run numbers after its own parts with or without a suffix (part-3, part-7.gz,
 * part-5.zst: next is 8), whatever its own compression; names that only look alike
 * (part-12.bz2, part-20.gzip, part-30.gz.tmp, part-x.gz) are not its parts. A fresh gzip run
 * never replaces part-0.gz: it takes the next free number. */
static void restore_mixed_suffixes(void **state)
{
    (void)state;
    struct s3l_store *st = open_store();
    struct s3l_sink *s = zsink(st, "m", 1, S3L_SINK_COMPRESSION_NONE, false);
    assert_int_equal(s3l_sink_begin(s, 1, NULL), 0);
    W(s, "first"); /* m/part-0 */
    s3l_sink_free(s);
    const char *others[] = {"m/part-3",     "m/part-7.gz",       "m/part-5.zst", "m/part-12.bz2",
                            "m/part-20.gzip", "m/part-30.gz.tmp", "m/part-x.gz"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(others); i++)
        touch(others[i]);
    s = zsink(st, "m", 1, S3L_SINK_COMPRESSION_ZSTD, true);
    assert_int_equal(s3l_sink_begin(s, 2, NULL), 0);
    W(s, "zstd after restore");
    s3l_sink_free(s);
    size_t zl = 0;
    uint8_t *z = read_all("m/part-8.zst", &zl);
    assert_non_null(z);
    uint8_t *plain = NULL;
    size_t pl = unzstd(z, zl, &plain);
    assert_int_equal(pl, strlen("zstd after restore\n"));
    assert_memory_equal(plain, "zstd after restore\n", pl);
    free(z);
    free(plain);
    s = zsink(st, "m", 1, S3L_SINK_COMPRESSION_NONE, true); /* restored plain: after 8.zst */
    assert_int_equal(s3l_sink_begin(s, 3, NULL), 0);
    W(s, "plain");
    s3l_sink_free(s);
    assert_string_equal(slurp("m/part-9"), "plain\n");
    s = zsink(st, "m", 1, S3L_SINK_COMPRESSION_GZIP, true);
    assert_int_equal(s3l_sink_begin(s, 4, NULL), 0);
    W(s, "gz");
    s3l_sink_free(s);
    z = read_all("m/part-10.gz", &zl);
    assert_non_null(z);
    pl = gunzip(z, zl, &plain);
    assert_int_equal(pl, 3);
    assert_memory_equal(plain, "gz\n", 3);
    free(z);
    free(plain);
    assert_int_equal(count_dir("m"), 11);
    /* Fresh gzip runs: part-0.gz is taken by the first, the second goes to part-1.gz; the
     * first's bytes stay. */
    for (int run = 0; run < 2; run++) {
        s = zsink(st, "f", 1, S3L_SINK_COMPRESSION_GZIP, false);
        assert_int_equal(s3l_sink_begin(s, 1, NULL), 0);
        W(s, run ? "second" : "first");
        s3l_sink_free(s);
    }
    const char *want[] = {"first\n", "second\n"};
    for (int n = 0; n < 2; n++) {
        char rel[32];
        snprintf(rel, sizeof(rel), "f/part-%d.gz", n);
        z = read_all(rel, &zl);
        assert_non_null(z);
        pl = gunzip(z, zl, &plain);
        assert_int_equal(pl, strlen(want[n]));
        assert_memory_equal(plain, want[n], pl);
        free(z);
        free(plain);
    }
    assert_int_equal(count_dir("f"), 2);
    s3l_store_free(st);
    rm_root();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lines_and_rollover), cmocka_unit_test(names_restore_and_no_replace),
        cmocka_unit_test(states_and_options), cmocka_unit_test(put_error_fails_the_sink),
        cmocka_unit_test(rollover_interval), cmocka_unit_test(compressed_parts),
        cmocka_unit_test(restore_mixed_suffixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
