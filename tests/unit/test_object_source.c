/*
 * Unit tests of the object source (src/lib/source/, include/s3l/object_source.h) on file://:
 *  - the order: part-2 before part-10; a two-phase sink's objects by subtask, run (its 13 digits
 *    of milliseconds apart from the 8 hex digits that follow: read as one number, a run whose hex
 *    begins with digits would sort after a later run whose hex begins with a letter) and
 *    checkpoint; a total order (antisymmetric, transitive) over a mixed list;
 *  - which keys are read: never _openetl/ (at any depth), never a folder placeholder;
 *  - every line of every object once, in that order, with gzip and zstd objects decompressed
 *    (made by the gzip and zstd commands, independent of our decoders);
 *  - a state taken mid-object resumes with a ranged GET at the recorded byte offset (seen by a
 *    wrapper store that records each GET's key and range), nothing read twice or lost; a
 *    compressed object resumes by its decompressed offset, re-reading its compressed bytes from
 *    0; every GET asks for at most chunk_bytes;
 *  - an object replaced since the state (another ETag) is refused, naming its key;
 *  - objects added after a finished state are the only ones read next;
 *  - a state that is not one this build wrote is refused (CORRUPT).
 * Expected lines are written by the test itself, not asked of the source.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "s3l/object_source.h"
#include "s3l/store.h"
#include "s3l/sys/store.h"
#include "util/util.h"

static char root[256];

/* ---- a store that records its GETs ------------------------------------------------------- */

#define MAX_GETS 4096
struct rec_store {
    struct s3l_store base;
    struct s3l_store *inner;
    size_t n_gets;
    char keys[MAX_GETS][64];
    uint64_t offsets[MAX_GETS], lens[MAX_GETS];
};

static struct rec_store *R(struct s3l_store *s)
{
    return (struct rec_store *)s;
}

static int rec_get(struct s3l_store *s, const char *key, uint64_t offset, uint64_t len,
                   size_t max, uint8_t **data, size_t *data_len, struct s3l_object_info *info,
                   struct s3l_error *err)
{
    struct rec_store *r = R(s);
    if (r->n_gets < MAX_GETS) {
        snprintf(r->keys[r->n_gets], sizeof(r->keys[0]), "%s", key);
        r->offsets[r->n_gets] = offset;
        r->lens[r->n_gets] = len;
        r->n_gets++;
    }
    return s3l_store_get(r->inner, key, offset, len, max, data, data_len, info, err);
}

static int rec_stat(struct s3l_store *s, const char *key, struct s3l_object_info *info,
                    struct s3l_error *err)
{
    return s3l_store_stat(R(s)->inner, key, info, err);
}

static int rec_list(struct s3l_store *s, const char *prefix, s3l_store_list_cb cb, void *ctx,
                    struct s3l_error *err)
{
    return s3l_store_list(R(s)->inner, prefix, cb, ctx, err);
}

static void rec_destroy(struct s3l_store *s)
{
    (void)s;
}

static const struct s3l_store_ops rec_ops = {
    .version = S3L_STORE_OPS_VERSION,
    .name = "recording",
    .get = rec_get,
    .stat = rec_stat,
    .list = rec_list,
    .destroy = rec_destroy,
};

static struct s3l_store *open_store(void)
{
    static int n;
    snprintf(root, sizeof(root), "/tmp/s3l-object-source-%d-%d", (int)getpid(), n++);
    char url[300];
    snprintf(url, sizeof(url), "file://%s", root);
    struct s3l_store_options o = {.version = S3L_STORE_OPTIONS_VERSION, .create = true};
    struct s3l_store *st = NULL;
    struct s3l_error err = {0};
    if (s3l_store_open(url, &o, &st, &err) != 0)
        fail_msg("open %s: %s", url, err.message);
    return st;
}

static void rec_init(struct rec_store *r, struct s3l_store *inner)
{
    memset(r, 0, sizeof(*r));
    r->base.ops = &rec_ops;
    r->inner = inner;
}

static void put(struct s3l_store *s, const char *key, const char *text)
{
    struct s3l_error err = {0};
    if (s3l_store_put(s, key, text, strlen(text), NULL, NULL, &err) != 0)
        fail_msg("put %s: %s", key, err.message);
}

/* Writes text to ROOT/key through a compressor command ("gzip -c", "zstd -q -c"). */
static void put_compressed(const char *key, const char *cmd, const char *text)
{
    char path[600], line[2048];
    snprintf(path, sizeof(path), "%s/%s.txt", root, key);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    snprintf(line, sizeof(line), "%s '%s' > '%s/%s' && rm '%s'", cmd, path, root, key, path);
    assert_int_equal(system(line), 0);
}

static void cleanup_root(void)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* Reads at most max lines ("key:line\n" each) into out; returns the source's last result. */
static int read_lines(struct s3l_object_source *src, size_t max, struct s3l_buf *out)
{
    for (size_t i = 0; i < max; i++) {
        struct s3l_object_line l;
        struct s3l_error err = {0};
        int rc = s3l_object_source_next(src, &l, &err);
        if (rc != 1) {
            if (rc < 0)
                print_message("next: %s\n", err.message);
            return rc;
        }
        s3l_buf_printf(out, "%s:%.*s\n", l.key, (int)l.len, l.data);
    }
    return 1;
}

static struct s3l_object_source *open_src(struct s3l_store *s, const char *state, size_t chunk)
{
    struct s3l_object_source_options o = {.version = S3L_OBJECT_SOURCE_OPTIONS_VERSION,
                                          .store = s,
                                          .chunk_bytes = chunk,
                                          .state = state,
                                          .state_len = state ? strlen(state) : 0};
    struct s3l_object_source *src = NULL;
    struct s3l_error err = {0};
    if (s3l_object_source_open(&o, &src, &err) != 0)
        fail_msg("open source: %s", err.message);
    return src;
}

static char *state_of(struct s3l_object_source *src)
{
    char *json = NULL;
    size_t len = 0;
    struct s3l_error err = {0};
    assert_int_equal(s3l_object_source_state(src, &json, &len, &err), 0);
    assert_int_equal(strlen(json), len);
    return json;
}

/* ---- the order ----------------------------------------------------------------------------- */

static int sign(int v)
{
    return (v > 0) - (v < 0);
}

static void order_numbers_and_runs(void **state)
{
    (void)state;
    assert_true(s3l_object_key_compare("part-2", "part-10") < 0);
    assert_true(s3l_object_key_compare("part-10", "part-2") > 0);
    assert_true(s3l_object_key_compare("sub1-part-9", "sub1-part-10") < 0);
    assert_true(s3l_object_key_compare("sub2-part-0", "sub10-part-0") < 0);
    assert_true(s3l_object_key_compare("part-007", "part-7") != 0);
    assert_int_equal(s3l_object_key_compare("part-7", "part-7"), 0);
    /* Run 1700000000000 (earlier), hex 12345678; run 1700000000001 (later), hex abcdef01. As one
     * digit run, "170000000000012345678" would be larger than "1700000000001". */
    const char *early = "ev/sub0-170000000000012345678-00000000000000000009.ndjson";
    const char *late = "ev/sub0-1700000000001abcdef01-00000000000000000001.ndjson";
    assert_true(s3l_object_key_compare(early, late) < 0);
    assert_true(s3l_object_key_compare(late, early) > 0);
    /* Within a run, checkpoint order; across subtasks, the subtask first. */
    assert_true(s3l_object_key_compare("sub0-1700000000000aaaaaaaa-00000000000000000002.ndjson",
                                       "sub0-1700000000000aaaaaaaa-00000000000000000010.ndjson") <
                0);
    assert_true(s3l_object_key_compare("sub1-1700000000009aaaaaaaa-00000000000000000002.ndjson",
                                       "sub2-1700000000000aaaaaaaa-00000000000000000001.ndjson") <
                0);
    const char *keys[] = {
        "part-10", "part-2", "part-1", "a", "a1", "a-", "part-010", "sub0-part-3", "x/y",
        early, late, "sub0-1700000000000aaaaaaaa-00000000000000000002.ndjson.gz", "b9z", "b10",
        "sub12-1699999999999ffffffff-00000000000000000000.ndjson", "Z", "part-2.gz",
    };
    size_t n = sizeof(keys) / sizeof(*keys);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int ij = s3l_object_key_compare(keys[i], keys[j]);
            assert_int_equal(sign(ij), -sign(s3l_object_key_compare(keys[j], keys[i])));
            assert_int_equal(ij == 0, strcmp(keys[i], keys[j]) == 0);
            for (size_t k = 0; k < n; k++)
                if (ij < 0 && s3l_object_key_compare(keys[j], keys[k]) < 0)
                    assert_true(s3l_object_key_compare(keys[i], keys[k]) < 0);
        }
}

static void readable_keys(void **state)
{
    (void)state;
    assert_false(s3l_object_key_readable("_openetl/checkpoints/p.json"));
    assert_false(s3l_object_key_readable("t/_openetl/staging/x"));
    assert_false(s3l_object_key_readable("_openetl"));
    assert_false(s3l_object_key_readable("logs/"));
    assert_true(s3l_object_key_readable("_openetlx/part-0"));
    assert_true(s3l_object_key_readable("a/my_openetl/part-0"));
    assert_true(s3l_object_key_readable("part-0"));
}

/* ---- reading ------------------------------------------------------------------------------- */

/* part-0 .. part-10 with 3 lines each (part-3 gzip, part-4 zstd), two sub objects, and
 * metadata under _openetl/ that must never be read. Returns the expected output. */
static void fill(struct s3l_store *s, struct s3l_buf *want)
{
    char key[64], text[512];
    for (int p = 0; p <= 10; p++) {
        text[0] = 0;
        for (int l = 0; l < 3; l++) {
            char line[64];
            snprintf(line, sizeof(line), "{\"part\":%d,\"line\":%d}\n", p, l);
            strcat(text, line);
        }
        snprintf(key, sizeof(key), "part-%d%s", p, p == 3 ? ".gz" : p == 4 ? ".zst" : "");
        if (p == 3)
            put_compressed(key, "gzip -c", text);
        else if (p == 4)
            put_compressed(key, "zstd -q -c", text);
        else
            put(s, key, text);
        for (int l = 0; l < 3; l++)
            s3l_buf_printf(want, "%s:{\"part\":%d,\"line\":%d}\n", key, p, l);
    }
    const char *late = "sub0-1700000000001abcdef01-00000000000000000001.ndjson";
    const char *early = "sub0-170000000000012345678-00000000000000000009.ndjson";
    put(s, late, "{\"run\":\"late\"}\n\n");
    put(s, early, "{\"run\":\"early\"}\r\n");
    s3l_buf_printf(want, "%s:{\"run\":\"early\"}\n%s:{\"run\":\"late\"}\n", early, late);
    put(s, "_openetl/checkpoints/p.json", "{\"never\":1}\n");
    put(s, "t/_openetl/markers/m.json", "{\"never\":2}\n");
}

static void reads_every_line_in_order(void **state)
{
    (void)state;
    struct s3l_store *s = open_store();
    struct s3l_buf want, got;
    s3l_buf_init(&want, 1 << 20);
    s3l_buf_init(&got, 1 << 20);
    fill(s, &want);
    struct s3l_object_source *src = open_src(s, NULL, 0);
    assert_int_equal(s3l_object_source_count(src), 13);
    assert_int_equal(read_lines(src, 1000, &got), 0);
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.ptr, want.ptr, want.len);
    /* The finished state lists every object as done and none in progress. */
    char *st = state_of(src);
    assert_non_null(strstr(st, "\"current\":null"));
    assert_non_null(strstr(st, "\"part-10\""));
    s3l_object_source_free(src);
    /* Objects added later, also ones that sort before the read ones, are all that come next. */
    put(s, "part-11", "{\"new\":11}\n");
    put(s, "part-0a", "{\"new\":0}\n");
    src = open_src(s, st, 0);
    s3l_buf_reset(&got);
    assert_int_equal(read_lines(src, 1000, &got), 0);
    const char *added = "part-0a:{\"new\":0}\npart-11:{\"new\":11}\n";
    assert_int_equal(got.len, strlen(added));
    assert_memory_equal(got.ptr, added, got.len);
    s3l_object_source_free(src);
    s3l_free(st);
    s3l_buf_free(&want);
    s3l_buf_free(&got);
    s3l_store_free(s);
    cleanup_root();
}

/* A big object (chunk 4 KiB): a state after k lines, then a new source from it. */
static void resumes_mid_object_with_a_ranged_get(void **state)
{
    (void)state;
    struct s3l_store *s = open_store();
    struct s3l_buf text, want, got;
    s3l_buf_init(&text, 1 << 20);
    s3l_buf_init(&want, 1 << 20);
    s3l_buf_init(&got, 1 << 20);
    put(s, "part-0", "{\"first\":true}\n");
    for (int i = 0; i < 3000; i++)
        s3l_buf_printf(&text, "{\"i\":\"%04d\",\"pad\":\"%040d\"}\n", i, i);
    s3l_buf_append_byte(&text, 0);
    put(s, "part-1", (const char *)text.ptr);
    s3l_buf_printf(&want, "part-0:{\"first\":true}\n");
    for (int i = 0; i < 3000; i++)
        s3l_buf_printf(&want, "part-1:{\"i\":\"%04d\",\"pad\":\"%040d\"}\n", i, i);

    struct rec_store rec;
    rec_init(&rec, s);
    struct s3l_object_source *src = open_src(&rec.base, NULL, 4096);
    assert_int_equal(read_lines(src, 1 + 1234, &got), 1);
    char *st = state_of(src);
    s3l_object_source_free(src);
    for (size_t i = 0; i < rec.n_gets; i++)
        assert_true(rec.lens[i] <= 4096); /* memory: a chunk per GET, not the object */
    /* The offset recorded: just after line 1234 of part-1 (every line the same length). */
    uint64_t line_len = strlen("{\"i\":\"0000\",\"pad\":\"0000000000000000000000000000000000000000\"}\n");
    uint64_t off = 1234 * line_len;
    char needle[64];
    snprintf(needle, sizeof(needle), "\"offset\":%llu", (unsigned long long)off);
    assert_non_null(strstr(st, needle));
    assert_non_null(strstr(st, "\"key\":\"part-1\""));

    rec_init(&rec, s);
    src = open_src(&rec.base, st, 4096);
    assert_int_equal(read_lines(src, 100000, &got), 0);
    s3l_object_source_free(src);
    assert_true(rec.n_gets > 0);
    assert_string_equal(rec.keys[0], "part-1");
    assert_int_equal(rec.offsets[0], off); /* the resumed GET starts at the recorded offset */
    assert_int_equal(got.len, want.len);   /* every line once: none lost, none twice */
    assert_memory_equal(got.ptr, want.ptr, want.len);
    s3l_free(st);
    s3l_buf_free(&text);
    s3l_buf_free(&want);
    s3l_buf_free(&got);
    s3l_store_free(s);
    cleanup_root();
}

static void resumes_a_compressed_object_by_its_decompressed_offset(void **state)
{
    (void)state;
    struct s3l_store *s = open_store();
    struct s3l_buf text, want, got;
    s3l_buf_init(&text, 1 << 20);
    s3l_buf_init(&want, 1 << 20);
    s3l_buf_init(&got, 1 << 20);
    for (int i = 0; i < 2000; i++) {
        s3l_buf_printf(&text, "{\"z\":%d}\n", i);
        s3l_buf_printf(&want, "part-0.gz:{\"z\":%d}\n", i);
    }
    s3l_buf_append_byte(&text, 0);
    put_compressed("part-0.gz", "gzip -c", (const char *)text.ptr);
    struct s3l_object_source *src = open_src(s, NULL, 4096);
    assert_int_equal(read_lines(src, 777, &got), 1);
    char *st = state_of(src);
    s3l_object_source_free(src);
    struct rec_store rec;
    rec_init(&rec, s);
    src = open_src(&rec.base, st, 4096);
    assert_int_equal(read_lines(src, 100000, &got), 0);
    s3l_object_source_free(src);
    assert_true(rec.n_gets > 0);
    assert_string_equal(rec.keys[0], "part-0.gz");
    assert_int_equal(rec.offsets[0], 0); /* compressed: re-read from its first byte */
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.ptr, want.ptr, want.len);
    s3l_free(st);
    s3l_buf_free(&text);
    s3l_buf_free(&want);
    s3l_buf_free(&got);
    s3l_store_free(s);
    cleanup_root();
}

static void a_replaced_object_is_refused(void **state)
{
    (void)state;
    struct s3l_store *s = open_store();
    put(s, "logs/part-0", "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n");
    struct s3l_object_source *src = open_src(s, NULL, 0);
    struct s3l_buf got;
    s3l_buf_init(&got, 1 << 20);
    assert_int_equal(read_lines(src, 2, &got), 1);
    char *st = state_of(src);
    s3l_object_source_free(src);
    put(s, "logs/part-0", "{\"b\":1}\n{\"b\":2}\n{\"b\":3}\n"); /* same size, other bytes */
    struct s3l_object_source_options o = {.version = S3L_OBJECT_SOURCE_OPTIONS_VERSION,
                                          .store = s,
                                          .state = st,
                                          .state_len = strlen(st)};
    struct s3l_error err = {0};
    src = NULL;
    assert_int_equal(s3l_object_source_open(&o, &src, &err), S3L_ECONFLICT);
    assert_null(src);
    assert_non_null(strstr(err.message, "logs/part-0"));
    assert_non_null(strstr(err.message, "replaced"));
    /* Gone altogether: refused as well, naming it. */
    struct s3l_error e2 = {0};
    assert_int_equal(s3l_store_remove(s, "logs/part-0", &e2), 0);
    memset(&err, 0, sizeof(err));
    assert_int_equal(s3l_object_source_open(&o, &src, &err), S3L_ECONFLICT);
    assert_non_null(strstr(err.message, "logs/part-0"));
    s3l_free(st);
    s3l_buf_free(&got);
    s3l_store_free(s);
    cleanup_root();
}

static void foreign_states_are_refused(void **state)
{
    (void)state;
    struct s3l_store *s = open_store();
    const char *bad[] = {
        "not json",
        "[]",
        "{\"version\":2,\"done\":[],\"current\":null}",
        "{\"version\":1,\"done\":[\"b\",\"a\"],\"current\":null}",
        "{\"version\":1,\"done\":[\"../x\"],\"current\":null}",
        "{\"version\":1,\"done\":[],\"current\":{\"key\":\"a\",\"etag\":\"e\",\"offset\":-1,"
        "\"line\":1}}",
        "{\"version\":1,\"done\":[]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        struct s3l_object_source_options o = {.version = S3L_OBJECT_SOURCE_OPTIONS_VERSION,
                                              .store = s,
                                              .state = bad[i],
                                              .state_len = strlen(bad[i])};
        struct s3l_object_source *src = NULL;
        struct s3l_error err = {0};
        assert_int_equal(s3l_object_source_open(&o, &src, &err), S3L_ECORRUPT);
        assert_null(src);
        assert_non_null(strstr(err.message, "object source state"));
    }
    s3l_store_free(s);
    cleanup_root();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(order_numbers_and_runs),
        cmocka_unit_test(readable_keys),
        cmocka_unit_test(reads_every_line_in_order),
        cmocka_unit_test(resumes_mid_object_with_a_ranged_get),
        cmocka_unit_test(resumes_a_compressed_object_by_its_decompressed_offset),
        cmocka_unit_test(a_replaced_object_is_refused),
        cmocka_unit_test(foreign_states_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
