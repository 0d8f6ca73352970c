/*
 * Following a bucket into its region. A request signed for the wrong region is refused with the
 * right one named: a 301 PermanentRedirect (x-amz-bucket-region header), a 400
 * AuthorizationHeaderMalformed (its <Region> element), or any failure that carries an
 * x-amz-bucket-region header (a 403 on HeadBucket, for instance). Such a request is sent once
 * more, signed for that region (and, on AWS, to s3.REGION.amazonaws.com), and the client keeps
 * the region for the rest of its life, so that the next requests go there at once. The note
 * handler hears of each move once.
 * Sources: S3 API reference, "Error responses" (PermanentRedirect, AuthorizationHeaderMalformed)
 * and HeadBucket ("x-amz-bucket-region: the Region that the bucket is located in"); the AWS
 * SDKs' S3 region redirect (botocore's S3RegionRedirectorv2) does the same.
 */
#include <stdio.h>

#include "s3/s3_int.h"

static s3l_s3_note_fn note_fn;
static void *note_ctx;

void s3l_s3_set_note_handler(s3l_s3_note_fn fn, void *ctx)
{
    note_fn = fn;
    note_ctx = ctx;
}

/* A region name as AWS spells them: 1-63 bytes of [a-z0-9-]. Anything else is not followed. */
static bool region_ok(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '-'))
            return false;
    return n > 0 && n < 64;
}

/* Points c at region (mu held): its name, and on AWS its host. 0 or S3L_ENOMEM. */
static int move_client(struct s3l_s3_client *c, const char *region)
{
    char *name = s3l_strdup(region);
    char *host = NULL;
    if (name && c->aws) {
        struct s3l_buf h;
        s3l_buf_init(&h, 256);
        uint8_t *p = NULL;
        size_t n;
        if (s3l_buf_printf(&h, "s3.%s.amazonaws.com", region) == 0 &&
            s3l_buf_detach(&h, &p, &n) == 0)
            host = (char *)p;
        s3l_buf_free(&h);
    }
    if (!name || (c->aws && !host)) {
        s3l_free(name);
        s3l_free(host);
        return S3L_ENOMEM;
    }
    s3l_free(c->region);
    c->region = name;
    if (host) {
        s3l_free(c->host);
        c->host = host;
    }
    return 0;
}

bool s3l__region_follow(struct s3l_s3_client *c, struct s3l__http_req *r)
{
    const char *region = r->bucket_region;
    if (r->rc == 0 || r->region_moved || !region_ok(region) ||
        strcmp(region, r->signed_region) == 0)
        return false; /* no answer of a region, or the very one this attempt was signed for */
    if (strcmp(region, c->region) != 0) {
        char was[64];
        snprintf(was, sizeof(was), "%s", c->region);
        if (move_client(c, region) != 0)
            return false; /* the failure stands, with its message naming the region */
        if (note_fn) {
            char msg[400];
            snprintf(msg, sizeof(msg),
                     "bucket %.63s is in region %s, not %s: its requests go to %s from now on "
                     "(give the region to skip this redirect)",
                     r->bucket ? r->bucket : "", region, was, region);
            note_fn(note_ctx, msg);
        }
    }
    r->region_moved = true; /* once per request: a store that moves it again is refused */
    return true;
}
