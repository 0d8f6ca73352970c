/*
 * The local (file://) backend. Keys map to paths under the root directory. Every object becomes
 * visible atomically and durably: an upload writes a temp file (".s3l-tmp-*") in the target's
 * directory, fsyncs it, then renames it over the target (or link(2)s it for put-if-absent, which
 * fails if the target exists), then fsyncs the directory. Conditional replaces (if_match) compare
 * the ETag and rename under an exclusive flock(2) of the directory's ".s3l-lock" file; plain
 * replaces take the same lock, so a compare-and-swap never interleaves with another publish.
 * Copy is a hard link when possible (else a byte copy with fsync), renamed over the target.
 * Temp and lock files are hidden from listings; sweep removes temp files of dead writers; key
 * components over NAME_MAX get a mapped on-disk name with a sidecar holding the real one.
 * Listing and the sweep are in local_walk.c. docs/internals/store.md has the details.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os/os.h"
#include "store/local_int.h"
#include "util/util.h"



static const struct s3l_store_ops local_ops;
static int make_temp(const char *dir, char **tmp, int *fd, struct s3l_error *err);

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    bool slash = !(la > 0 && a[la - 1] == '/');
    char *p = s3l_malloc(la + lb + 2);
    if (p)
        snprintf(p, la + lb + 2, "%s%s%s", a, slash ? "/" : "", b);
    return p;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == path)
        return s3l_strdup("/");
    return s3l_strndup(path, (size_t)(slash - path));
}

/* The ETag rule of s3l/sys/store.h: SHA-256 of small content, else size/mtime/inode. */
static int etag_of_fd(int fd, const char *path, const struct s3l__os_stat *st, char *out,
                      struct s3l_error *err)
{
    if (st->size > S3L__LOCAL_HASH_ETAG_MAX) {
        snprintf(out, 132, "s%llx-m%llx-i%llx", (unsigned long long)st->size,
                 (unsigned long long)st->mtime_ns, (unsigned long long)st->ino);
        return 0;
    }
    uint8_t *buf = s3l_malloc(st->size ? st->size : 1);
    if (!buf)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading %s for its ETag", path);
    size_t got = 0;
    int rc = s3l__os_pread_full(fd, buf, st->size, 0, &got, path, err);
    if (rc == 0 && s3l__sha256_hex(buf, got, out) != 0)
        rc = s3l_error_set(err, S3L_EINTERNAL, "sha256 of %s failed", path);
    s3l_free(buf);
    return rc;
}

static int info_of_path(const char *path, struct s3l_object_info *info, struct s3l_error *err)
{
    int fd;
    int rc = s3l__os_open_read(path, &fd, err);
    if (rc)
        return rc;
    struct s3l__os_stat st;
    rc = s3l__os_fstat(fd, path, &st, err);
    if (rc == 0 && !st.is_reg)
        rc = s3l_error_set(err, S3L_ENOT_FOUND, "%s is not a regular file", path);
    if (rc == 0) {
        info->key = NULL;
        info->size = st.size;
        info->mtime_ns = st.mtime_ns;
        rc = etag_of_fd(fd, path, &st, info->etag, err);
    }
    s3l__os_close(fd, path, NULL);
    return rc;
}

/*
 * Long key components. A key component may be longer than NAME_MAX (255 bytes: a 255-byte table
 * name makes "_openetl/schemas/<T>.json" 260). Such a component is stored on disk as
 * "<first <= 190 bytes, cut at a UTF-8 boundary>\\<64 hex of its SHA-256>" (at most 255 bytes),
 * and the full component is kept in the sidecar ".s3l-name-<hex>" in the same directory, which
 * listing reads to report the real key. The backslash marks mapped names: table and namespace
 * names cannot hold one (s3l_name_check) and keys with one are refused here, so a mapped name
 * never collides with a real component. Components that fit are stored as they are.
 */
#define LONG_NAME_MAX 255
#define LONG_KEEP 190
#define LONG_MARK '\\'
#define SIDECAR_PREFIX ".s3l-name-"

/* The hex SHA-256 of a long component; "" when libcrypto fails (it can only fail to allocate),
 * which no sidecar's name or check matches. */
static void sha256_hex(const void *p, size_t n, char out[65])
{
    if (s3l__sha256_hex(p, n, out) != 0)
        out[0] = 0;
}

/* Appends the on-disk name of component c (n bytes) to out (capacity checked by the caller). */
static size_t disk_component(const char *c, size_t n, char *out)
{
    if (n <= LONG_NAME_MAX) {
        memcpy(out, c, n);
        return n;
    }
    size_t keep = LONG_KEEP;
    while (keep > 0 && ((unsigned char)c[keep] & 0xC0) == 0x80)
        keep--; /* not inside a UTF-8 sequence */
    memcpy(out, c, keep);
    out[keep] = LONG_MARK;
    sha256_hex(c, n, out + keep + 1);
    return keep + 1 + 64;
}

/* The on-disk path of key ("" for the root) under root. */
static char *disk_path(const char *root, const char *key)
{
    size_t lr = strlen(root), lk = strlen(key);
    char *p = s3l_malloc(lr + lk + 2 + 65 * (lk / LONG_NAME_MAX + 1));
    if (!p)
        return NULL;
    memcpy(p, root, lr);
    size_t o = lr;
    for (const char *c = key; *key && c;) {
        const char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        if (o == 0 || p[o - 1] != '/')
            p[o++] = '/';
        o += disk_component(c, n, p + o);
        c = slash ? slash + 1 : NULL;
    }
    p[o] = 0;
    return p;
}

static char *key_path(struct s3l_store *s, const char *key)
{
    return disk_path(((struct local_store *)s)->root, key);
}

/* Whether the on-disk name is a mapped long component; *hex points at its hash. */
static bool mapped_name(const char *name, const char **hex)
{
    size_t n = strlen(name);
    if (n < 65 || name[n - 65] != LONG_MARK)
        return false;
    for (size_t i = n - 64; i < n; i++)
        if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
            return false;
    *hex = name + n - 64;
    return true;
}

/* The full component of a mapped name from its sidecar in dir (s3l_free), or NULL when the
 * sidecar is missing or does not hash to the name. */
static char *read_sidecar(const char *dir, const char *hex)
{
    char name[80];
    snprintf(name, sizeof(name), SIDECAR_PREFIX "%s", hex);
    char *path = join(dir, name);
    int fd = -1;
    char *full = path ? s3l_malloc(4097) : NULL;
    size_t got = 0;
    if (!full || s3l__os_open_read(path, &fd, NULL) != 0 ||
        s3l__os_pread_full(fd, full, 4096, 0, &got, path, NULL) != 0) {
        s3l_free(full);
        full = NULL;
    }
    if (fd >= 0)
        s3l__os_close(fd, path, NULL);
    s3l_free(path);
    char h[65];
    if (full) {
        full[got] = 0;
        sha256_hex(full, got, h);
        if (got <= LONG_NAME_MAX || memcmp(h, hex, 64) != 0 || memchr(full, '/', got) ||
            strlen(full) != got) {
            s3l_free(full);
            full = NULL;
        }
    }
    return full;
}

/* Writes the sidecar of every long component of key (idempotent; durable before the object
 * it names is published). Refuses a key component holding the mark. */
static int write_sidecars(struct local_store *ls, const char *key, struct s3l_error *err)
{
    int rc = 0;
    for (const char *c = key; c && rc == 0;) {
        const char *slash = strchr(c, '/');
        size_t n = slash ? (size_t)(slash - c) : strlen(c);
        if (memchr(c, LONG_MARK, n))
            return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                                 "key '%s': a backslash is not allowed in a file:// key", key);
        if (n > LONG_NAME_MAX) {
            char *pk = s3l_strndup(key, (size_t)(c - key) ? (size_t)(c - key) - 1 : 0);
            char *dir = pk ? disk_path(ls->root, pk) : NULL;
            char hex[65], name[80];
            sha256_hex(c, n, hex);
            snprintf(name, sizeof(name), SIDECAR_PREFIX "%s", hex);
            char *side = dir ? join(dir, name) : NULL;
            struct s3l__os_stat st;
            rc = side ? 0 : S3L_ENOMEM;
            if (rc == 0 && s3l__os_stat(side, &st, NULL) != 0) {
                char *tmp = NULL;
                int fd = -1;
                rc = make_temp(dir, &tmp, &fd, err);
                if (rc == 0)
                    rc = s3l__os_write_all(fd, c, n, tmp, err);
                if (rc == 0)
                    rc = s3l__os_fsync(fd, tmp, err);
                if (fd >= 0 && s3l__os_close(fd, tmp, rc ? NULL : err) != 0 && rc == 0)
                    rc = S3L_EIO;
                if (rc == 0)
                    rc = s3l__os_rename(tmp, side, err);
                if (rc == 0)
                    rc = s3l__os_fsync_dir(dir, err);
                else if (tmp)
                    s3l__os_unlink(tmp, true, NULL);
                s3l_free(tmp);
            }
            s3l_free(side);
            s3l_free(dir);
            s3l_free(pk);
        }
        c = slash ? slash + 1 : NULL;
    }
    return rc;
}

static void upload_free(struct local_upload *u)
{
    if (u->fd >= 0)
        s3l__os_close(u->fd, u->tmp, NULL);
    s3l_free(u->tmp);
    s3l_free(u->path);
    s3l_free(u->dir);
    s3l_free(u->if_match);
    s3l_free(u->base.key);
    s3l_free(u);
}

/* Creates a new temp file in dir; retries when the directory, or one of its parents while it
 * was being created, vanished meanwhile (a concurrent remove pruned it while empty: the staging
 * of epoch E+1 goes on while E's staged files are removed). */
static int make_temp(const char *dir, char **tmp, int *fd, struct s3l_error *err)
{
    for (int attempt = 0;; attempt++) {
        struct s3l_error e1 = {0};
        int rc = s3l__os_mkdirs(dir, &e1);
        if (rc == S3L_ENOT_FOUND && attempt < 3)
            continue;
        if (rc) {
            if (err && err->code == 0)
                *err = e1;
            return rc;
        }
        char name[64];
        snprintf(name, sizeof(name), S3L__LOCAL_TMP_PREFIX "%016llx",
                 (unsigned long long)s3l__os_unique());
        char *p = join(dir, name);
        if (!p)
            return s3l_error_set(err, S3L_ENOMEM,
                                 "out of memory naming a temporary file in %s", dir);
        struct s3l_error e2 = {0};
        rc = s3l__os_create_excl(p, fd, &e2);
        if (rc == 0) {
            s3l__os_hold(*fd); /* in use while we live: see sweep_dir */
            *tmp = p;
            return 0;
        }
        s3l_free(p);
        if (rc != S3L_ENOT_FOUND || attempt >= 3) {
            if (err && err->code == 0)
                *err = e2;
            return rc;
        }
    }
}

static int local_upload_begin(struct s3l_store *s, const char *key,
                              const struct s3l_put_options *opts, struct s3l_upload **out,
                              struct s3l_error *err)
{
    struct local_upload *u = s3l_calloc(1, sizeof(*u));
    if (!u)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory starting the upload of %s", key);
    u->fd = -1;
    u->base.store = s;
    u->base.key = s3l_strdup(key);
    u->path = key_path(s, key);
    u->dir = u->path ? dir_of(u->path) : NULL;
    u->if_none_match = opts->if_none_match;
    u->if_match = opts->if_match ? s3l_strdup(opts->if_match) : NULL;
    int rc = 0;
    if (!u->base.key || !u->path || !u->dir || (opts->if_match && !u->if_match))
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory starting the upload of %s", key);
    if (rc == 0)
        rc = write_sidecars((struct local_store *)s, key, err);
    if (rc == 0)
        rc = make_temp(u->dir, &u->tmp, &u->fd, err);
    if (rc) {
        upload_free(u);
        return rc;
    }
    *out = &u->base;
    return 0;
}

static int local_upload_write(struct s3l_upload *up, const void *data, size_t len,
                              struct s3l_error *err)
{
    struct local_upload *u = (struct local_upload *)up;
    int rc = s3l__os_write_all(u->fd, data, len, u->tmp, err);
    if (rc == 0)
        up->size += len;
    return rc;
}

/* Under the directory lock: checks if_match against the current object, then renames. */
static int publish_locked(struct local_upload *u, struct s3l_error *err)
{
    char *lock = join(u->dir, S3L__LOCAL_LOCK_PREFIX "dir");
    if (!lock)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory publishing %s", u->path);
    int lfd = -1;
    int rc = s3l__os_lock(lock, &lfd, err);
    if (rc == 0 && u->if_match) {
        struct s3l_object_info cur;
        struct s3l_error e2 = {0};
        rc = info_of_path(u->path, &cur, &e2);
        if (rc == S3L_ENOT_FOUND)
            rc = s3l_error_set(err, S3L_EPRECONDITION_FAILED,
                               "conditional put of '%s': the object does not exist", u->base.key);
        else if (rc)
            *err = e2;
        else if (strcmp(cur.etag, u->if_match) != 0)
            rc = s3l_error_set(err, S3L_EPRECONDITION_FAILED,
                               "conditional put of '%s': the object changed (ETag %s, expected %s)",
                               u->base.key, cur.etag, u->if_match);
    }
    if (rc == 0)
        rc = s3l__os_rename(u->tmp, u->path, err);
    s3l__os_unlock(lfd);
    s3l_free(lock);
    return rc;
}

static int local_upload_publish(struct s3l_upload *up, struct s3l_object_info *info,
                                struct s3l_error *err)
{
    struct local_upload *u = (struct local_upload *)up;
    int rc = s3l__os_fsync(u->fd, u->tmp, err);
    /* Closing drops the temp file's flock; a second descriptor keeps it held until the temp
     * name is gone, so that a concurrent sweep never takes a file about to be published. */
    int hold = -1;
    if (rc == 0 && s3l__os_open_read(u->tmp, &hold, NULL) == 0)
        s3l__os_hold(hold);
    int crc = s3l__os_close(u->fd, u->tmp, err);
    u->fd = -1;
    if (rc == 0)
        rc = crc;
    if (rc == 0 && u->if_none_match) {
        struct s3l_error e2 = {0};
        rc = s3l__os_link(u->tmp, u->path, &e2);
        if (rc == S3L_EEXISTS)
            rc = s3l_error_set(err, S3L_EPRECONDITION_FAILED,
                               "put-if-absent of '%s': the object exists", u->base.key);
        else if (rc && err && err->code == 0)
            *err = e2;
        s3l__os_unlink(u->tmp, true, NULL);
    } else if (rc == 0) {
        rc = publish_locked(u, err);
    }
    if (hold >= 0)
        s3l__os_close(hold, u->tmp, NULL);
    if (rc == 0)
        rc = s3l__os_fsync_dir(u->dir, err);
    else
        s3l__os_unlink(u->tmp, true, NULL);
    if (rc == 0 && info)
        rc = info_of_path(u->path, info, err);
    upload_free(u);
    return rc;
}

static void local_upload_abort(struct s3l_upload *up)
{
    struct local_upload *u = (struct local_upload *)up;
    if (u->tmp)
        s3l__os_unlink(u->tmp, true, NULL);
    upload_free(u);
}

static int local_put(struct s3l_store *s, const char *key, const void *data, size_t len,
                     const struct s3l_put_options *opts, struct s3l_object_info *info,
                     struct s3l_error *err)
{
    struct s3l_upload *u;
    int rc = local_upload_begin(s, key, opts, &u, err);
    if (rc)
        return rc;
    rc = local_upload_write(u, data, len, err);
    if (rc) {
        local_upload_abort(u);
        return rc;
    }
    return local_upload_publish(u, info, err);
}

static int local_get(struct s3l_store *s, const char *key, uint64_t offset, uint64_t len,
                     size_t max, uint8_t **data, size_t *data_len, struct s3l_object_info *info,
                     struct s3l_error *err)
{
    char *path = key_path(s, key);
    if (!path)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading %s", key);
    int fd = -1;
    struct s3l__os_stat st;
    int rc = s3l__os_open_read(path, &fd, err);
    if (rc == 0)
        rc = s3l__os_fstat(fd, path, &st, err);
    if (rc == 0 && !st.is_reg)
        rc = s3l_error_set(err, S3L_ENOT_FOUND, "get '%s': not a regular file", key);
    uint64_t n = 0;
    if (rc == 0) {
        n = offset >= st.size ? 0 : st.size - offset;
        if (len < n)
            n = len;
        if (n > max)
            rc = s3l_error_set(err, S3L_ETOO_LARGE, "get '%s': %llu bytes, more than %zu", key,
                               (unsigned long long)n, max);
    }
    uint8_t *buf = NULL;
    size_t got = 0;
    if (rc == 0) {
        buf = s3l_malloc((size_t)n + 1);
        rc = buf ? s3l__os_pread_full(fd, buf, (size_t)n, offset, &got, path, err) : S3L_ENOMEM;
    }
    if (rc == 0 && info) {
        info->key = NULL;
        info->size = st.size;
        info->mtime_ns = st.mtime_ns;
        rc = etag_of_fd(fd, path, &st, info->etag, err);
    }
    if (fd >= 0)
        s3l__os_close(fd, path, NULL);
    s3l_free(path);
    if (rc) {
        s3l_free(buf);
        return rc;
    }
    buf[got] = 0;
    *data = buf;
    *data_len = got;
    return 0;
}

static int local_stat(struct s3l_store *s, const char *key, struct s3l_object_info *info,
                      struct s3l_error *err)
{
    char *path = key_path(s, key);
    if (!path)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory looking up %s", key);
    int rc = info_of_path(path, info, err);
    s3l_free(path);
    return rc;
}

/* Listing: collect matching keys recursively, sort them bytewise, then report each. */
/* Temp files that no live process holds (its writer was killed) are removed, so that a crash
 * does not keep a staging directory (and the disk space) forever. Only those created more than a
 * second ago: a temp file is created, then flocked, and a writer in this very directory (another
 * thread of this process: the pipelined commit's removes run while the next epoch stages) may be
 * between the two. */
static int sweep_entry(void *ctx, const char *name, bool is_dir)
{
    if (is_dir || strncmp(name, S3L__LOCAL_TMP_PREFIX, strlen(S3L__LOCAL_TMP_PREFIX)) != 0)
        return 0;
    char *p = join(ctx, name);
    if (p && s3l__os_abandoned_before(p, s3l__os_now_ns() - 1000000000LL))
        s3l__os_unlink(p, true, NULL);
    s3l_free(p);
    return 0;
}

static void sweep_dir(const char *dir)
{
    s3l__os_readdir(dir, sweep_entry, (void *)dir, NULL);
}

static int local_remove(struct s3l_store *s, const char *key, struct s3l_error *err)
{
    struct local_store *ls = (struct local_store *)s;
    char *path = key_path(s, key);
    if (!path)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory removing %s", key);
    struct s3l_error e2 = {0};
    int rc = s3l__os_unlink(path, false, &e2);
    if (rc == S3L_ENOT_FOUND) {
        s3l_free(path);
        return 0; /* already gone: S3 DeleteObject semantics */
    }
    if (rc && err && err->code == 0)
        *err = e2;
    char *dir = rc == 0 ? dir_of(path) : NULL;
    if (dir)
        rc = s3l__os_fsync_dir(dir, err);
    /* Prune directories left empty, up to (not including) the root: staging leaves many. */
    size_t root_len = strlen(ls->root);
    while (rc == 0 && dir && strlen(dir) > root_len) {
        sweep_dir(dir);
        if (!s3l__os_rmdir_if_empty(dir) &&
            !(s3l__local_prune_lock(dir) && s3l__os_rmdir_if_empty(dir)))
            break;
        char *up = dir_of(dir);
        s3l_free(dir);
        dir = up;
    }
    s3l_free(dir);
    s3l_free(path);
    return rc;
}

/* Byte copy of src into the open temp file fd (when a hard link is not possible). */
static int copy_bytes(const char *src, int fd, const char *tmp, struct s3l_error *err)
{
    int in;
    int rc = s3l__os_open_read(src, &in, err);
    if (rc)
        return rc;
    size_t cap = 1 << 20;
    uint8_t *buf = s3l_malloc(cap);
    uint64_t off = 0;
    for (rc = buf ? 0 : S3L_ENOMEM; rc == 0;) {
        size_t got = 0;
        rc = s3l__os_pread_full(in, buf, cap, off, &got, src, err);
        if (rc == 0 && got > 0)
            rc = s3l__os_write_all(fd, buf, got, tmp, err);
        if (got < cap)
            break;
        off += got;
    }
    s3l_free(buf);
    s3l__os_close(in, src, NULL);
    if (rc == 0)
        rc = s3l__os_fsync(fd, tmp, err);
    return rc;
}

static int local_copy(struct s3l_store *s, const char *src_key, const char *dst_key,
                      struct s3l_error *err)
{
    char *src = key_path(s, src_key), *dst = key_path(s, dst_key);
    char *dir = dst ? dir_of(dst) : NULL;
    char *tmp = NULL;
    int fd = -1, hold = -1;
    int rc = src && dst && dir ? 0 : S3L_ENOMEM;
    struct s3l__os_stat st;
    if (rc == 0) {
        struct s3l_error e2 = {0};
        rc = s3l__os_stat(src, &st, &e2);
        if (rc == S3L_ENOT_FOUND)
            rc = s3l_error_set(err, S3L_ENOT_FOUND, "copy: source '%s' does not exist", src_key);
        else if (rc && err && err->code == 0)
            *err = e2;
    }
    if (rc == 0)
        rc = write_sidecars((struct local_store *)s, dst_key, err);
    if (rc == 0)
        rc = make_temp(dir, &tmp, &fd, err);
    if (rc == 0) {
        /* Replace the fresh temp file by a hard link to the source when the filesystem allows. */
        struct s3l_error e2 = {0};
        if (s3l__os_unlink(tmp, false, &e2) == 0 && s3l__os_link(src, tmp, &e2) == 0) {
            s3l__os_close(fd, tmp, NULL);
            fd = -1;
            /* Hold the linked name too until it is renamed, so a sweep sees it in use. */
            if (s3l__os_open_read(tmp, &hold, NULL) == 0)
                s3l__os_hold(hold);
        } else {
            s3l__os_close(fd, tmp, NULL);
            fd = -1;
            s3l__os_unlink(tmp, true, NULL);
            rc = s3l__os_create_excl(tmp, &fd, err);
            if (rc == 0)
                rc = copy_bytes(src, fd, tmp, err);
        }
    }
    if (fd >= 0 && s3l__os_close(fd, tmp, rc ? NULL : err) != 0 && rc == 0)
        rc = err ? err->code : S3L_EIO;
    if (rc == 0)
        rc = s3l__os_rename(tmp, dst, err);
    if (hold >= 0)
        s3l__os_close(hold, tmp, NULL);
    if (rc == 0)
        rc = s3l__os_fsync_dir(dir, err);
    else if (tmp)
        s3l__os_unlink(tmp, true, NULL);
    s3l_free(src);
    s3l_free(dst);
    s3l_free(dir);
    s3l_free(tmp);
    return rc;
}

static void local_destroy(struct s3l_store *s)
{
    struct local_store *ls = (struct local_store *)s;
    s3l_free(ls->root);
    s3l__store_base_cleanup(s);
    s3l_free(ls);
}

/* For local_staged.c (local_int.h). */
char *s3l__local_key_path(struct s3l_store *s, const char *key) { return key_path(s, key); }
char *s3l__local_dir_of(const char *path) { return dir_of(path); }
char *s3l__local_join(const char *a, const char *b) { return join(a, b); }
char *s3l__local_disk_path(const char *root, const char *key) { return disk_path(root, key); }
bool s3l__local_mapped_name(const char *name, const char **hex) { return mapped_name(name, hex); }
char *s3l__local_read_sidecar(const char *dir, const char *hex) { return read_sidecar(dir, hex); }
void s3l__local_upload_free(struct local_upload *u) { upload_free(u); }
int s3l__local_info(const char *path, struct s3l_object_info *info, struct s3l_error *err)
{
    return info_of_path(path, info, err);
}

static const struct s3l_store_ops local_ops = {
    .version = S3L_STORE_OPS_VERSION,
    .name = "local",
    .caps = S3L_STORE_CAP_PUT_IF_ABSENT | S3L_STORE_CAP_CONDITIONAL | S3L_STORE_CAP_STAGED,
    .upload_begin = local_upload_begin,
    .upload_write = local_upload_write,
    .upload_publish = local_upload_publish,
    .upload_abort = local_upload_abort,
    .put = local_put,
    .get = local_get,
    .stat = local_stat,
    .list = s3l__local_list,
    .remove = local_remove,
    .copy = local_copy,
    .destroy = local_destroy,
    .event = NULL,
    .sweep = s3l__local_sweep,
    .upload_stage = s3l__local_upload_stage,
    .staged_complete = s3l__local_staged_complete,
    .staged_abort = s3l__local_staged_abort,
};

/* The path itself or the nearest existing ancestor of path when it exists and is not a
 * directory (a regular file in the way), else NULL. */
static char *non_dir_ancestor(const char *path)
{
    char *p = s3l_strdup(path);
    while (p && strcmp(p, "/") != 0) {
        struct s3l__os_stat st;
        if (s3l__os_stat(p, &st, NULL) == 0) {
            if (!st.is_dir)
                return p;
            break;
        }
        char *up = dir_of(p);
        s3l_free(p);
        p = up;
    }
    s3l_free(p);
    return NULL;
}

int s3l__store_local_open(const char *root, const char *url, bool create, struct s3l_store **out,
                          struct s3l_error *err)
{
    int rc = create ? s3l__os_mkdirs(root, err) : 0;
    struct s3l__os_stat st;
    if (rc == 0)
        rc = s3l__os_stat(root, &st, err);
    if (rc == S3L_ENOT_FOUND) {
        /* ENOTDIR maps to NOT_FOUND too; a file where a directory must be is a bad config,
         * not a missing destination: name it. */
        char *file = non_dir_ancestor(root);
        if (file) {
            s3l_error_clear(err);
            rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                               "destination %s: %s is not a directory (a regular file or other "
                               "non-directory is in the way)",
                               url, file);
            s3l_free(file);
            return rc;
        }
        s3l_error_prefix(err, "destination %s does not exist", url);
        return rc;
    }
    if (rc)
        return rc;
    if (!st.is_dir)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "destination %s is not a directory", url);
    struct local_store *ls = s3l_calloc(1, sizeof(*ls));
    if (!ls)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening destination %s", url);
    ls->base.ops = &local_ops;
    ls->root = s3l_strdup(root);
    ls->base.url = s3l_strdup(url);
    if (!ls->root || !ls->base.url) {
        local_destroy(&ls->base);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory opening destination %s", url);
    }
    *out = &ls->base;
    return 0;
}
