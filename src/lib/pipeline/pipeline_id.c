/*
 * Who a pipeline is: the canonical destination URL and the deterministic pipeline id.
 *
 * The id must not depend on how the user spelled things: a trailing slash, "./" segments, a
 * relative input path, the directory the command ran from, or a symbolic link on the way to the
 * destination. So the URL is normalised lexically, then the longest prefix of its path that
 * exists is replaced by its real path (realpath(3); the rest may not exist yet on the first run),
 * and the input paths are real paths, sorted. The id is a name-based UUID, version 5 (RFC 4122 section 4.3: SHA-1 over
 * the namespace UUID followed by the name), computed by libuuid's uuid_generate_sha1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "os/os.h"
#include "s3l/pipeline.h"
#include "util/util.h"

/*
 * Normalises an absolute path lexically into b: collapses "//", drops "." segments, resolves
 * ".." against the segments before it (".." at the root stays at the root, as the kernel does),
 * and drops a trailing slash. The result is "/" or starts with "/" and never ends with one.
 */
static int normalise_path(const char *path, struct s3l_buf *b)
{
    size_t base = b->len;
    const char *p = path;
    int rc = 0;
    while (*p && rc == 0) {
        while (*p == '/')
            p++;
        const char *seg = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - seg);
        if (n == 0 || (n == 1 && seg[0] == '.'))
            continue;
        if (n == 2 && seg[0] == '.' && seg[1] == '.') {
            while (b->len > base && b->ptr[b->len - 1] != '/')
                b->len--;
            if (b->len > base)
                b->len--; /* the slash before the dropped segment */
            if (b->ptr)
                b->ptr[b->len] = 0; /* keep the buffer's trailing NUL */
            continue;
        }
        rc = s3l_buf_append_byte(b, '/');
        if (rc == 0)
            rc = s3l_buf_append(b, seg, n);
    }
    if (rc == 0 && b->len == base)
        rc = s3l_buf_append_byte(b, '/');
    return rc;
}

/*
 * Replaces the longest existing prefix of the normalised absolute path in b (from byte `base`)
 * by its real path, so that a destination reached through a symbolic link is the same
 * destination (and the same pipeline id) as the link's target. Segments after that prefix do
 * not exist yet and are kept as they are.
 */
static int resolve_existing(struct s3l_buf *b, size_t base)
{
    char *path = s3l_strndup((const char *)b->ptr + base, b->len - base);
    if (!path)
        return S3L_ENOMEM;
    size_t cut = strlen(path);
    char *real = NULL;
    for (;;) {
        char saved = path[cut];
        path[cut] = 0;
        /* A prefix that does not resolve (missing, unreadable) is one segment too long: cut it.
         * Only running out of memory is an error. */
        struct s3l_error scratch = {0};
        int got = s3l__os_realpath(cut ? path : "/", &real, &scratch);
        path[cut] = saved;
        if (got == S3L_ENOMEM) {
            s3l_free(path);
            return S3L_ENOMEM;
        }
        if (real || cut == 0)
            break;
        while (cut > 0 && path[cut - 1] != '/')
            cut--;
        if (cut > 0)
            cut--; /* the slash before the segment that does not exist */
    }
    int rc = 0;
    if (real) {
        b->len = base;
        rc = strcmp(real, "/") == 0 && path[cut] ? 0 : s3l_buf_append_str(b, real);
        if (rc == 0 && path[cut])
            rc = s3l_buf_append_str(b, path + cut);
        s3l_free(real);
    }
    s3l_free(path);
    return rc;
}

static int canonical_file(const char *path, struct s3l_buf *b, struct s3l_error *err)
{
    int rc = s3l_buf_append_str(b, "file://");
    if (rc)
        return rc;
    size_t base = b->len;
    if (path[0] == '/') {
        rc = normalise_path(path, b);
        return rc ? rc : resolve_existing(b, base);
    }
    char *cwd;
    rc = s3l__os_getcwd(&cwd, err);
    if (rc)
        return s3l_error_prefix(err, "the relative URL %s", path);
    struct s3l_buf tmp;
    s3l_buf_init(&tmp, SIZE_MAX / 2);
    rc = s3l_buf_printf(&tmp, "%s/%s", cwd, path);
    s3l_free(cwd);
    if (rc == 0)
        rc = normalise_path((const char *)tmp.ptr, b);
    s3l_buf_free(&tmp);
    return s3l__oom(err, rc ? rc : resolve_existing(b, base), "resolving a path");
}

/* Offset of the first byte that is not valid UTF-8 (RFC 3629: no overlongs, surrogates or code
 * points over U+10FFFF), or n when all are. */
static size_t utf8_bad(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = p[i];
        size_t k = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
                 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (k == 0 || i + k > n)
            return i;
        uint32_t cp = k == 1 ? c : k == 2 ? c & 0x1F : k == 3 ? c & 0x0F : c & 0x07;
        for (size_t j = 1; j < k; j++) {
            if ((p[i + j] & 0xC0) != 0x80)
                return i;
            cp = cp << 6 | (p[i + j] & 0x3F);
        }
        static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += k;
    }
    return n;
}

/* An s3:// URL's bucket and prefix (after "s3://", n bytes): valid UTF-8 (S3 keys are UTF-8; a
 * store answers otherwise with what is not XML), no "." or ".." segment (a store or a reader that
 * normalises paths would put the table elsewhere: s3://b/x/../../evil). */
static int check_s3(const char *url, const char *p, size_t n, struct s3l_error *err)
{
    size_t bad = utf8_bad((const unsigned char *)p, n);
    if (bad < n)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "destination URL: byte %zu after s3:// (0x%02x) is not valid UTF-8: "
                             "S3 keys are UTF-8 text", bad, (unsigned)(unsigned char)p[bad]);
    for (size_t i = 0; i < n;) {
        size_t len = strcspn(p + i, "/");
        len = len > n - i ? n - i : len;
        if ((len == 1 && p[i] == '.') || (len == 2 && p[i] == '.' && p[i + 1] == '.'))
            return s3l_error_set(err, S3L_EINVALID_CONFIG,
                                 "destination URL %.300s: a \"%.*s\" segment in an s3:// prefix is "
                                 "refused (readers and tools that normalise paths would take it "
                                 "for another place); give the prefix without it", url, (int)len,
                                 p + i);
        i += len + 1;
    }
    return 0;
}

/* "word:" at the start: something meant as a URL (s3:/bucket, file:/x, http:x) that is not one
 * of ours; a plain path has no scheme. */
static bool scheme_like(const char *url)
{
    if (!((*url >= 'a' && *url <= 'z') || (*url >= 'A' && *url <= 'Z')))
        return false;
    const char *p = url + 1;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '+' || *p == '-' || *p == '.')
        p++;
    return *p == ':';
}

int s3l_url_canonical(const char *url, char **out, struct s3l_error *err)
{
    if (url && scheme_like(url) && !strstr(url, "://"))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "destination URL %.300s: starts like a URL with the scheme \"%.*s\" "
                             "but is not one: expected file:///ABS/PATH, s3://BUCKET/PREFIX, or a "
                             "plain directory path (for a directory of that name, write ./%.300s)",
                             url, (int)(strchr(url, ':') - url + 1), url, url);
    if (!url || !*url)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "destination URL is empty");
    struct s3l_buf b;
    s3l_buf_init(&b, SIZE_MAX / 2);
    int rc;
    const char *colon = strstr(url, "://");
    if (!colon) {
        rc = canonical_file(url, &b, err);
    } else if (strncasecmp(url, "file://", 7) == 0) {
        if (url[7] != '/') {
            s3l_buf_free(&b);
            return s3l_error_set(err, S3L_EINVALID_CONFIG,
                                 "destination URL %s: file:// needs an absolute path "
                                 "(file:///abs/path)",
                                 url);
        }
        rc = canonical_file(url + 7, &b, err);
    } else if (strncasecmp(url, "s3://", 5) == 0) {
        size_t n = strlen(url);
        while (n > 5 && url[n - 1] == '/')
            n--;
        rc = check_s3(url, url + 5, n - 5, err);
        if (rc == 0)
            rc = s3l_buf_append_str(&b, "s3://");
        if (rc == 0)
            rc = s3l_buf_append(&b, url + 5, n - 5);
        if (rc == 0 && n == 5)
            rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "destination URL %s has no bucket", url);
    } else {
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "destination URL %s: unknown scheme (expected file:// or s3://)", url);
    }
    /* The root: s3land would write TABLE/ and _openetl/ into / itself. */
    if (rc == 0 && b.len == 8 && memcmp(b.ptr, "file:///", 8) == 0)
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "destination URL %.300s is the filesystem root: s3land would create "
                           "the table's directory and _openetl/ in / itself; give a directory "
                           "such as file:///srv/lake", url);
    if (rc == 0) {
        size_t len;
        rc = s3l_buf_detach(&b, (uint8_t **)out, &len);
    }
    s3l_buf_free(&b);
    if (rc == S3L_ENOMEM)
        s3l_error_set(err, rc, "out of memory canonicalising URL");
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int s3l_pipeline_id(const char *url, const char *table_path, const char *const *paths, size_t n,
                    char out[S3L_UUID_STR_LEN + 1], struct s3l_error *err)
{
    if (!url || !*url || !table_path || !*table_path)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "pipeline id needs a URL and a table");
    const char **sorted = NULL;
    if (n > 0) {
        sorted = s3l_calloc(n, sizeof(*sorted));
        if (!sorted)
            return s3l_error_set(err, S3L_ENOMEM, "out of memory computing the pipeline id");
        memcpy(sorted, paths, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), cmp_str);
    }
    struct s3l_buf name;
    s3l_buf_init(&name, SIZE_MAX / 2);
    int rc = s3l_buf_printf(&name, "%s\n%s\n", url, table_path);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = s3l_buf_printf(&name, "%s\n", sorted[i]);
    if (rc == 0) {
        uuid_t ns, id;
        if (uuid_parse(S3L_PIPELINE_NAMESPACE, ns) != 0) {
            rc = s3l_error_set(err, S3L_EINTERNAL, "bad pipeline namespace UUID");
        } else {
            uuid_generate_sha1(id, ns, (const char *)name.ptr, name.len);
            uuid_unparse_lower(id, out);
        }
    } else {
        s3l_error_set(err, rc, "out of memory computing the pipeline id");
    }
    s3l_buf_free(&name);
    s3l_free(sorted);
    return rc;
}

int s3l_pipeline_id_named(const char *url, const char *ns, const char *name,
                          char out[S3L_UUID_STR_LEN + 1], struct s3l_error *err)
{
    if (!url || !*url || !name || !*name)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT, "pipeline id needs a URL and a name");
    /* "pipeline" first: no id of an unnamed pipeline (its name starts with the URL) is equal. */
    struct s3l_buf text;
    s3l_buf_init(&text, SIZE_MAX / 2);
    int rc = s3l_buf_printf(&text, "pipeline\n%s\n%s\n%s\n", url, ns ? ns : "", name);
    uuid_t nsid, id;
    if (rc) {
        rc = s3l_error_set(err, rc, "out of memory computing the pipeline id");
    } else if (uuid_parse(S3L_PIPELINE_NAMESPACE, nsid) != 0) {
        rc = s3l_error_set(err, S3L_EINTERNAL, "bad pipeline namespace UUID");
    } else {
        uuid_generate_sha1(id, nsid, (const char *)text.ptr, text.len);
        uuid_unparse_lower(id, out);
    }
    s3l_buf_free(&text);
    return rc;
}

bool s3l_uuid_valid(const char *s)
{
    if (!s || strlen(s) != S3L_UUID_STR_LEN)
        return false;
    for (int i = 0; i < S3L_UUID_STR_LEN; i++) {
        char c = s[i];
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? c != '-'
                 : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    }
    return true;
}
