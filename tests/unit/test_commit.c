/*
 * Unit tests of the table destination with the test file format: the exact layout of issue 3 item 6
 * (names and %020 padding written out by hand here), the checkpoint and marker contents, the
 * generation bump and fencing, empty epochs, file rollover and lanes, dead letters, schema
 * records and drift, gc, refused dispositions, and the fault model: fail every store operation
 * from k on, for every k, then recover and compare what readers see with the model.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "commit/commit.h"
#include "os/os.h"
#include "s3l/sys/store.h"
#include "crash_store.h"
#include "model_runner.h"
#include "s3l/destination.h"
#include "s3l/store.h"
#include "schema/schema_int.h"
#include "test_format.h"
#include "util/util.h"

#define PIPE "p1"

struct fx {
    char dir[64];
    char url[96];
    struct s3l_store *s;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "%s/s3l-commit-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->url, sizeof(f->url), "file://%s", f->dir);
    struct s3l_error err = {0};
    if (s3l_store_open(f->url, NULL, &f->s, &err) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    s3l_store_free(f->s);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
    int rc = system(cmd);
    free(f);
    return rc;
}

static struct s3l_field fields[] = {
    {"id", {.id = S3L_TYPE_INT64}, false, true},
    {"name", {.id = S3L_TYPE_UTF8}, true, false},
};
static const struct s3l_schema schema2 = {2, fields};

/* Serial commits: these tests look at the store right after each commit (the pipelined commit
 * has its own tests, pipelined_*). */
static struct s3l_dest *open_dest(struct fx *f, unsigned lanes, uint64_t file_size)
{
    struct s3l_dest_options o = {0};
    o.version = S3L_DEST_OPTIONS_VERSION;
    o.pipeline_id = PIPE;
    o.lanes = lanes;
    o.file_size = file_size;
    o.serial_commit = true;
    struct s3l__dest_format c;
    s3l_test_format(&c);
    struct s3l_dest *d = NULL;
    struct s3l_error err = {0};
    int rc = s3l__dest_open_format(f->s, &o, &c, &d, &err);
    if (rc)
        fail_msg("open: %s", err.message);
    return d;
}

static void put_row(struct s3l_row_sink *k, int64_t id, const char *name)
{
    struct s3l_error err = {0};
    assert_int_equal(k->ops->row_begin(k->ctx), 0);
    assert_int_equal(k->ops->put_int(k->ctx, id), 0);
    if (name)
        k->ops->put_bytes(k->ctx, name, strlen(name));
    else
        k->ops->put_null(k->ctx);
    int rc = k->ops->row_end(k->ctx, &err);
    if (name && strcmp(name, "BAD") == 0)
        assert_int_equal(rc, S3L_EINVALID_INPUT);
    else
        assert_int_equal(rc, 0);
}

static char *get_text(struct fx *f, const char *key)
{
    uint8_t *p = NULL;
    size_t n;
    struct s3l_error err = {0};
    if (s3l_store_get(f->s, key, 0, UINT64_MAX, 1 << 24, &p, &n, NULL, &err))
        return NULL;
    return (char *)p;
}

static bool exists(struct fx *f, const char *key)
{
    struct s3l_object_info info;
    return s3l_store_stat(f->s, key, &info, NULL) == 0;
}

/*
 * The checkpoint codec with and without the pending epoch's "schemas" (issue 10 item 14): a
 * checkpoint written before the field decodes with no record and encodes to the same bytes; one
 * with records (with and without an ETag) round-trips; a malformed entry is S3L_ECORRUPT.
 */
static void checkpoint_codec_schemas(void **state)
{
    (void)state;
    const char *old = "{\"version\":1,\"pipeline\":\"p\",\"generation\":2,\"committed_epoch\":1,"
                      "\"pending\":{\"epoch\":2,\"generation\":2,\"files\":[{\"table\":\"t\",\"kind\":"
                      "\"data\",\"staged\":\"s/a\",\"final\":\"t/a\",\"size\":3,\"rows\":1,\"sha256\":"
                      "\"0000000000000000000000000000000000000000000000000000000000000000\"}]},"
                      "\"state\":null}";
    struct s3l__ckpt c = {0};
    struct s3l_error err = {0};
    assert_int_equal(s3l__ckpt_decode(old, strlen(old), "k", &c, &err), 0);
    assert_true(c.has_pending);
    assert_int_equal(c.n_schemas, 0);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(s3l__ckpt_encode(&c, &text, &len, &err), 0);
    assert_string_equal(text, old);
    s3l_free(text);
    c.schemas = s3l_calloc(2, sizeof(*c.schemas));
    c.n_schemas = 2;
    c.schemas[0].table = s3l_strdup("t");
    c.schemas[0].record = s3l_strdup("{\"columns\":[{\"name\":\"id\",\"type\":5}]}");
    c.schemas[1].table = s3l_strdup("ns/u");
    c.schemas[1].record = s3l_strdup("{\"columns\":[]}");
    c.schemas[1].etag = s3l_strdup("\"abc-1\"");
    assert_int_equal(s3l__ckpt_encode(&c, &text, &len, &err), 0);
    /* The record is carried as its text (a JSON string), so recovery writes the same bytes. */
    assert_non_null(strstr(text, ",\"schemas\":[{\"table\":\"t\",\"record\":\"{\\\"columns\\\":[{"
                                 "\\\"name\\\":\\\"id\\\",\\\"type\\\":5}]}\"},{\"table\":\"ns/u\","
                                 "\"record\":\"{\\\"columns\\\":[]}\",\"etag\":\"\\\"abc-1\\\"\"}]}"));
    struct s3l__ckpt back = {0};
    assert_int_equal(s3l__ckpt_decode(text, len, "k", &back, &err), 0);
    assert_int_equal(back.n_schemas, 2);
    assert_string_equal(back.schemas[0].table, "t");
    assert_string_equal(back.schemas[0].record, c.schemas[0].record);
    assert_null(back.schemas[0].etag);
    assert_string_equal(back.schemas[1].table, "ns/u");
    assert_string_equal(back.schemas[1].record, "{\"columns\":[]}");
    assert_string_equal(back.schemas[1].etag, "\"abc-1\"");
    char *again = NULL;
    assert_int_equal(s3l__ckpt_encode(&back, &again, &len, &err), 0);
    assert_string_equal(again, text);
    s3l_free(again);
    s3l_free(text);
    s3l__ckpt_cleanup(&back);
    s3l__ckpt_cleanup(&c);
    const char *bad = "{\"version\":1,\"pipeline\":\"p\",\"generation\":2,\"committed_epoch\":1,"
                      "\"pending\":{\"epoch\":2,\"generation\":2,\"files\":[],\"schemas\":[{\"table\":"
                      "\"t\",\"record\":\"not an object\"}]},\"state\":null}";
    assert_int_equal(s3l__ckpt_decode(bad, strlen(bad), "k", &back, &err), S3L_ECORRUPT);
    s3l__ckpt_cleanup(&back);
    const char *bad2 = "{\"version\":1,\"pipeline\":\"p\",\"generation\":2,\"committed_epoch\":1,"
                       "\"pending\":{\"epoch\":2,\"generation\":2,\"files\":[],\"schemas\":[{\"table\":"
                       "\"t\",\"record\":{\"columns\":[]}}]},\"state\":null}";
    assert_int_equal(s3l__ckpt_decode(bad2, strlen(bad2), "k", &back, &err), S3L_ECORRUPT);
    s3l__ckpt_cleanup(&back);
}

/*
 * The checkpoint's optional "commit_interval_ms" (issue 10 item 12): a checkpoint without it
 * decodes with none and re-encodes to its own bytes; one with it round-trips, the field last; a
 * negative or non-integer value is S3L_ECORRUPT.
 */
static void checkpoint_codec_commit_interval(void **state)
{
    (void)state;
    const char *old = "{\"version\":1,\"pipeline\":\"p\",\"generation\":2,\"committed_epoch\":1,"
                      "\"pending\":null,\"state\":null}";
    struct s3l__ckpt c = {0};
    struct s3l_error err = {0};
    assert_int_equal(s3l__ckpt_decode(old, strlen(old), "k", &c, &err), 0);
    assert_false(c.has_interval);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(s3l__ckpt_encode(&c, &text, &len, &err), 0);
    assert_string_equal(text, old);
    s3l_free(text);
    c.has_interval = true;
    c.commit_interval_ms = 1500;
    assert_int_equal(s3l__ckpt_encode(&c, &text, &len, &err), 0);
    assert_string_equal(text, "{\"version\":1,\"pipeline\":\"p\",\"generation\":2,\"committed_epoch\""
                              ":1,\"pending\":null,\"state\":null,\"commit_interval_ms\":1500}");
    struct s3l__ckpt back = {0};
    assert_int_equal(s3l__ckpt_decode(text, len, "k", &back, &err), 0);
    assert_true(back.has_interval);
    assert_int_equal(back.commit_interval_ms, 1500);
    s3l_free(text);
    s3l__ckpt_cleanup(&back);
    s3l__ckpt_cleanup(&c);
    const char *bads[] = {
        "{\"version\":1,\"pipeline\":\"p\",\"generation\":2,\"committed_epoch\":1,\"pending\":null,"
        "\"state\":null,\"commit_interval_ms\":-1}",
        "{\"version\":1,\"pipeline\":\"p\",\"generation\":2,\"committed_epoch\":1,\"pending\":null,"
        "\"state\":null,\"commit_interval_ms\":\"60s\"}",
    };
    for (size_t i = 0; i < 2; i++) {
        s3l_error_clear(&err);
        assert_int_equal(s3l__ckpt_decode(bads[i], strlen(bads[i]), "k", &back, &err), S3L_ECORRUPT);
        assert_non_null(strstr(err.message, "commit_interval_ms"));
        s3l__ckpt_cleanup(&back);
    }
}

/*
 * The writer's token ("writer", last): a checkpoint without it decodes to "" and re-encodes to its
 * own bytes; one with it round-trips; two draws differ (32 lowercase hex digits); anything but 32
 * hex digits is S3L_ECORRUPT. A claim writes the token it drew (claim.c).
 */
static void checkpoint_codec_writer(void **state)
{
    struct fx *f = *state;
    const char *old = "{\"version\":1,\"pipeline\":\"p\",\"generation\":2,\"committed_epoch\":1,"
                      "\"pending\":null,\"state\":null}";
    struct s3l__ckpt c = {0}, back = {0};
    struct s3l_error err = {0};
    assert_int_equal(s3l__ckpt_decode(old, strlen(old), "k", &c, &err), 0);
    assert_string_equal(c.writer, "");
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(s3l__ckpt_encode(&c, &text, &len, &err), 0);
    assert_string_equal(text, old);
    s3l_free(text);
    assert_int_equal(s3l__ckpt_new_writer(&c, &err), 0);
    char first[33];
    memcpy(first, c.writer, sizeof(first));
    assert_int_equal(strlen(first), 32);
    assert_int_equal(strspn(first, "0123456789abcdef"), 32);
    assert_int_equal(s3l__ckpt_new_writer(&c, &err), 0);
    assert_string_not_equal(first, c.writer);
    assert_int_equal(s3l__ckpt_encode(&c, &text, &len, &err), 0);
    char want[256];
    snprintf(want, sizeof(want), "{\"version\":1,\"pipeline\":\"p\",\"generation\":2,"
             "\"committed_epoch\":1,\"pending\":null,\"state\":null,\"writer\":\"%s\"}", c.writer);
    assert_string_equal(text, want);
    assert_int_equal(s3l__ckpt_decode(text, len, "k", &back, &err), 0);
    assert_string_equal(back.writer, c.writer);
    s3l_free(text);
    s3l__ckpt_cleanup(&back);
    s3l__ckpt_cleanup(&c);
    const char *bads[] = {"\"abc\"", "12", "\"0123456789ABCDEF0123456789abcdef\"",
                          "\"0123456789abcdef0123456789abcdefa\""};
    for (size_t i = 0; i < 4; i++) {
        snprintf(want, sizeof(want), "{\"version\":1,\"pipeline\":\"p\",\"generation\":2,"
                 "\"committed_epoch\":1,\"pending\":null,\"state\":null,\"writer\":%s}", bads[i]);
        s3l_error_clear(&err);
        assert_int_equal(s3l__ckpt_decode(want, strlen(want), "k", &back, &err), S3L_ECORRUPT);
        assert_non_null(strstr(err.message, "writer"));
        s3l__ckpt_cleanup(&back);
    }
    /* A claim writes its token: the checkpoint on the store carries 32 hex digits. */
    struct s3l_dest *d = open_dest(f, 1, 0);
    struct s3l_dest_stream *st;
    assert_int_equal(s3l_dest_stream(d, NULL, "w", &schema2, &st, &err), 0);
    struct s3l_row_sink k;
    assert_int_equal(s3l_dest_lane_sink(st, 0, &k), 0);
    put_row(&k, 1, "one");
    assert_int_equal(s3l_dest_commit(d, "{}", NULL, &err), 0);
    s3l_dest_free(d);
    char *ck = get_text(f, "_openetl/checkpoints/p1.json");
    assert_non_null(ck);
    const char *w = strstr(ck, "\"writer\":\"");
    assert_non_null(w);
    assert_int_equal(strspn(w + 10, "0123456789abcdef"), 32);
    assert_int_equal(w[42], '"');
    s3l_free(ck);
}

/* A writer with commit interval ms that claims its generation, stages `key` and dies. */
static void claim_and_die(struct fx *f, uint64_t ms, uint64_t gen, const char *name)
{
    struct s3l_dest_options o = {0};
    o.version = S3L_DEST_OPTIONS_VERSION;
    o.pipeline_id = PIPE;
    o.has_commit_interval = true;
    o.commit_interval_ms = ms;
    struct s3l__dest_format c;
    s3l_test_format(&c);
    struct s3l_dest *d = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l__dest_open_format(f->s, &o, &c, &d, &err), 0);
    assert_int_equal(s3l__dest_claim(d, &err), 0);
    assert_int_equal(s3l_dest_generation(d), gen);
    char *key = s3l__key_staged(PIPE, gen, "t", name);
    assert_int_equal(s3l_store_put(f->s, key, "x", 1, NULL, NULL, &err), 0);
    s3l_free(key);
    s3l_dest_free(d);
}

/*
 * s3l_dest_gc_pipeline's liveness rule (issue 10 item 12): a fresh checkpoint is not claimed and
 * its generation's staged file is kept (the report says live, with the recorded interval); with
 * force it is claimed and the file removed; a checkpoint older than twice its interval is claimed
 * without force; an interval of 0 never looks dead; a live pipeline still loses what an older
 * generation staged. Each checked on the store (keys listed, checkpoint read back).
 */
static void gc_claims_only_dead_pipelines(void **state)
{
    struct fx *f = *state;
    struct s3l_error err = {0};
    struct s3l_dest_gc_report r;
    claim_and_die(f, 3600000, 1, "a.x");
    char *a = s3l__key_staged(PIPE, 1, "t", "a.x");
    assert_int_equal(s3l_dest_gc_pipeline(f->s, PIPE, false, &r, &err), 0);
    assert_true(r.exists && r.live && r.interval_recorded && !r.claimed);
    assert_int_equal(r.interval_ms, 3600000);
    assert_int_equal(r.removed, 0);
    assert_int_equal(r.generation, 1);
    assert_true(exists(f, a));
    assert_true(r.now_ns - r.updated_ns < 60000000000LL && r.updated_ns > 0);
    assert_int_equal(s3l_dest_gc_pipeline(f->s, PIPE, true, &r, &err), 0);
    assert_true(r.claimed && r.forced);
    assert_int_equal(r.removed, 1);
    assert_int_equal(r.generation, 2);
    assert_false(exists(f, a));
    struct s3l__ckpt ck;
    assert_int_equal(s3l__ckpt_read(f->s, PIPE, &ck, &err), 0);
    assert_int_equal(ck.generation, 2);
    assert_true(ck.has_interval); /* gc keeps the writer's interval */
    assert_int_equal(ck.commit_interval_ms, 3600000);
    s3l__ckpt_cleanup(&ck);
    /* A writer of 1 ms, dead 20 ms later: claimed without force. */
    claim_and_die(f, 1, 3, "b.x");
    char *b = s3l__key_staged(PIPE, 3, "t", "b.x");
    usleep(20000);
    assert_int_equal(s3l_dest_gc_pipeline(f->s, PIPE, false, &r, &err), 0);
    assert_true(r.claimed && !r.forced && !r.live);
    assert_int_equal(r.removed, 1);
    assert_int_equal(r.generation, 4);
    assert_false(exists(f, b));
    /* By rows only: never dead; but generation 4's leftover (below the live 5) goes. */
    char *c4 = s3l__key_staged(PIPE, 4, "t", "c.x");
    assert_int_equal(s3l_store_put(f->s, c4, "x", 1, NULL, NULL, &err), 0);
    claim_and_die(f, 0, 5, "d.x");
    char *d5 = s3l__key_staged(PIPE, 5, "t", "d.x");
    usleep(20000);
    assert_int_equal(s3l_dest_gc_pipeline(f->s, PIPE, false, &r, &err), 0);
    assert_true(r.live && !r.claimed);
    assert_int_equal(r.interval_ms, 0);
    assert_int_equal(r.removed, 1);
    assert_false(exists(f, c4));
    assert_true(exists(f, d5));
    /* No checkpoint: nothing claimed, none created. */
    assert_int_equal(s3l_dest_gc_pipeline(f->s, "nobody", false, &r, &err), 0);
    assert_false(r.exists || r.claimed);
    assert_false(exists(f, "_openetl/checkpoints/nobody.json"));
    s3l_free(a);
    s3l_free(b);
    s3l_free(c4);
    s3l_free(d5);
}

static void layout_checkpoint_and_marker(void **state)
{
    struct fx *f = *state;
    struct s3l_dest *d = open_dest(f, 2, 0);
    assert_int_equal(s3l_dest_generation(d), 1);
    assert_int_equal(s3l_dest_committed_epoch(d), 0);
    assert_null(s3l_dest_state(d));
    struct s3l_dest_stream *st;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_stream(d, "ns", "orders", &schema2, &st, &err), 0);
    struct s3l_row_sink l0, l1;
    assert_int_equal(s3l_dest_lane_sink(st, 0, &l0), 0);
    assert_int_equal(s3l_dest_lane_sink(st, 1, &l1), 0);
    assert_int_equal(s3l_dest_lane_sink(st, 2, &l1), S3L_EINVALID_ARGUMENT);
    assert_int_equal(s3l_dest_lane_sink(st, 1, &l1), 0);
    put_row(&l0, 1, "a");
    put_row(&l0, 2, NULL);
    put_row(&l0, 3, "BAD"); /* refused row: dropped, the lane goes on */
    put_row(&l1, 4, "d");
    struct s3l_dest_commit_info ci;
    assert_int_equal(s3l_dest_commit(d, "{\"input\": {\"offset\": 42}}", &ci, &err), 0);
    assert_int_equal(ci.epoch, 1);
    assert_int_equal(ci.files, 2);
    assert_int_equal(ci.rows, 3);
    /* The names of issue 3 item 6, written out by hand. */
    const char *k0 = "ns/orders/p1-00000000000000000001-g00000000000000000001-00000.parquet";
    const char *k1 = "ns/orders/p1-00000000000000000001-g00000000000000000001-00001-00000.parquet";
    char *t0 = get_text(f, k0), *t1 = get_text(f, k1);
    assert_non_null(t0);
    assert_non_null(t1);
    assert_string_equal(t0, "TESTFMT\n1,a\n2,N\nEND rows=2\n");
    assert_string_equal(t1, "TESTFMT\n4,d\nEND rows=1\n");
    /* Staged copies are deleted after the commit. */
    assert_false(exists(f, "_openetl/staging/p1/g00000000000000000001/ns/orders/"
                           "p1-00000000000000000001-g00000000000000000001-00000.parquet"));
    char *m = get_text(f, "_openetl/markers/ns/orders/p1-00000000000000000001.json");
    assert_non_null(m);
    json_t *mj = json_loads(m, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(mj, "pipeline")), "p1");
    assert_int_equal(json_integer_value(json_object_get(mj, "epoch")), 1);
    assert_int_equal(json_integer_value(json_object_get(mj, "generation")), 1);
    assert_int_equal(json_integer_value(json_object_get(mj, "rows")), 3);
    json_t *files = json_object_get(mj, "files");
    assert_int_equal(json_array_size(files), 2);
    json_t *f0 = json_array_get(files, 0);
    assert_string_equal(json_string_value(json_object_get(f0, "key")), k0);
    assert_int_equal(json_integer_value(json_object_get(f0, "size")), strlen(t0));
    assert_int_equal(json_integer_value(json_object_get(f0, "rows")), 2);
    /* sha256sum of the file, computed by coreutils, not by us. */
    char cmd[256], sum[80] = {0};
    snprintf(cmd, sizeof(cmd), "sha256sum '%s/%s'", f->dir, k0);
    FILE *p = popen(cmd, "r");
    assert_non_null(fgets(sum, sizeof(sum), p));
    pclose(p);
    assert_memory_equal(sum, json_string_value(json_object_get(f0, "sha256")), 64);
    json_decref(mj);
    char *ck = get_text(f, "_openetl/checkpoints/p1.json");
    json_t *cj = json_loads(ck, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(cj, "generation")), 1);
    assert_int_equal(json_integer_value(json_object_get(cj, "committed_epoch")), 1);
    assert_true(json_is_null(json_object_get(cj, "pending")));
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(json_object_get(cj, "state"), "input"), "offset")),
                     42);
    json_decref(cj);
    s3l_free(ck);
    s3l_free(m);
    s3l_free(t0);
    s3l_free(t1);
    /* A lane whose every row was refused writes no file either. */
    put_row(&l1, 5, "BAD");
    /* An epoch without rows: no file, no marker, the state still moves. */
    assert_int_equal(s3l_dest_commit(d, "{\"input\": {\"offset\": 50}}", &ci, &err), 0);
    assert_int_equal(ci.epoch, 0);
    assert_false(exists(f, "_openetl/markers/ns/orders/p1-00000000000000000002.json"));
    s3l_dest_free(d);
    /* Reopening bumps the generation and hands the state back. */
    d = open_dest(f, 2, 0);
    assert_int_equal(s3l_dest_generation(d), 2);
    assert_int_equal(s3l_dest_committed_epoch(d), 1);
    assert_string_equal(s3l_dest_state(d), "{\"input\":{\"offset\":50}}");
    s3l_dest_free(d);
}

static int count_files(void *ctx, const struct s3l_object_info *info, bool committed)
{
    (void)info;
    if (committed)
        (*(int *)ctx)++;
    return 0;
}

static void rollover_and_listing(void **state)
{
    struct fx *f = *state;
    struct s3l_dest *d = open_dest(f, 1, 30); /* tiny files: a few rows each */
    struct s3l_dest_stream *st;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_stream(d, NULL, "t", &schema2, &st, &err), 0);
    struct s3l_row_sink k;
    s3l_dest_lane_sink(st, 0, &k);
    for (int i = 0; i < 10; i++)
        put_row(&k, i, "xxxx");
    struct s3l_dest_commit_info ci;
    assert_int_equal(s3l_dest_commit(d, NULL, &ci, &err), 0);
    assert_true(ci.files >= 3);
    assert_true(exists(f, "t/p1-00000000000000000001-g00000000000000000001-00000.parquet"));
    assert_true(exists(f, "t/p1-00000000000000000001-g00000000000000000001-00001.parquet"));
    int n = 0;
    assert_int_equal(s3l_dest_list_files(f->s, "t", true, count_files, &n, &err), 0);
    assert_int_equal(n, (int)ci.files);
    s3l_dest_free(d);
}

static void fencing_stops_a_zombie(void **state)
{
    struct fx *f = *state;
    struct s3l_error err = {0};
    /* The old writer has claimed generation 1 and staged; a new one claims 2 and recovers. */
    struct s3l_dest *old = open_dest(f, 1, 0);
    struct s3l_dest_stream *st;
    assert_int_equal(s3l_dest_stream(old, NULL, "t", &schema2, &st, &err), 0);
    struct s3l_row_sink k;
    s3l_dest_lane_sink(st, 0, &k);
    put_row(&k, 1, "zombie");
    /* The claim runs in the background from the first row (claim.c): done before young opens. */
    assert_int_equal(s3l__dest_claim_wait(old, &err), 0);
    assert_int_equal(s3l_dest_generation(old), 1);
    struct s3l_dest *young = open_dest(f, 1, 0);
    assert_int_equal(s3l_dest_generation(young), 2);
    struct s3l_dest_stream *yst;
    assert_int_equal(s3l_dest_stream(young, NULL, "t", &schema2, &yst, &err), 0);
    struct s3l_row_sink yk;
    s3l_dest_lane_sink(yst, 0, &yk);
    put_row(&yk, 2, "young");
    assert_int_equal(s3l__dest_claim_wait(young, &err), 0); /* young has claimed generation 2 */
    assert_int_equal(s3l_dest_commit(old, "{}", NULL, &err), S3L_EFENCED);
    assert_non_null(strstr(err.message, "generation 2"));
    s3l_dest_abort(old);
    assert_false(exists(f, "t/p1-00000000000000000001-g00000000000000000001-00000.parquet"));
    assert_int_equal(s3l_dest_commit(young, "{}", NULL, &err), 0);
    assert_true(exists(f, "t/p1-00000000000000000001-g00000000000000000002-00000.parquet"));
    s3l_dest_free(old);
    s3l_dest_free(young);
    /* Two writers open at once: the second to claim is fenced before it stages anything. */
    struct s3l_dest *a = open_dest(f, 1, 0), *b = open_dest(f, 1, 0);
    assert_int_equal(s3l_dest_generation(a), 3);
    assert_int_equal(s3l_dest_generation(b), 3);
    assert_int_equal(s3l_dest_stream(a, NULL, "t", &schema2, &st, &err), 0);
    assert_int_equal(s3l_dest_stream(b, NULL, "t", &schema2, &yst, &err), 0);
    s3l_dest_lane_sink(st, 0, &k);
    s3l_dest_lane_sink(yst, 0, &yk);
    put_row(&k, 3, "a");
    assert_int_equal(s3l__dest_claim_wait(a, &err), 0); /* a claims first */
    /* b's claim starts at its first row and runs in the background (claim.c): the row is
     * taken; nothing of b reaches the store before the claim, which fails, and the commit
     * returns that. */
    assert_int_equal(yk.ops->row_begin(yk.ctx), 0);
    s3l_error_clear(&err);
    assert_int_equal(s3l_dest_commit(b, "{}", NULL, &err), S3L_EFENCED);
    assert_non_null(strstr(err.message, "another writer took the checkpoint"));
    assert_false(exists(f, "t/p1-00000000000000000001-g00000000000000000003-00000.parquet"));
    assert_int_equal(s3l_dest_commit(a, "{}", NULL, &err), 0);
    s3l_dest_free(a);
    s3l_dest_free(b);
}

static void dead_letters_commit_with_their_epoch(void **state)
{
    struct fx *f = *state;
    struct s3l_dest *d = open_dest(f, 1, 0);
    struct s3l_dest_stream *st;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_stream(d, NULL, "t", &schema2, &st, &err), 0);
    assert_int_equal(s3l_dest_reject(st, "{\"id\": null}", 12, "line 3: id: null key", &err), 0);
    assert_int_equal(s3l_dest_reject(st, "\xff\x01", 2, "invalid UTF-8", &err), 0);
    struct s3l_dest_commit_info ci;
    assert_int_equal(s3l_dest_commit(d, "{}", &ci, &err), 0);
    assert_int_equal(ci.epoch, 1);
    assert_int_equal(ci.rejected, 2);
    char *t = get_text(f, "_openetl/deadletter/t/p1-00000000000000000001-g00000000000000000001"
                          ".ndjson");
    assert_non_null(t);
    assert_string_equal(t,
                        "{\"reason\":\"line 3: id: null key\",\"record\":\"{\\\"id\\\": null}\"}\n"
                        "{\"reason\":\"invalid UTF-8\",\"record_hex\":\"ff01\"}\n");
    s3l_free(t);
    assert_true(exists(f, "_openetl/markers/t/p1-00000000000000000001.json"));
    s3l_dest_free(d);
}

/* Puts one row of the first n_cols columns of fields (id, name) into lane 0 and commits it. */
static void commit_rows(struct s3l_dest *d, struct s3l_dest_stream *st, size_t n_cols)
{
    struct s3l_row_sink k;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_lane_sink(st, 0, &k), 0);
    if (n_cols == 2) {
        put_row(&k, 1, "one");
    } else {
        assert_int_equal(k.ops->row_begin(k.ctx), 0);
        assert_int_equal(k.ops->put_int(k.ctx, 1), 0);
        assert_int_equal(k.ops->row_end(k.ctx, &err), 0);
    }
    assert_int_equal(s3l_dest_commit(d, "{}", NULL, &err), 0);
}

/*
 * A schema record changes only with the first epoch holding its new columns (issue 10 item 14):
 * opening a stream, an epoch without rows and a writer that stops without committing leave it as
 * it was; drift is still refused when the stream opens.
 */
static void schema_record_added_columns_and_drift(void **state)
{
    struct fx *f = *state;
    struct s3l_dest *d = open_dest(f, 1, 0);
    struct s3l_dest_stream *st;
    struct s3l_error err = {0};
    struct s3l_schema one = {1, fields};
    assert_int_equal(s3l_dest_stream(d, NULL, "a", &one, &st, &err), 0);
    assert_false(exists(f, "_openetl/schemas/a.json"));
    assert_int_equal(s3l_dest_commit(d, "{\"n\":1}", NULL, &err), 0); /* no rows */
    assert_false(exists(f, "_openetl/schemas/a.json"));
    commit_rows(d, st, 1);
    char *rec = NULL;
    size_t len;
    assert_int_equal(s3l_dest_read_schema(f->s, "a", &rec, &len, &err), 0);
    assert_string_equal(rec, "{\"columns\":[{\"name\":\"id\",\"type\":5}]}");
    s3l_free(rec);
    s3l_dest_free(d);
    /* A writer that opens with a new column and stops without committing changes nothing. */
    d = open_dest(f, 1, 0);
    assert_int_equal(s3l_dest_stream(d, NULL, "a", &schema2, &st, &err), 0);
    s3l_dest_free(d);
    assert_int_equal(s3l_dest_read_schema(f->s, "a", &rec, &len, &err), 0);
    assert_null(strstr(rec, "\"name\":\"name\""));
    s3l_free(rec);
    d = open_dest(f, 1, 0);
    assert_int_equal(s3l_dest_stream(d, NULL, "a", &schema2, &st, &err), 0);
    commit_rows(d, st, 2);
    assert_int_equal(s3l_dest_read_schema(f->s, "a", &rec, &len, &err), 0);
    assert_non_null(strstr(rec, "\"name\":\"name\""));
    s3l_free(rec);
    struct s3l_field changed[] = {{"id", {.id = S3L_TYPE_UTF8}, false, true}};
    struct s3l_schema drift = {1, changed};
    assert_int_equal(s3l_dest_stream(d, NULL, "b", &schema2, &st, &err), 0);
    assert_int_equal(s3l_dest_stream(d, NULL, "b", &schema2, &st, &err), S3L_EINVALID_CONFIG);
    s3l_dest_free(d);
    d = open_dest(f, 1, 0);
    s3l_error_clear(&err);
    assert_int_equal(s3l_dest_stream(d, NULL, "a", &drift, &st, &err), S3L_ESCHEMA_DRIFT);
    assert_non_null(strstr(err.message, "table a: column id"));
    assert_non_null(strstr(err.message, "remove"));
    /* The other stream goes on. */
    s3l_error_clear(&err);
    assert_int_equal(s3l_dest_stream(d, NULL, "b", &schema2, &st, &err), 0);
    s3l_dest_free(d);
}

/* Files under f's directory/sub whose names match glob, counted by find(1) (not by our store or
 * listing code); -1 when find cannot be run. */
static int count_named(struct fx *f, const char *sub, const char *glob)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "find '%s/%s' -name '%s' 2>/dev/null | wc -l", f->dir, sub, glob);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (!p || fscanf(p, "%d", &n) != 1)
        n = -1;
    if (p)
        pclose(p);
    return n;
}

/* A writer of pipeline `pipe`: serial, or pipelined with the commit point deferred. */
static struct s3l_dest *open_writer(struct fx *f, const char *pipe, bool allow, bool deferred)
{
    struct s3l_dest_options o = {0};
    o.version = S3L_DEST_OPTIONS_VERSION;
    o.pipeline_id = pipe;
    o.lanes = 1;
    o.allow_type_changes = allow;
    o.serial_commit = !deferred;
    o.defer_commit_point = deferred;
    struct s3l__dest_format c;
    s3l_test_format(&c);
    struct s3l_dest *d = NULL;
    struct s3l_error err = {0};
    if (s3l__dest_open_format(f->s, &o, &c, &d, &err))
        fail_msg("open %s: %s", pipe, err.message);
    return d;
}

/* One row of two int64 columns, or of (int64, utf8) when text. */
static void put_pair(struct s3l_dest_stream *st, int64_t id, bool text)
{
    struct s3l_row_sink k;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_lane_sink(st, 0, &k), 0);
    assert_int_equal(k.ops->row_begin(k.ctx), 0);
    assert_int_equal(k.ops->put_int(k.ctx, id), 0);
    if (text)
        assert_int_equal(k.ops->put_bytes(k.ctx, "x", 1), 0);
    else
        assert_int_equal(k.ops->put_int(k.ctx, id), 0);
    assert_int_equal(k.ops->row_end(k.ctx, &err), 0);
}

/*
 * Two writers open table c at the same moment (no record yet), each merging its schema with no
 * record: B (p2) records `name` as int64 first; A (p1) then commits `name` as utf8. Before its
 * commit point A reads the record again and stops with S3L_ESCHEMA_DRIFT, as a serial second
 * writer would at open: nothing of A's epoch is committed (no marker, no file, no epoch in its
 * checkpoint, the record as B wrote it). Serial and with the commit point deferred (the failure
 * then comes with the sync). With --type-changes allow, and when B only added another column,
 * A commits and the record unites both (the finish's union).
 */
static void record_changed_by_another_writer_before_the_point(void **state)
{
    struct fx *f = *state;
    struct s3l_field a_fields[] = {{"id", {.id = S3L_TYPE_INT64}, false, true},
                                   {"name", {.id = S3L_TYPE_UTF8}, true, false}};
    struct s3l_field b_fields[] = {{"id", {.id = S3L_TYPE_INT64}, false, true},
                                   {"name", {.id = S3L_TYPE_INT64}, true, false}};
    struct s3l_field e_fields[] = {{"id", {.id = S3L_TYPE_INT64}, false, true},
                                   {"extra", {.id = S3L_TYPE_INT64}, true, false}};
    struct s3l_schema sa = {2, a_fields}, sb = {2, b_fields}, se = {2, e_fields};
    const char *tables[] = {"c", "cd", "ca", "ce"};
    for (int k = 0; k < 4; k++) {
        const char *t = tables[k];
        bool deferred = k == 1, allow = k == 2, extra = k == 3;
        struct s3l_error err = {0};
        struct s3l_dest *a = open_writer(f, "p1", allow, deferred);
        struct s3l_dest *b = open_writer(f, "p2", false, false);
        struct s3l_dest_stream *sta, *stb;
        assert_int_equal(s3l_dest_stream(a, NULL, t, &sa, &sta, &err), 0);
        assert_int_equal(s3l_dest_stream(b, NULL, t, extra ? &se : &sb, &stb, &err), 0);
        put_pair(stb, 1, false);
        assert_int_equal(s3l_dest_commit(b, "{}", NULL, &err), 0);
        s3l_dest_free(b);
        put_pair(sta, 2, true);
        int rc = s3l_dest_commit(a, "{}", NULL, &err);
        if (deferred && rc == 0)
            rc = s3l_dest_sync(a, NULL, &err);
        char key[96], *rec = NULL;
        size_t len;
        snprintf(key, sizeof(key), "_openetl/markers/%s/p1-00000000000000000001.json", t);
        assert_int_equal(s3l_dest_read_schema(f->s, t, &rec, &len, &err), 0);
        int n = count_named(f, t, "*.parquet"); /* the table's files, found by find(1) */
        if (allow || extra) {
            assert_int_equal(rc, 0);
            assert_true(exists(f, key));
            assert_int_equal(n, 2);
            /* the record keeps B's type of name (allow), or has every column (extra) */
            assert_string_equal(rec, extra ? "{\"columns\":[{\"name\":\"id\",\"type\":5},"
                                             "{\"name\":\"extra\",\"type\":5},"
                                             "{\"name\":\"name\",\"type\":13}]}"
                                           : "{\"columns\":[{\"name\":\"id\",\"type\":5},"
                                             "{\"name\":\"name\",\"type\":5}]}");
        } else {
            assert_int_equal(rc, S3L_ESCHEMA_DRIFT);
            /* the test format's drift message (the Parquet format's names the types) */
            assert_non_null(strstr(err.message, "epoch 1 is not committed: another writer "
                                                "changed the schema record of table "));
            assert_non_null(strstr(err.message, "column name changed type from 5 to 13"));
            assert_false(exists(f, key));
            assert_int_equal(n, 1); /* B's file only */
            assert_string_equal(rec, "{\"columns\":[{\"name\":\"id\",\"type\":5},"
                                     "{\"name\":\"name\",\"type\":5}]}");
        }
        s3l_free(rec);
        s3l_dest_free(a);
        /* Reopened, A has nothing pending and its checkpoint records no epoch. */
        a = open_writer(f, "p1", allow, false);
        assert_int_equal(s3l_dest_committed_epoch(a), allow || extra ? 1 : 0);
        s3l_dest_free(a);
        /* A fresh pipeline name for the next case (p1's checkpoint is the store's). */
        char ck[64];
        snprintf(ck, sizeof(ck), "_openetl/checkpoints/p1.json");
        assert_int_equal(s3l_store_remove(f->s, ck, &err), 0);
        snprintf(ck, sizeof(ck), "_openetl/checkpoints/p2.json");
        assert_int_equal(s3l_store_remove(f->s, ck, &err), 0);
    }
}

/* Asserts that built (s3l_free'd here) equals want, the key written by hand from the layout. */
static void key_is(char *built, const char *want)
{
    assert_non_null(built);
    assert_string_equal(built, want);
    s3l_free(built);
}

/*
 * commit/layout.c builds and parses every key of the layout (docs/internals/commit.md), written
 * here by hand; the parsers refuse what is not theirs (a table below T, a malformed epoch,
 * another pipeline's staging, a name that does not fit).
 */
static void layout_keys_built_and_parsed(void **state)
{
    (void)state;
    char name[256];
    assert_int_equal(s3l__name_data(name, sizeof(name), "p1", 3, 2, 0, 7, ".parquet"), 0);
    assert_string_equal(name, "p1-00000000000000000003-g00000000000000000002-00007.parquet");
    assert_int_equal(s3l__name_data(name, sizeof(name), "p1", 3, 2, 4, 7, ".parquet"), 0);
    assert_string_equal(name, "p1-00000000000000000003-g00000000000000000002-00004-00007.parquet");
    assert_int_equal(s3l__name_data(name, 20, "p1", 3, 2, 4, 7, ".parquet"), S3L_ETOO_LARGE);
    assert_int_equal(s3l__name_deadletter(name, sizeof(name), "p1", 3, 2), 0);
    assert_string_equal(name, "p1-00000000000000000003-g00000000000000000002.ndjson");
    key_is(s3l__key_final("ns/t", "f.parquet"), "ns/t/f.parquet");
    key_is(s3l__key_table_prefix("ns/t"), "ns/t/");
    key_is(s3l__key_staging_prefix("p1"), "_openetl/staging/p1/");
    key_is(s3l__key_staged("p1", 2, "ns/t", "f.parquet"),
           "_openetl/staging/p1/g00000000000000000002/ns/t/f.parquet");
    key_is(s3l__key_deadletter("ns/t", "d.ndjson"), "_openetl/deadletter/ns/t/d.ndjson");
    key_is(s3l__key_marker("ns/t", "p1", 12), "_openetl/markers/ns/t/p1-00000000000000000012.json");
    key_is(s3l__key_markers_prefix("ns/t"), "_openetl/markers/ns/t/");
    key_is(s3l__key_schema("ns/t"), "_openetl/schemas/ns/t.json");
    key_is(s3l__key_schemas_under("ns"), "_openetl/schemas/ns/");
    assert_string_equal(s3l__key_schemas_prefix(), "_openetl/schemas/");
    key_is(s3l__key_checkpoint("p1"), "_openetl/checkpoints/p1.json");
    assert_string_equal(s3l__key_checkpoints_prefix(), "_openetl/checkpoints/");
    assert_string_equal(s3l_dest_scratch_prefix(), "_openetl/check/");

    uint64_t g = 0, e = 0;
    const char *g2 = "g00000000000000000002";
    char k[128];
    snprintf(k, sizeof(k), "_openetl/staging/p1/%s/t/f", g2);
    assert_true(s3l__key_staged_generation(k, "p1", &g));
    assert_int_equal(g, 2);
    snprintf(k, sizeof(k), "_openetl/staging/p10/%s/t/f", g2);
    assert_false(s3l__key_staged_generation(k, "p1", &g));
    assert_false(s3l__key_staged_generation("_openetl/staging/p1/x/t/f", "p1", &g));
    snprintf(k, sizeof(k), "t/p1/%s", g2);
    assert_false(s3l__key_staged_generation(k, "p1", &g));

    char *tt = NULL;
    snprintf(k, sizeof(k), "_openetl/staging/p1/%s/ns/t/f.parquet", g2);
    assert_int_equal(s3l__key_staged_table(k, "p1", &tt), 1);
    assert_string_equal(tt, "ns/t");
    s3l_free(tt);
    assert_int_equal(s3l__key_staged_table(k, "p2", &tt), 0);
    snprintf(k, sizeof(k), "_openetl/staging/p1/%s/f.parquet", g2); /* no table */
    assert_int_equal(s3l__key_staged_table(k, "p1", &tt), 0);
    assert_null(tt);

    char id[64];
    assert_true(s3l__key_marker_parse("_openetl/markers/ns/t/a-b-00000000000000000012.json", "ns/t",
                                      id, sizeof(id), &e));
    assert_string_equal(id, "a-b");
    assert_int_equal(e, 12);
    /* A table below ns/t. */
    assert_false(s3l__key_marker_parse("_openetl/markers/ns/t/x/a-00000000000000000012.json",
                                       "ns/t", id, sizeof(id), &e));
    assert_false(s3l__key_marker_parse("_openetl/markers/ns/tt/a-00000000000000000012.json", "ns/t",
                                       id, sizeof(id), &e));
    assert_false(s3l__key_marker_parse("_openetl/markers/ns/t/a-0000000000000000001x.json", "ns/t",
                                       id, sizeof(id), &e));
    assert_false(s3l__key_marker_parse("_openetl/markers/ns/t/a-00000000000000000012.jso", "ns/t",
                                       id, sizeof(id), &e));
    assert_false(s3l__key_marker_parse("_openetl/markers/ns/t/abcd-00000000000000000012.json",
                                       "ns/t", id, 4, &e)); /* the id does not fit */

    assert_true(s3l__key_checkpoint_parse("_openetl/checkpoints/p1.json", id, sizeof(id)));
    assert_string_equal(id, "p1");
    assert_false(s3l__key_checkpoint_parse("_openetl/checkpoints/x/p1.json", id, sizeof(id)));
    assert_false(s3l__key_checkpoint_parse("_openetl/checkpoints/p1.txt", id, sizeof(id)));
    assert_false(s3l__key_checkpoint_parse("_openetl/checkpoints/.json", id, sizeof(id)));
    assert_false(s3l__key_checkpoint_parse("_openetl/markers/p1.json", id, sizeof(id)));

    char *t = NULL;
    assert_int_equal(s3l__key_schema_parse("_openetl/schemas/ns/t.json", &t), 1);
    assert_string_equal(t, "ns/t");
    s3l_free(t);
    assert_int_equal(s3l__key_schema_parse("_openetl/schemas/ns/t.txt", &t), 0);
    assert_null(t);
    assert_int_equal(s3l__key_schema_parse("_openetl/markers/t.json", &t), 0);

    assert_int_equal(s3l__pipeline_id_check("0a1b-C_2.x", NULL), 0);
    assert_int_equal(s3l__pipeline_id_check("..", NULL), S3L_EINVALID_CONFIG);
    assert_int_equal(s3l__pipeline_id_check("a/b", NULL), S3L_EINVALID_CONFIG);
    assert_int_equal(s3l__pipeline_id_check("", NULL), S3L_EINVALID_CONFIG);
}

static void refused_options_and_names(void **state)
{
    struct fx *f = *state;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_check_disposition("replace", &err), S3L_EUNSUPPORTED);
    assert_non_null(strstr(err.message, "atomically"));
    s3l_error_clear(&err);
    assert_int_equal(s3l_dest_check_disposition("merge", &err), S3L_EUNSUPPORTED);
    assert_int_equal(s3l_dest_check_disposition("append", NULL), 0);
    assert_int_equal(s3l_dest_check_disposition("upsert", NULL), S3L_EINVALID_CONFIG);
    struct s3l_dest_options o = {0};
    o.version = S3L_DEST_OPTIONS_VERSION;
    o.pipeline_id = PIPE;
    o.disposition = "replace";
    struct s3l__dest_format c;
    s3l_test_format(&c);
    struct s3l_dest *d = NULL;
    assert_int_equal(s3l__dest_open_format(f->s, &o, &c, &d, NULL), S3L_EUNSUPPORTED);
    /* Refused before any data moves: not even a checkpoint. */
    assert_false(exists(f, "_openetl/checkpoints/p1.json"));
    o.disposition = NULL;
    o.pipeline_id = "../x";
    assert_int_equal(s3l__dest_open_format(f->s, &o, &c, &d, NULL), S3L_EINVALID_CONFIG);
    d = open_dest(f, 1, 0);
    struct s3l_dest_stream *st;
    assert_int_equal(s3l_dest_stream(d, "..", "t", &schema2, &st, NULL), S3L_EINVALID_CONFIG);
    assert_int_equal(s3l_dest_stream(d, NULL, "_openetl", &schema2, &st, NULL),
                     S3L_EINVALID_CONFIG);
    /* The metadata root is the destination's reserved name, as table and as namespace. */
    const char *reserved[][2] = {{NULL, "_openetl"}, {"_openetl", "t"}};
    for (size_t i = 0; i < 2; i++) {
        char *path = NULL;
        s3l_error_clear(&err);
        assert_int_equal(s3l_dest_table_path(reserved[i][0], reserved[i][1], &path, &err),
                         S3L_EINVALID_CONFIG);
        assert_null(path);
        assert_non_null(strstr(err.message, i ? "namespace name '_openetl'" : "table name"));
        assert_non_null(strstr(err.message, "reserved for the destination's metadata"));
    }
    assert_int_equal(s3l_dest_stream(d, "__quarantine", "a b=c é", &schema2, &st, NULL), 0);
    struct s3l_row_sink k;
    s3l_dest_lane_sink(st, 0, &k);
    put_row(&k, 7, "q");
    assert_int_equal(s3l_dest_commit(d, NULL, NULL, &err), 0);
    assert_true(exists(f, "__quarantine/a b=c é/p1-00000000000000000001-g00000000000000000001"
                          "-00000.parquet"));
    s3l_dest_free(d);
}

static void abort_leaves_nothing_and_gc_collects(void **state)
{
    struct fx *f = *state;
    struct s3l_dest *d = open_dest(f, 1, 20);
    struct s3l_dest_stream *st;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_stream(d, NULL, "t", &schema2, &st, &err), 0);
    struct s3l_row_sink k;
    s3l_dest_lane_sink(st, 0, &k);
    for (int i = 0; i < 6; i++)
        put_row(&k, i, "yyyyyy");
    s3l_dest_abort(d);
    struct s3l_test_run r = {.url = f->url, .pipeline = PIPE, .lanes = 1, .tables = 1};
    struct s3l_test_census c;
    assert_int_equal(s3l_test_census(&r, &c), 0);
    assert_int_equal(c.staged, 0);
    assert_int_equal(c.data_files, 0);
    /* A writer that dies leaves staged files behind (fail mode: nothing cleans up). */
    for (int i = 0; i < 6; i++)
        put_row(&k, i, "yyyyyy");
    assert_int_equal(s3l_test_census(&r, &c), 0);
    assert_true(c.staged >= 2);
    unsigned left = c.staged;
    struct s3l_dest *d2 = open_dest(f, 1, 0);
    uint64_t removed = 0;
    assert_int_equal(s3l_dest_gc(d2, &removed, &err), 0);
    assert_int_equal(removed, left);
    assert_int_equal(s3l_test_census(&r, &c), 0);
    assert_int_equal(c.staged, 0);
    s3l_dest_free(d2);
    s3l_dest_free(d);
}

/* Hidden temp files (".s3l-tmp-*") under dir/sub, counted by find(1). */
static int count_temps(struct fx *f, const char *sub)
{
    return count_named(f, sub, ".s3l-tmp-*");
}

static void touch(const char *dir, const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("partial", fp);
    fclose(fp);
}

/* A killed writer's temp files (staging, and a table directory after a kill during a copy) are
 * removed by recovery at open (staging) and gc (everywhere); a live upload's temp file (held)
 * and a just-created one (within the grace, its creator may not hold it yet) stay. */
static void gc_and_open_remove_stale_temp_files(void **state)
{
    struct fx *f = *state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct s3l_dest *d = open_dest(f, 1, 0);
        struct s3l_dest_stream *st;
        struct s3l_error err = {0};
        if (s3l_dest_stream(d, NULL, "t", &schema2, &st, &err) != 0)
            _exit(2);
        struct s3l_row_sink k;
        s3l_dest_lane_sink(st, 0, &k);
        for (int i = 0; i < 6; i++)
            put_row(&k, i, "yyyyyy");
        kill(getpid(), SIGKILL);
        _exit(3);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(count_temps(f, "_openetl/staging"), 1);
    /* What a kill during the copy to the table leaves, and a live upload next to it. */
    char tdir[160];
    snprintf(tdir, sizeof(tdir), "%s/t", f->dir);
    assert_int_equal(mkdir(tdir, 0755), 0);
    touch(tdir, ".s3l-tmp-00000000deadc0de");
    struct s3l_upload *live;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_upload_begin(f->s, "t/live", NULL, &live, &err), 0);
    usleep(1200 * 1000); /* past the 1 s grace (docs/internals/store.md) */
    touch(tdir, ".s3l-tmp-00000000000f7e54"); /* fresh: within the grace */
    /* Its mtime a minute ahead: the grace is measured from the gc's claim, and a loaded machine
     * can take over a second between here and there (a 3rd file was removed once). */
    char fresh[200];
    snprintf(fresh, sizeof(fresh), "%s/.s3l-tmp-00000000000f7e54", tdir);
    struct timespec ahead[2];
    clock_gettime(CLOCK_REALTIME, &ahead[0]);
    ahead[0].tv_sec += 60;
    ahead[1] = ahead[0];
    assert_int_equal(utimensat(AT_FDCWD, fresh, ahead, 0), 0);
    assert_int_equal(count_temps(f, "t"), 3);

    struct s3l_dest *d = open_dest(f, 1, 0); /* nothing pending: opening changes nothing */
    assert_int_equal(count_temps(f, "_openetl/staging"), 1);
    assert_int_equal(count_temps(f, "t"), 3);
    uint64_t removed = 0;
    assert_int_equal(s3l_dest_gc(d, &removed, &err), 0);
    assert_int_equal(removed, 2);
    assert_int_equal(count_temps(f, "_openetl/staging"), 0);
    assert_int_equal(count_temps(f, "t"), 2);
    char path[200];
    struct stat sb;
    snprintf(path, sizeof(path), "%s/.s3l-tmp-00000000deadc0de", tdir);
    assert_int_not_equal(stat(path, &sb), 0);
    snprintf(path, sizeof(path), "%s/.s3l-tmp-00000000000f7e54", tdir);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(s3l_store_upload_write(live, "ok", 2, &err), 0);
    assert_int_equal(s3l_store_upload_publish(live, NULL, &err), 0);
    assert_true(exists(f, "t/live"));
    /* Objects are never swept; the killed writer committed nothing, so it left no schema record
     * (issue 10 item 14). */
    assert_false(exists(f, "_openetl/schemas/t.json"));
    assert_true(exists(f, "_openetl/checkpoints/" PIPE ".json"));
    s3l_dest_free(d);
}

/* A writer killed after its commit point leaves a pending epoch; the open that recovers it also
 * sweeps the pipeline's staging area of dead temp files. */
static void recovery_at_open_sweeps_staging(void **state)
{
    struct fx *f = *state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        s3l_test_crash_arm(0, S3L__EV_AFTER_CHECKPOINT, 1);
        struct s3l_store *s = NULL;
        struct s3l_error err = {0};
        if (s3l_store_open(f->url, NULL, &s, &err) != 0)
            _exit(2);
        struct s3l_dest_options o = {.version = S3L_DEST_OPTIONS_VERSION, .pipeline_id = PIPE};
        struct s3l__dest_format c;
        s3l_test_format(&c);
        struct s3l_dest *d = NULL;
        struct s3l_dest_stream *st;
        if (s3l__dest_open_format(s, &o, &c, &d, &err) != 0 ||
            s3l_dest_stream(d, NULL, "t", &schema2, &st, &err) != 0)
            _exit(2);
        struct s3l_row_sink k;
        s3l_dest_lane_sink(st, 0, &k);
        put_row(&k, 1, "a");
        s3l_dest_commit(d, NULL, NULL, &err);
        s3l_dest_sync(d, NULL, &err); /* pipelined: the point is the committer's */
        _exit(3); /* not reached: killed after the checkpoint */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    char dir[160];
    snprintf(dir, sizeof(dir), "%s/_openetl/staging/" PIPE, f->dir);
    touch(dir, ".s3l-tmp-00000000deadbeef"); /* as a killed upload leaves it */
    usleep(1200 * 1000);                      /* past the 1 s grace */
    assert_int_equal(count_temps(f, "_openetl/staging"), 1);
    struct s3l_dest *d = open_dest(f, 1, 0);
    assert_int_equal(s3l_dest_committed_epoch(d), 1);
    assert_int_equal(count_temps(f, "_openetl/staging"), 0);
    s3l_dest_free(d);
}

static int collect_table(void *ctx, const char *table)
{
    char **seen = ctx;
    if (*seen)
        return -1; /* only one table expected */
    *seen = strdup(table);
    return 0;
}

/* Issue 3: a 255-byte table name works on file:// end to end, although its schema record
 * "_openetl/schemas/<T>.json" is a 260-byte file name (over NAME_MAX): the local backend maps it
 * (docs/internals/store.md "Long key components") and listings show the real name. */
static void table_name_of_255_bytes(void **state)
{
    struct fx *f = *state;
    char t[256];
    t[0] = 'x';
    for (int i = 0; i < 127; i++)
        memcpy(t + 1 + 2 * i, "\xc3\xa9", 2); /* e-acute: the on-disk cut must not split it */
    t[255] = 0;
    assert_int_equal(strlen(t), 255);
    struct s3l_dest *d = open_dest(f, 1, 0);
    struct s3l_dest_stream *st;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_stream(d, NULL, t, &schema2, &st, &err), 0);
    struct s3l_row_sink k;
    s3l_dest_lane_sink(st, 0, &k);
    put_row(&k, 1, "a");
    put_row(&k, 2, "b");
    if (s3l_dest_commit(d, NULL, NULL, &err) != 0)
        fail_msg("commit: %s", err.message);
    s3l_dest_free(d);
    /* A new writer reads the record back: same schema, no drift. */
    d = open_dest(f, 1, 0);
    assert_int_equal(s3l_dest_stream(d, NULL, t, &schema2, &st, &err), 0);
    s3l_dest_free(d);

    char *seen = NULL;
    assert_int_equal(s3l_dest_list_tables(f->s, collect_table, &seen, &err), 0);
    assert_non_null(seen);
    assert_string_equal(seen, t);
    free(seen);
    char *json = NULL;
    size_t len = 0;
    assert_int_equal(s3l_dest_read_schema(f->s, t, &json, &len, &err), 0);
    assert_non_null(strstr(json, "\"id\""));
    s3l_free(json);
    char key[400];
    snprintf(key, sizeof(key), "%s/p1-00000000000000000001-g00000000000000000001-00000.parquet",
             t);
    assert_true(exists(f, key));
    snprintf(key, sizeof(key), "_openetl/schemas/%s.json", t);
    assert_true(exists(f, key));
    /* On disk: the record is "<189 readable bytes>\\<sha256 hex>", at most 255 bytes. */
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "ls '%s/_openetl/schemas'", f->dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[600];
    bool found = false;
    while (fgets(line, sizeof(line), p)) {
        if (strncmp(line, t, 189) == 0 && line[189] == '\\' && strlen(line) == 189 + 65 + 1)
            found = true;
    }
    pclose(p);
    assert_true(found);
}

struct lane_job {
    struct s3l_dest_stream *st;
    unsigned lane;
    int rc;
};

static void *lane_thread(void *arg)
{
    struct lane_job *j = arg;
    struct s3l_row_sink k;
    s3l_dest_lane_sink(j->st, j->lane, &k);
    for (uint64_t i = j->lane; i < 4000 && j->rc == 0; i += 4) {
        char text[32];
        int n = snprintf(text, sizeof(text), "r%llu", (unsigned long long)i);
        struct s3l_error err = {0};
        if (i % 101 == 100) {
            char rec[48];
            int m = snprintf(rec, sizeof(rec), "{\"id\": %llu}", (unsigned long long)i);
            j->rc = s3l_dest_reject(j->st, rec, (size_t)m, "thread reject", &err);
            continue;
        }
        j->rc = k.ops->row_begin(k.ctx);
        if (j->rc == 0)
            j->rc = k.ops->put_int(k.ctx, (int64_t)i);
        if (j->rc == 0)
            j->rc = k.ops->put_bytes(k.ctx, text, (size_t)n);
        if (j->rc == 0)
            j->rc = k.ops->row_end(k.ctx, &err);
    }
    /* Lanes 1-3 close their own file on their thread (as the pipeline's lanes do at a barrier);
     * lane 0 leaves its file to the commit. A second close finds nothing open. */
    struct s3l_error err = {0};
    if (j->lane > 0 && j->rc == 0)
        j->rc = s3l_dest_lane_close(j->st, j->lane, &err);
    if (j->lane > 0 && j->rc == 0)
        j->rc = s3l_dest_lane_close(j->st, j->lane, &err);
    return NULL;
}

/* Four lanes driven from four threads at once (plus dead letters from all of them); three of them
 * close their last file themselves before the commit. */
static void lanes_from_threads(void **state)
{
    struct fx *f = *state;
    struct s3l_dest *d = open_dest(f, 4, 2000);
    struct s3l_dest_stream *st;
    struct s3l_error err = {0};
    assert_int_equal(s3l_dest_stream(d, "ns", "t0", &schema2, &st, &err), 0);
    pthread_t th[4];
    struct lane_job jobs[4];
    for (unsigned i = 0; i < 4; i++) {
        jobs[i] = (struct lane_job){st, i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, lane_thread, &jobs[i]), 0);
    }
    for (unsigned i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].rc, 0);
    }
    assert_int_equal(s3l_dest_lane_close(st, 4, &err), S3L_EINVALID_ARGUMENT);
    struct s3l_dest_commit_info ci;
    assert_int_equal(s3l_dest_commit(d, "{\"next\": 4000}", &ci, &err), 0);
    assert_int_equal(ci.rows + ci.rejected, 4000);
    assert_int_equal(ci.rejected, 39);
    s3l_dest_free(d);
    struct s3l_test_run r = {
        .url = f->url, .pipeline = PIPE, .lanes = 4, .tables = 1, .total_rows = 4000};
    char why[256] = "";
    if (s3l_test_verify(&r, true, why, sizeof(why)) != 0)
        fail_msg("%s", why);
}

/* A full disk: the epoch fails with NO_SPACE, nothing of it is visible, earlier epochs stay. */
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

static void full_disk_commits_nothing_half(void **state)
{
    (void)state;
    struct fx f = {0};
    snprintf(f.dir, sizeof(f.dir), "/tmp/s3l-full-XXXXXX");
    assert_non_null(mkdtemp(f.dir));
    if (mount("tmpfs", f.dir, "tmpfs", 0, "size=256k") != 0)
        fail_msg("mount tmpfs: %s (tests run as root)", strerror(errno));
    snprintf(mounted, sizeof(mounted), "%s", f.dir);
    snprintf(f.url, sizeof(f.url), "file://%s", f.dir);
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_open(f.url, NULL, &f.s, &err), 0);
    struct s3l_dest *d = open_dest(&f, 1, 16 << 10);
    struct s3l_dest_stream *st;
    assert_int_equal(s3l_dest_stream(d, "ns", "t0", &schema2, &st, &err), 0);
    struct s3l_row_sink k;
    s3l_dest_lane_sink(st, 0, &k);
    put_row(&k, 0, "r0");
    assert_int_equal(s3l_dest_commit(d, "{\"next\": 1}", NULL, &err), 0);
    static char pad[1000];
    memset(pad, 'x', sizeof(pad) - 1);
    int rc = 0;
    for (int i = 1; i < 1000 && rc == 0; i++) {
        rc = k.ops->row_begin(k.ctx);
        if (rc == 0)
            rc = k.ops->put_int(k.ctx, i);
        if (rc == 0)
            rc = k.ops->put_bytes(k.ctx, pad, strlen(pad));
        if (rc == 0)
            rc = k.ops->row_end(k.ctx, &err);
    }
    /* A failed row_begin has no err to fill: the lane's failure comes back from commit. */
    if (err.code == 0)
        rc = s3l_dest_commit(d, "{\"next\": 1000}", NULL, &err);
    assert_int_equal(rc, S3L_ENO_SPACE);
    if (!strstr(err.message, f.dir))
        fail_msg("message does not name the path: %s", err.message);
    s3l_dest_abort(d);
    s3l_dest_free(d);
    struct s3l_test_run r = {
        .url = f.url, .pipeline = PIPE, .lanes = 1, .tables = 1, .total_rows = 1};
    char why[256] = "";
    if (s3l_test_verify(&r, true, why, sizeof(why)) != 0)
        fail_msg("after ENOSPC: %s", why);
    struct s3l_test_census c;
    assert_int_equal(s3l_test_census(&r, &c), 0);
    assert_int_equal(c.markers, 1);
    assert_int_equal(c.data_files, 1);
    assert_int_equal(c.staged, 0);
    assert_false(c.pending);
    assert_int_equal(c.committed_epoch, 1);
    s3l_store_free(f.s);
    assert_int_equal(umount(f.dir), 0);
    mounted[0] = 0;
    rmdir(f.dir);
}

/* A destination the writer may not write: a clear PERMISSION_DENIED naming the path. */
static void unwritable_destination(void **state)
{
    struct fx *f = *state;
    chmod(f->dir, 0755);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        struct s3l_dest_options o = {0};
        o.version = S3L_DEST_OPTIONS_VERSION;
        o.pipeline_id = PIPE;
        struct s3l__dest_format c;
        s3l_test_format(&c);
        struct s3l_dest *d = NULL;
        struct s3l_error err = {0};
        int rc = s3l__dest_open_format(f->s, &o, &c, &d, &err);
        struct s3l_dest_stream *st;
        if (rc == 0)
            rc = s3l_dest_stream(d, NULL, "t", &schema2, &st, &err);
        /* Opening a stream only reads; the first write is the epoch's (claim, staging). */
        struct s3l_row_sink k;
        if (rc == 0)
            rc = s3l_dest_lane_sink(st, 0, &k);
        /* A row that cannot start its file fails the lane (sticky); the commit names why. */
        if (rc == 0 && k.ops->row_begin(k.ctx) == 0 && k.ops->put_int(k.ctx, 1) == 0 &&
            k.ops->put_null(k.ctx) == 0)
            k.ops->row_end(k.ctx, &err);
        if (rc == 0)
            rc = s3l_dest_commit(d, "{}", NULL, &err);
        s3l_dest_free(d);
        _exit(rc == S3L_EPERMISSION_DENIED && strstr(err.message, f->dir) ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* The fault model: fail every operation from k on (the store goes away), then recover. With
 * lost replies, operation k is performed but reported failed (the ambiguous case). */
static void fault_model(bool lost_reply);

static void fail_at_every_op_then_recover(void **state)
{
    (void)state;
    fault_model(false);
}

static void lost_reply_at_every_op_then_recover(void **state)
{
    (void)state;
    fault_model(true);
}

static void fault_model(bool lost_reply)
{
    uint64_t total = 0;
    unsigned runs = 0;
    for (uint64_t k = 0; k == 0 || k <= total; k++) {
        char dir[64];
        snprintf(dir, sizeof(dir), "%s/s3l-fault-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        assert_non_null(mkdtemp(dir));
        char url[96];
        snprintf(url, sizeof(url), "file://%s", dir);
        struct s3l_test_run r = {.url = url,
                                 .pipeline = "pf",
                                 .lanes = 2,
                                 .tables = 2,
                                 .file_size = 40,
                                 .total_rows = 24,
                                 .epoch_rows = 10,
                                 .reject_every = 7};
        struct s3l_error err = {0};
        if (k == 0)
            s3l_test_crash_arm(0, NULL, 0); /* count the operations of an unfaulted run */
        else if (lost_reply)
            s3l_test_fail_after_arm(k);
        else
            s3l_test_fail_arm(k);
        int rc = s3l_test_run(&r, &err);
        if (k == 0) {
            total = s3l_test_crash_ops();
            assert_int_equal(rc, 0);
        }
        s3l_test_crash_disarm();
        char why[256] = "";
        if (s3l_test_verify(&r, false, why, sizeof(why)) != 0)
            fail_msg("k=%llu: inconsistent after the failure: %s", (unsigned long long)k, why);
        if (rc) {
            s3l_error_clear(&err);
            r.gc = true;
            if (s3l_test_run(&r, &err) != 0)
                fail_msg("k=%llu: recovery failed: %s", (unsigned long long)k, err.message);
        }
        if (s3l_test_verify(&r, true, why, sizeof(why)) != 0)
            fail_msg("k=%llu: after recovery: %s", (unsigned long long)k, why);
        struct s3l_test_census c;
        assert_int_equal(s3l_test_census(&r, &c), 0);
        if (rc && c.staged != 0)
            fail_msg("k=%llu: %u staged files left after gc", (unsigned long long)k, c.staged);
        char cmd[96];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
        runs += k > 0;
    }
    print_message("fault model%s: %u failure points enumerated\n",
                  lost_reply ? " (lost replies)" : "", runs);
    assert_true(runs > 50);
}

/* gc --uploads' rule (s3l_dest_uploads, issue 13 item 6) on the local store given a made-up set
 * of pending multipart uploads: its ops table is copied with list_uploads (the set, filtered by
 * prefix, as ListMultipartUploads filters) and staged_abort (records the id) added. */
struct fake_upload {
    const char *key, *id;
    int64_t initiated_ns;
    bool aborted;
};
static struct fake_upload *fake_v;
static size_t fake_n;

static int fake_list_uploads(struct s3l_store *s, const char *prefix, s3l_store_uploads_cb cb,
                             void *ctx, struct s3l_error *err)
{
    (void)s;
    (void)err;
    for (size_t i = 0; i < fake_n; i++) {
        struct s3l_pending_upload u = {fake_v[i].key, fake_v[i].id, fake_v[i].initiated_ns};
        int rc = fake_v[i].aborted || strncmp(u.key, prefix, strlen(prefix)) ? 0 : cb(ctx, &u);
        if (rc)
            return rc;
    }
    return 0;
}

static int fake_staged_abort(struct s3l_store *s, const char *key, const char *upload_id,
                             struct s3l_error *err)
{
    (void)s;
    (void)err;
    for (size_t i = 0; i < fake_n; i++)
        if (!strcmp(fake_v[i].key, key) && !strcmp(fake_v[i].id, upload_id))
            fake_v[i].aborted = true;
    return 0;
}

struct judged {
    char what[16][160];
    size_t n;
};

static int on_judged(void *ctx, const struct s3l_dest_upload *u)
{
    struct judged *j = ctx;
    const char *k = u->cls == S3L_DEST_UPLOAD_HELD    ? "held"
                    : u->cls == S3L_DEST_UPLOAD_YOUNG ? "young"
                                                      : "orphan";
    snprintf(j->what[j->n++], sizeof(j->what[0]), "%s %s%s", u->upload_id, k,
             u->aborted ? " aborted" : "");
    return 0;
}

/*
 * Pipeline PIPE at generation 2 (claimed twice): its generation-1 staging upload is an orphan,
 * its generation-2 one is held (a writer that may be live); other uploads: one a day old is an
 * orphan at --older-than 1h, one as old but in keep is held, a minute-old one is young, one of
 * unknown age is young, a staging upload of a pipeline without a checkpoint is judged by age.
 * With abort exactly the orphans are aborted; with o.pipeline only PIPE's staging uploads are
 * listed, so the old upload of another program is not touched (it was, before the filter).
 */
static void uploads_judged_and_orphans_aborted(void **state)
{
    struct fx *f = *state;
    struct s3l_error err = {0};
    claim_and_die(f, 3600000, 1, "a.x");
    claim_and_die(f, 3600000, 2, "b.x");
    int64_t now = s3l__os_now_ns(), day = 86400LL * 1000000000LL;
    char *g1 = s3l__key_staged(PIPE, 1, "t", "f1.parquet");
    char *g2 = s3l__key_staged(PIPE, 2, "t", "f2.parquet");
    char *p9 = s3l__key_staged("p9", 1, "t", "f.parquet");
    struct fake_upload set[] = {
        {g1, "id-g1", now - day, false},         {g2, "id-g2", now - day, false},
        {"x/old", "id-old", now - day, false},   {"x/kept", "id-kept", now - day, false},
        {"x/young", "id-young", now - 60000000000LL, false},
        {"x/unknown", "id-unknown", 0, false},   {p9, "id-p9", now - day, false},
    };
    fake_v = set;
    fake_n = sizeof(set) / sizeof(set[0]);
    struct s3l_store_ops ops = *f->s->ops;
    const struct s3l_store_ops *saved = f->s->ops;
    ops.list_uploads = fake_list_uploads;
    ops.staged_abort = fake_staged_abort;
    f->s->ops = &ops;
    const char *keep[] = {"id-kept"};
    struct s3l_dest_uploads_options o = {0};
    o.older_than_ns = 3600LL * 1000000000LL;
    o.keep = keep;
    o.n_keep = 1;
    /* Listed only: nothing aborted. */
    struct judged j = {0};
    assert_int_equal(s3l_dest_uploads(f->s, &o, false, on_judged, &j, &err), 0);
    assert_int_equal(j.n, 7);
    for (size_t i = 0; i < fake_n; i++)
        assert_false(set[i].aborted);
    /* --pipeline-id PIPE: only PIPE's two staging uploads; the g1 one aborted. */
    o.pipeline = PIPE;
    memset(&j, 0, sizeof(j));
    assert_int_equal(s3l_dest_uploads(f->s, &o, true, on_judged, &j, &err), 0);
    assert_int_equal(j.n, 2);
    assert_string_equal(j.what[0], "id-g1 orphan aborted");
    assert_string_equal(j.what[1], "id-g2 held");
    assert_true(set[0].aborted);
    for (size_t i = 1; i < fake_n; i++)
        assert_false(set[i].aborted);
    /* The whole destination. */
    o.pipeline = NULL;
    memset(&j, 0, sizeof(j));
    assert_int_equal(s3l_dest_uploads(f->s, &o, true, on_judged, &j, &err), 0);
    assert_int_equal(j.n, 6);
    assert_string_equal(j.what[0], "id-g2 held");
    assert_string_equal(j.what[1], "id-old orphan aborted");
    assert_string_equal(j.what[2], "id-kept held");
    assert_string_equal(j.what[3], "id-young young");
    assert_string_equal(j.what[4], "id-unknown young");
    assert_string_equal(j.what[5], "id-p9 orphan aborted");
    assert_true(set[2].aborted && set[6].aborted);
    assert_false(set[1].aborted || set[3].aborted || set[4].aborted || set[5].aborted);
    /* Not a pipeline id: refused, nothing listed. */
    o.pipeline = "../x";
    assert_int_equal(s3l_dest_uploads(f->s, &o, true, on_judged, &j, &err), S3L_EINVALID_CONFIG);
    f->s->ops = saved;
    /* The local store itself has no multipart uploads. */
    o.pipeline = NULL;
    s3l_error_clear(&err);
    assert_int_equal(s3l_dest_uploads(f->s, &o, false, on_judged, &j, &err), S3L_EUNSUPPORTED);
    s3l_free(g1);
    s3l_free(g2);
    s3l_free(p9);
}

/*
 * The caller's holds (s3land: `pipe` state committables): an upload whose id and key a hold
 * names is held, with the hold's why; a hold without a key holds its id under any key; a hold
 * whose key is another one does not hold the upload (the same id elsewhere is an orphan).
 */
struct whys {
    char v[8][200];
    size_t n;
};

static int on_why(void *ctx, const struct s3l_dest_upload *u)
{
    struct whys *w = ctx;
    snprintf(w->v[w->n++], sizeof(w->v[0]), "%s %s: %s", u->upload_id,
             u->aborted ? "aborted" : "kept", u->why);
    return 0;
}

static void uploads_held_by_callers_holds(void **state)
{
    struct fx *f = *state;
    struct s3l_error err = {0};
    int64_t now = s3l__os_now_ns(), day = 86400LL * 1000000000LL;
    struct fake_upload set[] = {
        {"p/sub0-a.ndjson", "id-a", now - day, false},
        {"p/sub0-b.ndjson", "id-b", now - day, false},
        {"q/any.ndjson", "id-c", now - day, false},
        {"r/old", "id-d", now - day, false},
    };
    fake_v = set;
    fake_n = sizeof(set) / sizeof(set[0]);
    struct s3l_store_ops ops = *f->s->ops;
    const struct s3l_store_ops *saved = f->s->ops;
    ops.list_uploads = fake_list_uploads;
    ops.staged_abort = fake_staged_abort;
    f->s->ops = &ops;
    const struct s3l_dest_upload_hold holds[] = {
        {"p/sub0-a.ndjson", "id-a", "held by pipe state A"},
        {"p/elsewhere.ndjson", "id-b", "held by pipe state B"},
        {NULL, "id-c", "held by pipe state C"},
    };
    struct s3l_dest_uploads_options o = {0};
    o.older_than_ns = 3600LL * 1000000000LL;
    o.holds = holds;
    o.n_holds = 3;
    struct whys w = {0};
    assert_int_equal(s3l_dest_uploads(f->s, &o, true, on_why, &w, &err), 0);
    assert_int_equal(w.n, 4);
    assert_string_equal(w.v[0], "id-a kept: held by pipe state A");
    assert_string_equal(w.v[1], "id-b aborted: older than 1h and held by no checkpoint of this "
                                "destination");
    assert_string_equal(w.v[2], "id-c kept: held by pipe state C");
    assert_string_equal(w.v[3], "id-d aborted: older than 1h and held by no checkpoint of this "
                                "destination");
    assert_false(set[0].aborted || set[2].aborted);
    assert_true(set[1].aborted && set[3].aborted);
    f->s->ops = saved;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(checkpoint_codec_schemas),
        cmocka_unit_test(checkpoint_codec_commit_interval),
        cmocka_unit_test_setup_teardown(checkpoint_codec_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(gc_claims_only_dead_pipelines, setup, teardown),
        cmocka_unit_test_setup_teardown(layout_checkpoint_and_marker, setup, teardown),
        cmocka_unit_test_setup_teardown(rollover_and_listing, setup, teardown),
        cmocka_unit_test_setup_teardown(fencing_stops_a_zombie, setup, teardown),
        cmocka_unit_test_setup_teardown(dead_letters_commit_with_their_epoch, setup, teardown),
        cmocka_unit_test_setup_teardown(schema_record_added_columns_and_drift, setup, teardown),
        cmocka_unit_test_setup_teardown(record_changed_by_another_writer_before_the_point, setup,
                                        teardown),
        cmocka_unit_test(layout_keys_built_and_parsed),
        cmocka_unit_test_setup_teardown(refused_options_and_names, setup, teardown),
        cmocka_unit_test_setup_teardown(abort_leaves_nothing_and_gc_collects, setup, teardown),
        cmocka_unit_test_setup_teardown(gc_and_open_remove_stale_temp_files, setup, teardown),
        cmocka_unit_test_setup_teardown(table_name_of_255_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(recovery_at_open_sweeps_staging, setup, teardown),
        cmocka_unit_test_setup_teardown(lanes_from_threads, setup, teardown),
        cmocka_unit_test_teardown(full_disk_commits_nothing_half, unmount_teardown),
        cmocka_unit_test_setup_teardown(unwritable_destination, setup, teardown),
        cmocka_unit_test(fail_at_every_op_then_recover),
        cmocka_unit_test(lost_reply_at_every_op_then_recover),
        cmocka_unit_test_setup_teardown(uploads_judged_and_orphans_aborted, setup, teardown),
        cmocka_unit_test_setup_teardown(uploads_held_by_callers_holds, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
