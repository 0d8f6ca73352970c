/*
 * Unit tests of the pipeline runner's bookkeeping: URL canonicalisation, the deterministic
 * pipeline id, input identity, positions and their hash, refusal of rotated / truncated /
 * rewritten inputs, and the JSON round trip of positions.
 *
 * Expected values come from independent sources, written down here:
 * - pipeline ids from Python's uuid module (RFC 4122 v5), e.g.
 *   python3 -c "import uuid; print(uuid.uuid5(uuid.UUID('221245c7-ac52-4405-b24f-f3fd2fdc3460'),
 *               'file:///tmp/lake\nflights\n/data/a.ndjson\n/data/b.ndjson\n'))"
 * - hashes from coreutils: printf hello | sha256sum; and for 5000 'a' bytes the last 4096 of them:
 *   head -c 5000 /dev/zero | tr '\0' a | tail -c 4096 | sha256sum.
 */
#include <fcntl.h>
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

#include "s3l/input.h"
#include "s3l/pipeline.h"
#include "s3l/store.h"
#include "pipeline/runner.h"
#include "util/util.h"

#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_HELLO "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
#define SHA_4096A "c93eee2d0db02f10acc7460d9576e122dcf8cd53c4bf8dfcae1b3e74ebcfff5a"

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/s3l_test_pipeline_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void canon(const char *in, const char *want)
{
    char *out = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_url_canonical(in, &out, &err), 0);
    assert_string_equal(out, want);
    s3l_free(out);
}

/* file://CWD/rel as s3l_url_canonical makes it (a static buffer). */
static const char *want_dir(const char *rel)
{
    static char buf[4200];
    char *cwd = getcwd(NULL, 0);
    snprintf(buf, sizeof(buf), "file://%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, rel);
    free(cwd);
    return buf;
}

static void url_canonical_forms(void **state)
{
    (void)state;
    canon("file:///tmp/lake", "file:///tmp/lake");
    canon("file:///tmp/lake/", "file:///tmp/lake");
    canon("file:///tmp//lake///", "file:///tmp/lake");
    canon("file:///tmp/./x/../lake", "file:///tmp/lake");
    canon("/var/lake/", "file:///var/lake");
    canon("s3://bucket/raw/", "s3://bucket/raw");
    canon("s3://bucket", "s3://bucket");

    char *cwd = getcwd(NULL, 0), want[4200];
    assert_non_null(cwd);
    snprintf(want, sizeof(want), "file://%s/lake", strcmp(cwd, "/") == 0 ? "" : cwd);
    free(cwd);
    canon("lake", want);
    canon("./lake/", want);

    char *out = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_url_canonical("file://relative/x", &out, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "file://relative/x"));
    s3l_error_clear(&err);
    assert_int_equal(s3l_url_canonical("http://x/y", &out, &err), S3L_EINVALID_CONFIG);
    assert_non_null(strstr(err.message, "unknown scheme"));
    s3l_error_clear(&err);
    assert_int_equal(s3l_url_canonical("", &out, &err), S3L_EINVALID_CONFIG);
    s3l_error_clear(&err);
    assert_int_equal(s3l_url_canonical("s3://", &out, &err), S3L_EINVALID_CONFIG);
    /* Issue 10 items 8 and 18: refused, each with why. */
    static const struct {
        const char *url, *says;
    } refused[] = {
        {"s3:/bucket", "starts like a URL"},
        {"s3:bucket/x", "starts like a URL"},
        {"file:/tmp/x", "starts like a URL"},
        {"S3+x.y-z:/a", "starts like a URL"},
        {"file:///", "filesystem root"},
        {"file:///..", "filesystem root"},
        {"file:///tmp/..", "filesystem root"},
        {"/", "filesystem root"},
        {"s3://bucket/x/../../evil/p", "\"..\" segment"},
        {"s3://bucket/./p", "\".\" segment"},
        {"s3://bucket/p/..", "\"..\" segment"},
        {"s3://bucket/p/\xff", "not valid UTF-8"},
        {"s3://bucket/p/\xc0\xaf", "not valid UTF-8"},
        {"s3://bucket/\xed\xa0\x80", "not valid UTF-8"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        s3l_error_clear(&err);
        out = NULL;
        assert_int_equal(s3l_url_canonical(refused[i].url, &out, &err), S3L_EINVALID_CONFIG);
        assert_null(out);
        if (!strstr(err.message, refused[i].says))
            fail_msg("%s: %s", refused[i].url, err.message);
    }
    canon("./s3:/bucket", want_dir("s3:/bucket"));
    canon("s3://bucket/a..b/.x/\xc3\xa9", "s3://bucket/a..b/.x/\xc3\xa9");
}

/* A destination reached through a symbolic link is its target (the same pipeline id): the
 * longest existing prefix is resolved, the part that does not exist yet is kept. */
static void url_canonical_resolves_symlinks(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/s3l-canon-XXXXXX", *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char *real = realpath(dir, NULL), a[9000], b[9000], link[4200], target[4200];
    assert_non_null(real);
    snprintf(target, sizeof(target), "%s/lake", real);
    snprintf(link, sizeof(link), "%s/lulink", dir);
    assert_int_equal(mkdir(target, 0700), 0);
    assert_int_equal(symlink(target, link), 0);
    snprintf(a, sizeof(a), "file://%s/", link);
    snprintf(b, sizeof(b), "file://%s", target);
    canon(a, b); /* the link itself */
    snprintf(a, sizeof(a), "%s/not/yet/../there", link);
    snprintf(b, sizeof(b), "file://%s/not/there", target);
    canon(a, b); /* an existing prefix through the link, then segments that do not exist */
    canon("/nonexistent-s3l-dir/x/", "file:///nonexistent-s3l-dir/x");
    assert_int_equal(unlink(link), 0);
    assert_int_equal(rmdir(target), 0);
    assert_int_equal(rmdir(dir), 0);
    free(real);
}

static void pipeline_id_is_uuid5_of_sorted_paths(void **state)
{
    (void)state;
    char id[S3L_UUID_STR_LEN + 1];
    struct s3l_error err = {0};
    const char *paths[] = {"/data/b.ndjson", "/data/a.ndjson"};
    assert_int_equal(s3l_pipeline_id("file:///tmp/lake", "flights", paths, 2, id, &err), 0);
    assert_string_equal(id, "6db72ef7-b660-5cee-8e22-7070c0df9395");
    /* The order the inputs are given in does not matter. */
    const char *paths2[] = {"/data/a.ndjson", "/data/b.ndjson"};
    char id2[S3L_UUID_STR_LEN + 1];
    assert_int_equal(s3l_pipeline_id("file:///tmp/lake", "flights", paths2, 2, id2, &err), 0);
    assert_string_equal(id, id2);
    const char *stdin_path[] = {"-"};
    assert_int_equal(s3l_pipeline_id("s3://bucket/raw", "sales/orders", stdin_path, 1, id, &err),
                     0);
    assert_string_equal(id, "f7af603c-58da-58ad-9b4d-26fbd4f662c5");
    assert_int_equal(s3l_pipeline_id("file:///tmp/lake", "flights", NULL, 0, id, &err), 0);
    assert_string_equal(id, "eb637f7c-6d15-5d73-b350-722389fd013d");
    assert_true(s3l_uuid_valid(id));
    assert_int_equal(s3l_pipeline_id("", "flights", NULL, 0, id, &err), S3L_EINVALID_ARGUMENT);
}

static void uuid_validation(void **state)
{
    (void)state;
    assert_true(s3l_uuid_valid("221245c7-ac52-4405-b24f-f3fd2fdc3460"));
    assert_true(s3l_uuid_valid("221245C7-AC52-4405-B24F-F3FD2FDC3460"));
    assert_false(s3l_uuid_valid("221245c7-ac52-4405-b24f-f3fd2fdc346"));
    assert_false(s3l_uuid_valid("221245c7+ac52-4405-b24f-f3fd2fdc3460"));
    assert_false(s3l_uuid_valid("g21245c7-ac52-4405-b24f-f3fd2fdc3460"));
    assert_false(s3l_uuid_valid(NULL));
}

static void open_and_advance_hashes_the_window(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof(path), "%s/hello.txt", tmpdir);
    write_file(path, "hello world", 11);
    struct s3l_input_position pos;
    int fd;
    struct s3l_error err = {0};
    assert_int_equal(s3l_input_open(path, &pos, &fd, &err), 0);
    assert_true(pos.replayable);
    assert_non_null(strstr(pos.path, "/s3l_test_pipeline_"));
    assert_int_equal(pos.path[0], '/');
    assert_int_equal(pos.offset, 0);
    assert_string_equal(pos.sha256, SHA_EMPTY);
    assert_int_equal(s3l_input_position_advance(&pos, fd, 5, &err), 0);
    assert_string_equal(pos.sha256, SHA_HELLO);
    assert_int_equal(pos.offset, 5);
    assert_true(pos.mid_line); /* "hello" is not followed by its line break yet */
    close(fd);
    s3l_input_position_cleanup(&pos);
    /* mid_line from the byte before the offset: LF and CR end lines, anything else does not. */
    write_file(path, "ab\ncd\r\nef", 10);
    assert_int_equal(s3l_input_open(path, &pos, &fd, &err), 0);
    assert_false(pos.mid_line); /* offset 0 */
    static const struct {
        uint64_t off;
        bool mid;
    } at[] = {{2, true}, {3, false}, {5, true}, {6, false}, {7, false}, {10, true}};
    for (size_t i = 0; i < S3L_ARRAY_LEN(at); i++) {
        assert_int_equal(s3l_input_position_advance(&pos, fd, at[i].off, &err), 0);
        assert_int_equal(pos.mid_line, at[i].mid);
    }
    close(fd);
    s3l_input_position_cleanup(&pos);
    write_file(path, "hello world", 11);
    assert_int_equal(s3l_input_open(path, &pos, &fd, &err), 0);
    /* The file position is untouched: a read still starts at 0. */
    char c;
    assert_int_equal(read(fd, &c, 1), 1);
    assert_int_equal(c, 'h');
    /* Beyond the end of the file. */
    assert_int_equal(s3l_input_position_advance(&pos, fd, 12, &err), S3L_EIO);
    assert_non_null(strstr(err.message, "shorter than offset 12"));
    close(fd);
    s3l_input_position_cleanup(&pos);

    /* A window of exactly 4096 bytes out of a longer prefix. */
    char *big = malloc(5000);
    assert_non_null(big);
    memset(big, 'a', 5000);
    snprintf(path, sizeof(path), "%s/big.txt", tmpdir);
    write_file(path, big, 5000);
    free(big);
    assert_int_equal(s3l_input_open(path, &pos, &fd, &err), 0);
    assert_int_equal(s3l_input_position_advance(&pos, fd, 5000, &err), 0);
    assert_string_equal(pos.sha256, SHA_4096A);
    close(fd);
    s3l_input_position_cleanup(&pos);
}

static void open_errors_name_the_input(void **state)
{
    (void)state;
    char path[300];
    struct s3l_input_position pos;
    int fd;
    struct s3l_error err = {0};
    snprintf(path, sizeof(path), "%s/missing.ndjson", tmpdir);
    assert_int_equal(s3l_input_open(path, &pos, &fd, &err), S3L_ENOT_FOUND);
    assert_non_null(strstr(err.message, "missing.ndjson"));
    s3l_error_clear(&err);
    assert_int_equal(s3l_input_open(tmpdir, &pos, &fd, &err), S3L_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "is a directory"));
}

/* Records the position at offset 6 of "line1\nline2\n" at path; returns the open fd. */
static void record_at_6(const char *path, struct s3l_input_position *rec)
{
    int fd;
    struct s3l_error err = {0};
    write_file(path, "line1\nline2\n", 12);
    assert_int_equal(s3l_input_open(path, rec, &fd, &err), 0);
    assert_int_equal(s3l_input_position_advance(rec, fd, 6, &err), 0);
    close(fd);
}

static int verify_now(const char *path, const struct s3l_input_position *rec, struct s3l_error *err)
{
    struct s3l_input_position cur;
    int fd;
    assert_int_equal(s3l_input_open(path, &cur, &fd, err), 0);
    int rc = s3l_input_position_verify(rec, &cur, fd, err);
    close(fd);
    s3l_input_position_cleanup(&cur);
    return rc;
}

static void verify_refuses_changed_inputs(void **state)
{
    (void)state;
    char path[300], other[300];
    snprintf(path, sizeof(path), "%s/log.ndjson", tmpdir);
    snprintf(other, sizeof(other), "%s/log.ndjson.new", tmpdir);
    struct s3l_input_position rec;
    struct s3l_error err = {0};

    /* Appended: accepted. */
    record_at_6(path, &rec);
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    fputs("line3\n", f);
    fclose(f);
    assert_int_equal(verify_now(path, &rec, &err), 0);

    /* Rewritten in place (same inode, same length). */
    write_file(path, "LINE1\nline2\n", 12);
    assert_int_equal(verify_now(path, &rec, &err), S3L_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "rewritten"));
    assert_non_null(strstr(err.message, "log.ndjson"));
    s3l_error_clear(&err);

    /* Truncated. */
    write_file(path, "li", 2);
    assert_int_equal(verify_now(path, &rec, &err), S3L_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "truncated"));
    s3l_error_clear(&err);
    s3l_input_position_cleanup(&rec);

    /* Rotated: another file with the same bytes renamed over the path. */
    record_at_6(path, &rec);
    write_file(other, "line1\nline2\n", 12);
    assert_int_equal(rename(other, path), 0);
    assert_int_equal(verify_now(path, &rec, &err), S3L_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "replaced"));
    s3l_error_clear(&err);

    /* A recorded stream position never blocks; a recorded file read as a stream does. */
    struct s3l_input_position stream = {0};
    stream.path = "-";
    struct s3l_input_position cur = rec;
    cur.replayable = false;
    assert_int_equal(s3l_input_position_verify(&stream, &cur, -1, &err), 0);
    assert_int_equal(s3l_input_position_verify(&rec, &cur, -1, &err), S3L_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "now a stream"));
    s3l_input_position_cleanup(&rec);
}

static void positions_json_round_trip(void **state)
{
    (void)state;
    struct s3l_input_position in[2];
    memset(in, 0, sizeof(in));
    in[0].path = s3l_strdup("/data/a b.csv");
    in[0].replayable = true;
    in[0].dev = 2049;
    in[0].ino = 9007199254740993ULL; /* above 2^53: must survive as an integer */
    in[0].offset = 123456789012ULL;
    strcpy(in[0].sha256, SHA_HELLO);
    in[0].csv_header = s3l_strdup("a,\"b \"\"x\"\"\",c");
    in[0].line = 4000000001ULL;
    in[0].mid_line = true;
    in[0].csv_delimiter = '\t';
    in[0].compression = S3L_INPUT_ZSTD;
    in[0].raw_size = 5000000000ULL;
    in[0].raw_done = true;
    in[1].path = s3l_strdup("-");
    in[1].offset = 42;
    char *json = NULL;
    assert_int_equal(s3l_positions_to_json(in, 2, &json), 0);
    struct s3l_input_position *out = NULL;
    size_t n = 0;
    struct s3l_error err = {0};
    assert_int_equal(s3l_positions_from_json(json, strlen(json), &out, &n, &err), 0);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(out[i].path, in[i].path);
        assert_int_equal(out[i].replayable, in[i].replayable);
        assert_true(out[i].dev == in[i].dev);
        assert_true(out[i].ino == in[i].ino);
        assert_true(out[i].offset == in[i].offset);
        assert_string_equal(out[i].sha256, in[i].sha256);
        assert_true(out[i].line == in[i].line);
        assert_int_equal(out[i].mid_line, in[i].mid_line);
        assert_int_equal(out[i].csv_delimiter, in[i].csv_delimiter);
        assert_int_equal(out[i].compression, in[i].compression);
        assert_true(out[i].raw_size == in[i].raw_size);
        assert_int_equal(out[i].raw_done, in[i].raw_done);
    }
    assert_string_equal(out[0].csv_header, in[0].csv_header);
    assert_null(out[1].csv_header);
    assert_ptr_equal(s3l_positions_find(out, n, "-"), &out[1]);
    assert_null(s3l_positions_find(out, n, "/nope"));
    s3l_positions_free(out, n);
    s3l_free(json);
    for (size_t i = 0; i < 2; i++)
        s3l_input_position_cleanup(&in[i]);

    /* Corrupt forms are refused with what was wrong. */
    const char *bad[] = {
        "not json",
        "{\"version\":2,\"inputs\":[]}",
        "{\"version\":1,\"inputs\":[{\"path\":\"/x\"}]}",
        /* A compression we do not know, one without raw_size, a delimiter of two bytes. */
        "{\"version\":1,\"inputs\":[{\"path\":\"/x\",\"replayable\":true,\"sha256\":\"\","
        "\"dev\":1,\"ino\":1,\"offset\":0,\"compression\":\"xz\",\"raw_size\":0}]}",
        "{\"version\":1,\"inputs\":[{\"path\":\"/x\",\"replayable\":true,\"sha256\":\"\","
        "\"dev\":1,\"ino\":1,\"offset\":0,\"compression\":\"gzip\"}]}",
        "{\"version\":1,\"inputs\":[{\"path\":\"/x\",\"replayable\":true,\"sha256\":\"\","
        "\"dev\":1,\"ino\":1,\"offset\":0,\"csv_delimiter\":\";;\"}]}",
        "{\"version\":1,\"inputs\":[{\"path\":\"/x\",\"replayable\":true,\"sha256\":\"\","
        "\"dev\":1,\"ino\":-1,\"offset\":0}]}",
    };
    for (size_t i = 0; i < S3L_ARRAY_LEN(bad); i++) {
        s3l_error_clear(&err);
        assert_int_equal(s3l_positions_from_json(bad[i], strlen(bad[i]), &out, &n, &err),
                         S3L_ECORRUPT);
        assert_null(out);
    }
    assert_non_null(strstr(err.message, "\"ino\""));
    /* A checkpoint written before "line" and "mid_line" existed: line 0 (unknown), not mid-line;
     * a mid_line that is not a boolean is refused. */
    const char *old = "{\"version\":1,\"inputs\":[{\"path\":\"/x\",\"replayable\":true,"
                      "\"sha256\":\"\",\"dev\":1,\"ino\":2,\"offset\":3}]}";
    assert_int_equal(s3l_positions_from_json(old, strlen(old), &out, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_true(out[0].line == 0 && !out[0].mid_line && out[0].offset == 3);
    s3l_positions_free(out, n);
    const char *badmid = "{\"version\":1,\"inputs\":[{\"path\":\"/x\",\"replayable\":true,"
                         "\"sha256\":\"\",\"dev\":1,\"ino\":2,\"offset\":3,\"mid_line\":1}]}";
    assert_int_equal(s3l_positions_from_json(badmid, strlen(badmid), &out, &n, &err),
                     S3L_ECORRUPT);
    s3l_error_clear(&err);
    /* An empty list is fine. */
    const char *empty = "{\"version\":1,\"inputs\":[]}";
    assert_int_equal(s3l_positions_from_json(empty, strlen(empty), &out, &n, &err), 0);
    assert_int_equal(n, 0);
}

/* An object prefix's position: the object source's state kept whole, read back, checked. */
static void object_prefix_positions(void **state)
{
    (void)state;
    const char *json =
        "{\"version\":1,\"inputs\":[{\"path\":\"s3://b/raw/\",\"replayable\":true,\"dev\":0,"
        "\"ino\":0,\"offset\":1234,\"sha256\":\"\",\"line\":17,\"object_source\":{\"version\":1,"
        "\"done\":[\"part-0\",\"part-1\"],\"current\":{\"key\":\"part-2\",\"etag\":\"e2\","
        "\"offset\":1234,\"line\":17}}}]}";
    struct s3l_input_position *out = NULL;
    size_t n = 0;
    struct s3l_error err = {0};
    assert_int_equal(s3l_positions_from_json(json, strlen(json), &out, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_true(out[0].object && out[0].replayable && out[0].offset == 1234 && out[0].line == 17);
    assert_non_null(out[0].object_state);
    assert_non_null(strstr(out[0].object_state, "\"key\":\"part-2\""));
    /* Written again (no listing: the recorded state), it is the same text. */
    char *again = NULL;
    assert_int_equal(s3l_positions_to_json(out, 1, &again), 0);
    assert_string_equal(again, json);
    s3l_free(again);
    /* A file at that path is refused, and the reverse; the same prefix verifies. */
    struct s3l_input_position file = {0};
    file.path = (char *)"s3://b/raw/";
    file.replayable = true;
    assert_int_equal(s3l_input_position_verify(&out[0], &file, -1, &err), S3L_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "an object prefix"));
    s3l_error_clear(&err);
    assert_int_equal(s3l_input_position_verify(&file, &out[0], -1, &err), S3L_EINVALID_INPUT);
    s3l_error_clear(&err);
    assert_int_equal(s3l_input_position_verify(&out[0], &out[0], -1, &err), 0);
    s3l_positions_free(out, n);
    /* A state that is not one, and an offset that is not the state's, are refused whole. */
    const char *bad[] = {
        "{\"version\":1,\"inputs\":[{\"path\":\"s3://b/raw/\",\"replayable\":true,\"dev\":0,"
        "\"ino\":0,\"offset\":0,\"sha256\":\"\",\"line\":1,\"object_source\":{\"version\":9}}]}",
        "{\"version\":1,\"inputs\":[{\"path\":\"s3://b/raw/\",\"replayable\":true,\"dev\":0,"
        "\"ino\":0,\"offset\":5,\"sha256\":\"\",\"line\":1,\"object_source\":{\"version\":1,"
        "\"done\":[],\"current\":null}}]}",
        "{\"version\":1,\"inputs\":[{\"path\":\"s3://b/raw/\",\"replayable\":true,\"dev\":0,"
        "\"ino\":0,\"offset\":0,\"sha256\":\"\",\"line\":1,\"object_source\":7}]}",
        "{\"version\":1,\"inputs\":[{\"path\":\"s3://b/raw/\",\"replayable\":true,\"dev\":0,"
        "\"ino\":0,\"offset\":9,\"sha256\":\"\",\"line\":1,\"object_source\":null}]}",
    };
    for (size_t i = 0; i < S3L_ARRAY_LEN(bad); i++) {
        s3l_error_clear(&err);
        assert_int_equal(s3l_positions_from_json(bad[i], strlen(bad[i]), &out, &n, &err),
                         S3L_ECORRUPT);
        assert_null(out);
    }
}

/* An object prefix's canonical URL: the store root (up to the last '/') canonical, then the
 * key prefix, which keeps its trailing '/' meaning (hand-written expectations). */
static void object_prefix_urls(void **state)
{
    (void)state;
    const char *in[][2] = {
        {"s3://b", "s3://b/"},
        {"s3://b/", "s3://b/"},
        {"s3://b/raw/", "s3://b/raw/"},
        {"s3://b/raw/part-", "s3://b/raw/part-"},
        {"s3://b/raw", "s3://b/raw"},
        {"file:///d//raw/", "file:///d/raw/"},
        {"file:///d/./raw/x", "file:///d/raw/x"},
    };
    for (size_t i = 0; i < S3L_ARRAY_LEN(in); i++) {
        struct s3l_input_position p;
        struct s3l_error err = {0};
        assert_true(s3l__object_input_is(in[i][0]));
        assert_int_equal(s3l__object_input_position(in[i][0], &p, &err), 0);
        assert_string_equal(p.path, in[i][1]);
        assert_true(p.object && p.replayable && p.offset == 0 && p.line == 1);
        s3l_input_position_cleanup(&p);
    }
    const char *bad[] = {"file:///x", "file://rel/x", "s3:///x", "file:///../"};
    for (size_t i = 0; i < S3L_ARRAY_LEN(bad); i++) {
        struct s3l_input_position p;
        struct s3l_error err = {0};
        assert_int_equal(s3l__object_input_position(bad[i], &p, &err), S3L_EINVALID_CONFIG);
        assert_non_null(strstr(err.message, bad[i]));
        s3l_input_position_cleanup(&p);
    }
    assert_false(s3l__object_input_is("/data/raw/part-1"));
    assert_false(s3l__object_input_is("-"));
}

static int collect_ids(void *ctx, const char *id)
{
    char *out = ctx;
    strcat(out, id);
    strcat(out, ";");
    return 0;
}

/* The checkpoint document here is written by hand in the destination's documented shape
 * (docs/internals/commit.md): "committed_epoch", "pending" (null or an object), "state". */
static void peek_and_list_checkpoints(void **state)
{
    (void)state;
    char url[300];
    snprintf(url, sizeof(url), "file://%s/lake", tmpdir);
    struct s3l_store_options so = {0};
    so.version = S3L_STORE_OPTIONS_VERSION;
    so.create = true;
    struct s3l_store *st = NULL;
    struct s3l_error err = {0};
    assert_int_equal(s3l_store_open(url, &so, &st, &err), 0);
    char *js = NULL;
    bool pending = true;
    uint64_t epoch = 9;
    /* No checkpoint: success with nothing. */
    assert_int_equal(s3l_pipeline_peek(st, "p1", &js, &pending, &epoch, &err), 0);
    assert_null(js);
    assert_false(pending);
    assert_int_equal(epoch, 0);
    const char *doc1 = "{\"pipeline\":\"p1\",\"generation\":3,\"committed_epoch\":7,"
                       "\"pending\":{\"epoch\":8},\"state\":{\"version\":1,\"inputs\":[]}}";
    const char *doc2 = "{\"pipeline\":\"p2\",\"generation\":1,\"committed_epoch\":1,"
                       "\"pending\":null,\"state\":null}";
    assert_int_equal(
        s3l_store_put(st, "_openetl/checkpoints/p1.json", doc1, strlen(doc1), NULL, NULL, &err), 0);
    assert_int_equal(
        s3l_store_put(st, "_openetl/checkpoints/p2.json", doc2, strlen(doc2), NULL, NULL, &err), 0);
    assert_int_equal(s3l_store_put(st, "_openetl/checkpoints/bad.json", "[1]", 3, NULL, NULL, &err),
                     0);
    assert_int_equal(s3l_pipeline_peek(st, "p1", &js, &pending, &epoch, &err), 0);
    assert_string_equal(js, "{\"version\":1,\"inputs\":[]}");
    assert_true(pending);
    assert_int_equal(epoch, 7);
    s3l_free(js);
    assert_int_equal(s3l_pipeline_peek(st, "p2", &js, &pending, &epoch, &err), 0);
    assert_null(js);
    assert_false(pending);
    assert_int_equal(epoch, 1);
    assert_int_equal(s3l_pipeline_peek(st, "bad", &js, NULL, NULL, &err), S3L_ECORRUPT);
    assert_non_null(strstr(err.message, "_openetl/checkpoints/bad.json"));
    char ids[256] = "";
    s3l_error_clear(&err);
    assert_int_equal(s3l_pipeline_list(st, collect_ids, ids, &err), 0);
    assert_string_equal(ids, "bad;p1;p2;");
    s3l_store_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(url_canonical_forms),
        cmocka_unit_test(url_canonical_resolves_symlinks),
        cmocka_unit_test(pipeline_id_is_uuid5_of_sorted_paths),
        cmocka_unit_test(uuid_validation),
        cmocka_unit_test(open_and_advance_hashes_the_window),
        cmocka_unit_test(open_errors_name_the_input),
        cmocka_unit_test(verify_refuses_changed_inputs),
        cmocka_unit_test(positions_json_round_trip),
        cmocka_unit_test(object_prefix_positions),
        cmocka_unit_test(object_prefix_urls),
        cmocka_unit_test(peek_and_list_checkpoints),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
