/*
 * Listings of keys that XML 1.0 cannot carry as they are, against a real S3 server (Ceph RGW:
 * the s3 label's fixture through S3L_RGW_ENV, or one started here). ListMultipartUploads and
 * ListObjectsV2 ask for encoding-type=url (S3 API reference, "EncodingType"); a key with a
 * newline, a tab, a control character (PutObject only: RGW 16 answers 500 to
 * CreateMultipartUpload of a key with 0x01..0x1F other than tab and newline), spaces, '+', a
 * literal "%2F", XML's special characters and unicode must list back byte for byte, paged one
 * entry at a time, and a prefix holding a control character must list (RGW echoes <Prefix>
 * unencoded, as "&#x01;", which no XML 1.0 parser takes). The expected keys are the ones written
 * down here; the answers' parsing is also checked on documents shaped as AWS and RGW send them.
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

#include "s3/s3_int.h"
#include "rgw_store.h"
#include "s3_env.h"

static char bucket[64];
static char base[64]; /* a prefix of this run's own, so reruns on one store do not meet */

static int setup(void **state)
{
    (void)state;
    if (s3l_test_rgw_start("list", NULL) != 0)
        return -1;
    snprintf(base, sizeof(base), "list-%d-%ld", (int)getpid(), (long)time(NULL));
    return s3l_test_rgw_use(bucket, sizeof(bucket));
}

static int teardown(void **state)
{
    (void)state;
    return s3l_test_rgw_stop();
}

static struct s3l_s3_client *client(void)
{
    struct s3l_s3_config cfg = {.version = S3L_S3_CONFIG_VERSION};
    struct s3l_s3_client *c = NULL;
    struct s3l_error err = {0};
    if (s3l_test_s3_env(&cfg) != 0) /* region and endpoint, as the CLI reads them */
        fail_msg("S3LAND_TRACE cannot be opened");
    if (s3l_s3_client_new(&cfg, &c, &err) != 0)
        fail_msg("client: %s", err.message);
    return c;
}

static char *key_of(const char *rest)
{
    static char k[8][256];
    static int i;
    char *out = k[i++ % 8];
    snprintf(out, sizeof(k[0]), "%s/%s", base, rest);
    return out;
}

#define DOC(s) (s), sizeof(s) - 1

/* The answers as AWS shapes them (EncodingType announced: Key and NextKeyMarker encoded, a
 * space as '+') and as RGW 16 does (Key encoded, not announced, NextKeyMarker raw; a key a
 * store sent raw, not in URL form, is kept). */
static void parse_shapes(void **state)
{
    (void)state;
    struct s3l_error err = {0};
    struct s3l_s3_uploads_page p;
    static const char aws[] =
        "<ListMultipartUploadsResult><Bucket>b</Bucket><EncodingType>url</EncodingType>"
        "<NextKeyMarker>d%2Fa%0Ab+c%2B</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>"
        "<IsTruncated>true</IsTruncated>"
        "<Upload><Key>d%2F%01x+y%C3%A9</Key><UploadId>u1</UploadId></Upload>"
        "<Upload><Key>d%2Fa%0Ab+c%2B</Key><UploadId>u2</UploadId></Upload>"
        "</ListMultipartUploadsResult>";
    assert_int_equal(s3l__xml_list_uploads(DOC(aws), &p, &err), 0);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.uploads[0].key, "d/\x01x y\xc3\xa9");
    assert_string_equal(p.uploads[1].key, "d/a\nb c+");
    assert_string_equal(p.next_key_marker, "d/a\nb c+");
    assert_string_equal(p.next_upload_id_marker, "u2");
    assert_true(p.truncated);
    s3l_s3_uploads_page_free(&p);

    static const char rgw[] =
        "<ListMultipartUploadsResult><Bucket>b</Bucket><Prefix>d/</Prefix>"
        "<NextKeyMarker>d/raw key+%2F&amp;</NextKeyMarker><IsTruncated>false</IsTruncated>"
        "<Upload><Key>d/a%0Ab%20c%C3%A9%2B%252F</Key><UploadId>u1</UploadId></Upload>"
        "<Upload><Key>d/raw key+%2F&amp;</Key><UploadId>u2</UploadId></Upload>"
        "<Upload><Key>d/100%</Key><UploadId>u3</UploadId></Upload>"
        "<Upload><Key>d/!$&apos;()*|%7E</Key><UploadId>u4</UploadId></Upload>"
        "</ListMultipartUploadsResult>";
    assert_int_equal(s3l__xml_list_uploads(DOC(rgw), &p, &err), 0);
    assert_int_equal(p.n, 4);
    assert_string_equal(p.uploads[0].key, "d/a\nb c\xc3\xa9+%2F");
    assert_string_equal(p.uploads[1].key, "d/raw key+%2F&");
    assert_string_equal(p.uploads[2].key, "d/100%");
    assert_string_equal(p.uploads[3].key, "d/!$'()*|~");
    assert_string_equal(p.next_key_marker, "d/raw key+%2F&");
    s3l_s3_uploads_page_free(&p);
}

/* Keys of uploads created here, in S3's order (UTF-8 bytes). */
static const char *const up_rest[] = {
    "a\nb c\xc3\xa9+%2F\t&<>\"'.x", /* newline, space, unicode, '+', literal %2F, tab, XML */
    "a\nz",
    "p!\"#$%&'()*+,-.:;<=>?@[\\]^_`{|}~", /* all of printable ASCII's punctuation */
    "plain",
    "\xc3\xbcn\xc3\xaf c\xc3\xb6" "d\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac", /* "ünï cödé/日本" */
};
#define N_UP (sizeof(up_rest) / sizeof(up_rest[0]))

/* Every upload under prefix, paged max at a time, into keys[] (owned by the caller). */
static size_t list_all(struct s3l_s3_client *c, const char *prefix, int max, char **keys,
                       char **ids, size_t cap)
{
    size_t n = 0;
    char *km = NULL, *im = NULL;
    for (int pages = 0; pages < 20; pages++) {
        struct s3l_s3_uploads_page p;
        OK(s3l_s3_list_uploads(c, bucket, prefix, km, im, max, &p, err));
        assert_true(p.n <= (size_t)max);
        for (size_t i = 0; i < p.n; i++) {
            assert_true(n < cap);
            keys[n] = p.uploads[i].key;
            ids[n++] = p.uploads[i].upload_id;
            p.uploads[i].key = p.uploads[i].upload_id = NULL;
        }
        s3l_free(km);
        s3l_free(im);
        km = p.next_key_marker;
        im = p.next_upload_id_marker;
        p.next_key_marker = p.next_upload_id_marker = NULL;
        bool more = p.truncated;
        s3l_s3_uploads_page_free(&p);
        if (!more)
            break;
    }
    s3l_free(km);
    s3l_free(im);
    return n;
}

static void free_all(char **keys, char **ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        s3l_free(keys[i]);
        s3l_free(ids[i]);
    }
}

static void uploads_list_back(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client();
    char *made[N_UP];
    for (size_t i = 0; i < N_UP; i++)
        OK(s3l_s3_create_multipart(c, bucket, key_of(up_rest[i]), NULL, &made[i], err));

    char *keys[16], *ids[16];
    for (int max = 1; max <= 1000; max += 999) { /* one per page (markers round trip), and all */
        char pfx[80];
        snprintf(pfx, sizeof(pfx), "%s/", base);
        size_t n = list_all(c, pfx, max, keys, ids, 16);
        assert_int_equal(n, N_UP);
        for (size_t i = 0; i < n; i++) {
            assert_string_equal(keys[i], key_of(up_rest[i]));
            assert_string_equal(ids[i], made[i]);
        }
        free_all(keys, ids, n);
    }

    /* A prefix with a newline: exactly the two keys under it. */
    size_t n = list_all(c, key_of("a\n"), 1000, keys, ids, 16);
    assert_int_equal(n, 2);
    assert_string_equal(keys[0], key_of(up_rest[0]));
    assert_string_equal(keys[1], key_of(up_rest[1]));
    free_all(keys, ids, n);

    /* Prefixes with a control character: sent up to it, the rest matched by the client. */
    const char *ctl[] = {"a\x01", "a\nb\x1f", "\x01"};
    for (size_t i = 0; i < 3; i++) {
        n = list_all(c, key_of(ctl[i]), 1000, keys, ids, 16);
        assert_int_equal(n, 0);
    }
    n = list_all(c, "\x01", 1000, keys, ids, 16);
    assert_int_equal(n, 0);

    /* ListParts of the newline key (its answer echoes the key raw; its parts are what count). */
    uint8_t part[3] = {'a', 'b', 'c'};
    struct s3l_s3_part sent = {.number = 1};
    OK(s3l_s3_upload_part(c, bucket, key_of(up_rest[0]), made[0], part, 3, &sent, err));
    struct s3l_s3_parts_page pg;
    OK(s3l_s3_list_parts(c, bucket, key_of(up_rest[0]), made[0], 0, 0, &pg, err));
    assert_int_equal(pg.n, 1);
    assert_int_equal(pg.parts[0].size, 3);
    assert_string_equal(pg.parts[0].etag, "900150983cd24fb0d6963f7d28e17f72"); /* MD5("abc") */
    s3l_s3_parts_page_free(&pg);

    for (size_t i = 0; i < N_UP; i++) {
        OK(s3l_s3_abort_multipart(c, bucket, key_of(up_rest[i]), made[i], err));
        s3l_free(made[i]);
    }
    char pfx[80];
    snprintf(pfx, sizeof(pfx), "%s/", base);
    assert_int_equal(list_all(c, pfx, 1000, keys, ids, 16), 0);
    s3l_s3_client_free(c);
}

/* ListObjectsV2 (encoding-type=url too) lists such keys back exactly, control characters
 * included (PutObject takes them), one per page and with a delimiter. */
static const char *const obj_rest[] = {
    "o/\x01" "ctl",
    "o/a\nb\rc\td e+%2F&<\xc3\xa9",
    "o/d\x1f/x",
    "o/plain",
};
#define N_OBJ (sizeof(obj_rest) / sizeof(obj_rest[0]))

static int collect(void *ctx, const struct s3l_s3_object *o)
{
    char **out = ctx;
    size_t i = 0;
    while (out[i])
        i++;
    out[i] = s3l_strdup(o->key);
    return 0;
}

static void objects_list_back(void **state)
{
    (void)state;
    struct s3l_s3_client *c = client();
    for (size_t i = 0; i < N_OBJ; i++)
        OK(s3l_s3_put_object(c, bucket, key_of(obj_rest[i]), "x", 1, NULL, NULL, err));
    char *got[N_OBJ + 2] = {0};
    OK(s3l_s3_list_all(c, bucket, key_of("o/"), collect, got, err));
    for (size_t i = 0; i < N_OBJ; i++) {
        assert_non_null(got[i]);
        assert_string_equal(got[i], key_of(obj_rest[i]));
        s3l_free(got[i]);
    }
    assert_null(got[N_OBJ]);

    struct s3l_s3_list_page p;
    OK(s3l_s3_list_objects(c, bucket, key_of("o/"), "/", NULL, 1000, &p, err));
    assert_int_equal(p.n_objects, 3);
    assert_int_equal(p.n_prefixes, 1);
    assert_string_equal(p.prefixes[0], key_of("o/d\x1f/"));
    s3l_s3_list_page_free(&p);

    /* One by one: DeleteObjects carries keys in an XML body, and XML 1.0 has no way to write
     * 0x01 or 0x1F (RGW answers 400). */
    for (size_t i = 0; i < N_OBJ; i++)
        OK(s3l_s3_delete_object(c, bucket, key_of(obj_rest[i]), err));
    OK(s3l_s3_list_objects(c, bucket, key_of("o/"), NULL, NULL, 1000, &p, err));
    assert_int_equal(p.n_objects, 0);
    s3l_s3_list_page_free(&p);
    s3l_s3_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_shapes),
        cmocka_unit_test(uploads_list_back),
        cmocka_unit_test(objects_list_back),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
