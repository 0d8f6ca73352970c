/*
 * S3's XML answers, parsed with expat into a small tree (util/xml.c, which bounds hostile
 * input), then read into the public shapes of include/s3l/s3.h (S3 API Reference: ListObjectsV2,
 * Error responses, CreateMultipartUpload, CompleteMultipartUpload, CopyObject, UploadPartCopy,
 * ListParts, ListMultipartUploads, DeleteObjects). Never string search: a key that contains
 * "<Error>" is only a key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "s3/s3_int.h"

static void copy_field(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

void s3l__etag_copy(char dst[S3L_S3_ETAG_MAX], const char *src, size_t len)
{
    while (len > 0 && (*src == '"' || *src == ' ')) {
        src++;
        len--;
    }
    while (len > 0 && (src[len - 1] == '"' || src[len - 1] == ' ' || src[len - 1] == '\r'))
        len--;
    if (len >= S3L_S3_ETAG_MAX)
        len = S3L_S3_ETAG_MAX - 1;
    memcpy(dst, src, len);
    dst[len] = 0;
}

int64_t s3l__parse_time_ns(const char *s)
{
    struct tm tm = {0};
    char mon[4] = {0};
    int ms = 0;
    static const char *months = "JanFebMarAprMayJunJulAugSepOctNovDec";
    if (!s)
        return 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
               &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) >= 6) {
        tm.tm_mon -= 1;
    } else if (sscanf(s, "%*3s, %2d %3s %4d %2d:%2d:%2d", &tm.tm_mday, mon, &tm.tm_year,
                      &tm.tm_hour, &tm.tm_min, &tm.tm_sec) == 6) {
        const char *m = strstr(months, mon);
        if (!m || mon[0] == 0 || (m - months) % 3 != 0)
            return 0;
        tm.tm_mon = (int)(m - months) / 3;
    } else {
        return 0;
    }
    tm.tm_year -= 1900;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return 0;
    return (int64_t)t * 1000000000 + (int64_t)ms * 1000000;
}

bool s3l__xml_error(const void *body, size_t len, struct s3l__s3_error_body *e)
{
    memset(e, 0, sizeof(*e));
    if (len == 0)
        return false;
    struct s3l__xml_doc doc;
    bool is_error = false;
    if (s3l__xml_parse(&doc, body, len, NULL) == 0 && strcmp(doc.root->name, "Error") == 0) {
        is_error = true;
        copy_field(e->code, sizeof(e->code), s3l__xml_text(doc.root, "Code"));
        copy_field(e->message, sizeof(e->message), s3l__xml_text(doc.root, "Message"));
        copy_field(e->request_id, sizeof(e->request_id), s3l__xml_text(doc.root, "RequestId"));
        copy_field(e->region, sizeof(e->region), s3l__xml_text(doc.root, "Region"));
        copy_field(e->server_time, sizeof(e->server_time),
                   s3l__xml_text(doc.root, "ServerTime"));
    }
    s3l__xml_doc_free(&doc);
    return is_error;
}

/* Parses body and checks that its root is `root`. */
static int open_doc(struct s3l__xml_doc *doc, const void *body, size_t len, const char *root,
                    struct s3l_error *err)
{
    int rc = s3l__xml_parse(doc, body, len, err);
    if (rc == 0 && strcmp(doc->root->name, root) != 0)
        rc = s3l_error_set(err, S3L_ECORRUPT, "expected <%s> in the answer, got <%.64s>", root,
                           doc->root->name);
    return rc;
}

static size_t count_children(const struct s3l__xml_node *n, const char *name)
{
    size_t k = 0;
    for (const struct s3l__xml_node *c = n->child; c; c = c->next)
        k += strcmp(c->name, name) == 0;
    return k;
}

static bool is_true(const char *s)
{
    return s && strcmp(s, "true") == 0;
}

static uint64_t to_u64(const char *s)
{
    return s ? strtoull(s, NULL, 10) : 0;
}

static char *dup_or_null(const char *s)
{
    return s && *s ? s3l_strdup(s) : NULL;
}

/* A copy of s, URL-decoded when url is set (encoding-type=url: %XX is a byte, '+' a space, as
 * S3 sends it; RGW sends '+' itself as %2B). Keys XML 1.0 cannot carry come back this way. */
static char *key_dup(const char *s, bool url)
{
    char *out = s3l_strdup(s);
    if (!out || !url)
        return out;
    char *w = out;
    for (const char *r = s; *r; r++) {
        int hi, lo;
        if (*r == '+') {
            *w++ = ' ';
        } else if (*r == '%' && (hi = s3l_hex_value(r[1])) >= 0 &&
                   (lo = s3l_hex_value(r[2])) >= 0) {
            *w++ = (char)(hi * 16 + lo);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return out;
}

static int fill_object(struct s3l_s3_object *o, const struct s3l__xml_node *c, bool url)
{
    const char *key = s3l__xml_text(c, "Key"), *etag = s3l__xml_text(c, "ETag");
    if (!key)
        return S3L_ECORRUPT;
    o->key = key_dup(key, url);
    if (!o->key)
        return S3L_ENOMEM;
    o->size = to_u64(s3l__xml_text(c, "Size"));
    o->mtime_ns = s3l__parse_time_ns(s3l__xml_text(c, "LastModified"));
    if (etag)
        s3l__etag_copy(o->etag, etag, strlen(etag));
    return 0;
}

int s3l__xml_list_objects(const void *body, size_t len, struct s3l_s3_list_page *page,
                          struct s3l_error *err)
{
    memset(page, 0, sizeof(*page));
    struct s3l__xml_doc doc;
    int rc = open_doc(&doc, body, len, "ListBucketResult", err);
    const struct s3l__xml_node *r = doc.root;
    if (rc == 0) {
        size_t no = count_children(r, "Contents"), np = count_children(r, "CommonPrefixes");
        page->objects = s3l_calloc(no ? no : 1, sizeof(*page->objects));
        page->prefixes = s3l_calloc(np ? np : 1, sizeof(*page->prefixes));
        page->truncated = is_true(s3l__xml_text(r, "IsTruncated"));
        const char *tok = s3l__xml_text(r, "NextContinuationToken");
        page->next_token = dup_or_null(tok);
        if (!page->objects || !page->prefixes || (tok && *tok && !page->next_token))
            rc = S3L_ENOMEM;
    }
    const char *enc = rc == 0 ? s3l__xml_text(r, "EncodingType") : NULL;
    bool url = enc && strcmp(enc, "url") == 0;
    for (const struct s3l__xml_node *c = rc == 0 ? r->child : NULL; c && rc == 0; c = c->next) {
        if (strcmp(c->name, "Contents") == 0) {
            rc = fill_object(&page->objects[page->n_objects], c, url);
            page->n_objects += rc == 0;
        } else if (strcmp(c->name, "CommonPrefixes") == 0) {
            const char *pfx = s3l__xml_text(c, "Prefix");
            page->prefixes[page->n_prefixes] = key_dup(pfx ? pfx : "", url);
            rc = page->prefixes[page->n_prefixes] ? 0 : S3L_ENOMEM;
            page->n_prefixes += rc == 0;
        }
    }
    if (rc == 0 && page->truncated && !page->next_token)
        rc = s3l_error_set(err, S3L_ECORRUPT, "truncated listing without a continuation token");
    if (rc == S3L_ECORRUPT || rc == S3L_ENOMEM)
        s3l_error_set(err, rc, "ListObjectsV2 answer: %s",
                      rc == S3L_ENOMEM ? "out of memory" : "an entry without <Key>");
    if (rc != 0)
        s3l_s3_list_page_free(page);
    s3l__xml_doc_free(&doc);
    return rc;
}

void s3l_s3_list_page_free(struct s3l_s3_list_page *p)
{
    if (!p)
        return;
    for (size_t i = 0; p->objects && i < p->n_objects; i++)
        s3l_free(p->objects[i].key);
    for (size_t i = 0; p->prefixes && i < p->n_prefixes; i++)
        s3l_free(p->prefixes[i]);
    s3l_free(p->objects);
    s3l_free(p->prefixes);
    s3l_free(p->next_token);
    memset(p, 0, sizeof(*p));
}

int s3l__xml_initiate(const void *body, size_t len, char **upload_id, struct s3l_error *err)
{
    *upload_id = NULL;
    struct s3l__xml_doc doc;
    int rc = open_doc(&doc, body, len, "InitiateMultipartUploadResult", err);
    if (rc == 0) {
        const char *id = s3l__xml_text(doc.root, "UploadId");
        if (!id || !*id)
            rc = s3l_error_set(err, S3L_ECORRUPT, "CreateMultipartUpload answer has no UploadId");
        else if (!(*upload_id = s3l_strdup(id)))
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
    }
    s3l__xml_doc_free(&doc);
    return rc;
}

int s3l__xml_complete(const void *body, size_t len, char etag[S3L_S3_ETAG_MAX],
                      struct s3l_error *err)
{
    etag[0] = 0;
    struct s3l__xml_doc doc;
    int rc = open_doc(&doc, body, len, "CompleteMultipartUploadResult", err);
    if (rc == 0) {
        const char *t = s3l__xml_text(doc.root, "ETag");
        if (t)
            s3l__etag_copy(etag, t, strlen(t));
    }
    s3l__xml_doc_free(&doc);
    return rc;
}

int s3l__xml_copy_result(const void *body, size_t len, char etag[S3L_S3_ETAG_MAX],
                         int64_t *mtime_ns, struct s3l_error *err)
{
    etag[0] = 0;
    struct s3l__xml_doc doc;
    int rc = s3l__xml_parse(&doc, body, len, err);
    if (rc == 0 && strcmp(doc.root->name, "CopyObjectResult") != 0 &&
        strcmp(doc.root->name, "CopyPartResult") != 0)
        rc = s3l_error_set(err, S3L_ECORRUPT, "expected <CopyObjectResult>, got <%.64s>",
                           doc.root->name);
    if (rc == 0) {
        const char *t = s3l__xml_text(doc.root, "ETag");
        if (!t || !*t)
            rc = s3l_error_set(err, S3L_ECORRUPT, "copy answer has no ETag");
        else
            s3l__etag_copy(etag, t, strlen(t));
        if (mtime_ns)
            *mtime_ns = s3l__parse_time_ns(s3l__xml_text(doc.root, "LastModified"));
    }
    s3l__xml_doc_free(&doc);
    return rc;
}

int s3l__xml_list_parts(const void *body, size_t len, struct s3l_s3_parts_page *page,
                        struct s3l_error *err)
{
    memset(page, 0, sizeof(*page));
    struct s3l__xml_doc doc;
    int rc = open_doc(&doc, body, len, "ListPartsResult", err);
    if (rc == 0) {
        size_t n = count_children(doc.root, "Part");
        page->parts = s3l_calloc(n ? n : 1, sizeof(*page->parts));
        if (!page->parts)
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
        page->truncated = is_true(s3l__xml_text(doc.root, "IsTruncated"));
        page->next_marker = (int)to_u64(s3l__xml_text(doc.root, "NextPartNumberMarker"));
    }
    for (const struct s3l__xml_node *c = rc == 0 ? doc.root->child : NULL; c; c = c->next) {
        if (strcmp(c->name, "Part") != 0)
            continue;
        struct s3l_s3_part *p = &page->parts[page->n++];
        const char *num = s3l__xml_text(c, "PartNumber"), *etag = s3l__xml_text(c, "ETag");
        p->number = (int)to_u64(num);
        p->size = to_u64(s3l__xml_text(c, "Size"));
        if (etag)
            s3l__etag_copy(p->etag, etag, strlen(etag));
        if (p->number < 1 || p->number > 10000) {
            rc = s3l_error_set(err, S3L_ECORRUPT, "ListParts answer: part number %.16s",
                               num ? num : "(missing)");
            break;
        }
    }
    if (rc != 0)
        s3l_s3_parts_page_free(page);
    s3l__xml_doc_free(&doc);
    return rc;
}

void s3l_s3_parts_page_free(struct s3l_s3_parts_page *p)
{
    if (!p)
        return;
    s3l_free(p->parts);
    memset(p, 0, sizeof(*p));
}

/* Whether s is in encoding-type=url form: ASCII letters and digits, %XX, and the characters
 * RGW's url_encode() leaves as they are ("-._~/!$'()*|", seen on RGW 16). Ceph RGW URL-encodes
 * <Key> of ListMultipartUploads when asked but does not say so (no <EncodingType> in the
 * answer, rgw_rest_s3.cc); a key that is not in this form was sent raw by a store that ignored
 * the parameter, and is kept as is. */
static bool url_form(const char *s)
{
    for (; *s; s++) {
        if (*s == '%') {
            if (s3l_hex_value(s[1]) < 0 || s3l_hex_value(s[2]) < 0)
                return false;
            s += 2;
        } else if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
                   !(*s >= '0' && *s <= '9') && !strchr("-._~/!$'()*|", *s)) {
            return false;
        }
    }
    return true;
}

int s3l__xml_list_uploads(const void *body, size_t len, struct s3l_s3_uploads_page *page,
                          struct s3l_error *err)
{
    memset(page, 0, sizeof(*page));
    struct s3l__xml_doc doc;
    int rc = open_doc(&doc, body, len, "ListMultipartUploadsResult", err);
    /* With <EncodingType>url</EncodingType> S3 URL-encodes Key, NextKeyMarker, KeyMarker,
     * Prefix and Delimiter (S3 API reference, ListMultipartUploads, "EncodingType"). */
    const char *enc = rc == 0 ? s3l__xml_text(doc.root, "EncodingType") : NULL;
    bool url = enc && strcmp(enc, "url") == 0;
    if (rc == 0) {
        size_t n = count_children(doc.root, "Upload");
        const char *next = s3l__xml_text(doc.root, "NextKeyMarker");
        page->uploads = s3l_calloc(n ? n : 1, sizeof(*page->uploads));
        page->truncated = is_true(s3l__xml_text(doc.root, "IsTruncated"));
        page->next_key_marker = next && *next ? key_dup(next, url) : NULL;
        page->next_upload_id_marker = dup_or_null(s3l__xml_text(doc.root, "NextUploadIdMarker"));
        if (!page->uploads || (next && *next && !page->next_key_marker))
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
    }
    for (const struct s3l__xml_node *c = rc == 0 ? doc.root->child : NULL; c; c = c->next) {
        if (strcmp(c->name, "Upload") != 0)
            continue;
        const char *k = s3l__xml_text(c, "Key"), *id = s3l__xml_text(c, "UploadId");
        if (!k || !id || !*id) {
            rc = s3l_error_set(err, S3L_ECORRUPT, "ListMultipartUploads: entry without Key");
            break;
        }
        struct s3l_s3_upload_info *u = &page->uploads[page->n++];
        u->key = key_dup(k, url || url_form(k));
        u->upload_id = s3l_strdup(id);
        const char *ini = s3l__xml_text(c, "Initiated");
        u->initiated_ns = ini ? s3l__parse_time_ns(ini) : 0;
        if (!u->key || !u->upload_id) {
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc != 0)
        s3l_s3_uploads_page_free(page);
    s3l__xml_doc_free(&doc);
    return rc;
}

void s3l_s3_uploads_page_free(struct s3l_s3_uploads_page *p)
{
    if (!p)
        return;
    for (size_t i = 0; p->uploads && i < p->n; i++) {
        s3l_free(p->uploads[i].key);
        s3l_free(p->uploads[i].upload_id);
    }
    s3l_free(p->uploads);
    s3l_free(p->next_key_marker);
    s3l_free(p->next_upload_id_marker);
    memset(p, 0, sizeof(*p));
}

int s3l__xml_delete_result(const void *body, size_t len, size_t *n_deleted,
                           struct s3l__s3_error_body *e, struct s3l_error *err)
{
    memset(e, 0, sizeof(*e));
    *n_deleted = 0;
    struct s3l__xml_doc doc;
    int rc = open_doc(&doc, body, len, "DeleteResult", err);
    for (const struct s3l__xml_node *c = rc == 0 ? doc.root->child : NULL; c; c = c->next) {
        if (strcmp(c->name, "Deleted") == 0) {
            (*n_deleted)++;
        } else if (strcmp(c->name, "Error") == 0 && e->code[0] == 0) {
            copy_field(e->code, sizeof(e->code), s3l__xml_text(c, "Code"));
            if (e->code[0] == 0)
                copy_field(e->code, sizeof(e->code), "Unknown");
            snprintf(e->message, sizeof(e->message), "key %.160s: %.80s",
                     s3l__xml_text(c, "Key") ? s3l__xml_text(c, "Key") : "?",
                     s3l__xml_text(c, "Message") ? s3l__xml_text(c, "Message") : "");
        }
    }
    s3l__xml_doc_free(&doc);
    return rc;
}
