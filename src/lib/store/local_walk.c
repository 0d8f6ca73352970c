/*
 * The local (file://) backend's listing and sweep: ListObjectsV2's answer from a walk of the
 * directory tree under the root (keys sorted bytewise, temp, lock and sidecar files hidden, mapped
 * long names shown by their real name), and the sweep of temp files whose writer died, pruning
 * the directories it leaves empty. The vtable is in local.c; docs/internals/store.md.
 */
#include <stdlib.h>
#include <string.h>

#include "os/os.h"
#include "store/local_int.h"
#include "util/util.h"

struct walk {
    const char *root;
    const char *name_prefix; /* filter on the first level only */
    char **keys;
    size_t n, cap;
    struct s3l_error *err;
};

static int walk_dir(struct walk *w, const char *key_dir, bool top);

struct walk_level {
    struct walk *w;
    const char *key_dir;
    const char *dir; /* its on-disk path */
    bool top;
};

static int walk_entry(void *ctx, const char *name, bool is_dir)
{
    struct walk_level *l = ctx;
    struct walk *w = l->w;
    if (strncmp(name, ".s3l-", 5) == 0)
        return 0;
    const char *hex;
    char *full = NULL;
    if (s3l__local_mapped_name(name, &hex)) {
        full = s3l__local_read_sidecar(l->dir, hex);
        if (!full)
            return 0; /* no (valid) sidecar: not an object of ours */
        name = full;
    }
    if (l->top && strncmp(name, w->name_prefix, strlen(w->name_prefix)) != 0) {
        s3l_free(full);
        return 0;
    }
    char *key = *l->key_dir ? s3l__local_join(l->key_dir, name) : s3l_strdup(name);
    s3l_free(full);
    if (!key)
        return S3L_ENOMEM;
    if (is_dir) {
        int rc = walk_dir(w, key, false);
        s3l_free(key);
        return rc;
    }
    if (s3l__array_reserve(&w->keys, &w->cap, w->n + 1, sizeof(*w->keys), 64)) {
        s3l_free(key);
        return S3L_ENOMEM;
    }
    w->keys[w->n++] = key;
    return 0;
}

static int walk_dir(struct walk *w, const char *key_dir, bool top)
{
    char *path = s3l__local_disk_path(w->root, key_dir);
    if (!path)
        return S3L_ENOMEM;
    struct walk_level l = {w, key_dir, path, top};
    struct s3l_error e2 = {0};
    int rc = s3l__os_readdir(path, walk_entry, &l, &e2);
    if (rc == S3L_ENOT_FOUND && e2.code)
        rc = 0; /* a missing directory holds no keys (or vanished while pruned) */
    else if (rc && e2.code && w->err && w->err->code == 0)
        *w->err = e2;
    s3l_free(path);
    return rc;
}

/* Size and mtime of a listed key; no ETag (""), so that listing never reads file contents. */
static int list_info(struct s3l_store *s, const char *key, struct s3l_object_info *info,
                     struct s3l_error *err)
{
    char *path = s3l__local_key_path(s, key);
    if (!path)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory listing %s", key);
    struct s3l__os_stat st;
    int rc = s3l__os_stat(path, &st, err);
    if (rc == 0) {
        memset(info, 0, sizeof(*info));
        info->size = st.size;
        info->mtime_ns = st.mtime_ns;
    }
    s3l_free(path);
    return rc;
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int s3l__local_list(struct s3l_store *s, const char *prefix, s3l_store_list_cb cb, void *ctx,
                    struct s3l_error *err)
{
    struct local_store *ls = (struct local_store *)s;
    const char *slash = strrchr(prefix, '/');
    char *key_dir = slash ? s3l_strndup(prefix, (size_t)(slash - prefix)) : s3l_strdup("");
    if (!key_dir)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory listing %s", prefix);
    struct walk w = {ls->root, slash ? slash + 1 : prefix, NULL, 0, 0, err};
    int rc = walk_dir(&w, key_dir, true);
    if (rc == S3L_ENOMEM) /* walk_dir and walk_entry leave the message to us */
        s3l_error_set(err, rc, "out of memory listing %s", prefix);
    if (rc == 0 && w.n > 1)
        qsort(w.keys, w.n, sizeof(*w.keys), cmp_keys);
    for (size_t i = 0; i < w.n && rc == 0; i++) {
        struct s3l_object_info info;
        struct s3l_error e2 = {0};
        rc = list_info(s, w.keys[i], &info, &e2);
        if (rc == S3L_ENOT_FOUND) {
            rc = 0; /* removed since the walk */
            continue;
        }
        if (rc) {
            if (err && err->code == 0)
                *err = e2;
            break;
        }
        info.key = w.keys[i];
        rc = cb(ctx, &info);
    }
    for (size_t i = 0; i < w.n; i++)
        s3l_free(w.keys[i]);
    s3l_free(w.keys);
    s3l_free(key_dir);
    return rc;
}

/* The sweep op: a recursive walk removing temp files whose writer died before before_ns. */
struct sweep {
    int64_t before_ns;
    uint64_t n;
    struct s3l_error *err;
};

static int sweep_walk(struct sweep *sw, const char *dir, const char *name_prefix);
bool s3l__local_prune_lock(const char *dir);

struct sweep_level {
    struct sweep *sw;
    const char *dir;
    const char *name_prefix; /* filter on this level ("" below the first) */
};

static int sweep_walk_entry(void *ctx, const char *name, bool is_dir)
{
    struct sweep_level *l = ctx;
    bool tmp = strncmp(name, S3L__LOCAL_TMP_PREFIX, strlen(S3L__LOCAL_TMP_PREFIX)) == 0;
    if (!tmp && strncmp(name, ".s3l-", 5) == 0)
        return 0; /* lock files: tiny, and a live publish may hold one */
    if (!tmp && strncmp(name, l->name_prefix, strlen(l->name_prefix)) != 0)
        return 0;
    if (tmp && (is_dir || *l->name_prefix))
        return 0; /* at the first level, only a whole directory is swept */
    if (!tmp && !is_dir)
        return 0; /* an object: never the sweep's business */
    char *p = s3l__local_join(l->dir, name);
    if (!p)
        return S3L_ENOMEM;
    int rc = 0;
    if (!tmp) {
        rc = sweep_walk(l->sw, p, "");
        /* A directory the sweep left empty goes too (its lock file as a remove takes it): a
         * killed writer's staging directories would otherwise stay behind gc. */
        if (rc == 0 && !s3l__os_rmdir_if_empty(p) && s3l__local_prune_lock(p))
            s3l__os_rmdir_if_empty(p);
    } else if (s3l__os_abandoned_before(p, l->sw->before_ns) &&
               s3l__os_unlink(p, true, NULL) == 0) {
        l->sw->n++;
    }
    s3l_free(p);
    return rc;
}

static int sweep_walk(struct sweep *sw, const char *dir, const char *name_prefix)
{
    struct sweep_level l = {sw, dir, name_prefix};
    struct s3l_error e2 = {0};
    int rc = s3l__os_readdir(dir, sweep_walk_entry, &l, &e2);
    if (rc == S3L_ENOT_FOUND && e2.code)
        return 0; /* nothing there (or pruned meanwhile) */
    if (rc && e2.code && sw->err && sw->err->code == 0)
        *sw->err = e2;
    return rc;
}

int s3l__local_sweep(struct s3l_store *s, const char *prefix, int64_t before_ns, uint64_t *removed,
                     struct s3l_error *err)
{
    struct local_store *ls = (struct local_store *)s;
    const char *slash = strrchr(prefix, '/');
    char *key_dir = slash ? s3l_strndup(prefix, (size_t)(slash - prefix)) : NULL;
    char *dir = s3l__local_disk_path(ls->root, key_dir ? key_dir : "");
    struct sweep sw = {before_ns, 0, err};
    int rc = dir ? sweep_walk(&sw, dir, slash ? slash + 1 : prefix) : S3L_ENOMEM;
    if (removed)
        *removed += sw.n;
    s3l_free(dir);
    s3l_free(key_dir);
    return rc;
}

static int count_other(void *ctx, const char *name, bool is_dir)
{
    (void)is_dir;
    if (strcmp(name, S3L__LOCAL_LOCK_PREFIX "dir") != 0)
        ++*(size_t *)ctx;
    return 0;
}

/* The directory's lock file goes only with its last object, and only under the lock: a lock
 * file unlinked while a publisher holds it would let a second publisher lock a new file and
 * both pass their If-Match check (a lost update). A publisher always has its temp file in the
 * directory, so a directory that holds nothing but the lock file has none. True when the lock
 * file is gone (the directory may then be removed). */
bool s3l__local_prune_lock(const char *dir)
{
    size_t others = 0;
    if (s3l__os_readdir(dir, count_other, &others, NULL) != 0 || others > 0)
        return false;
    char *lock = s3l__local_join(dir, S3L__LOCAL_LOCK_PREFIX "dir");
    int fd = -1;
    bool gone = false;
    if (lock && s3l__os_lock(lock, &fd, NULL) == 0) {
        others = 0;
        gone = s3l__os_readdir(dir, count_other, &others, NULL) == 0 && others == 0 &&
               s3l__os_unlink(lock, true, NULL) == 0;
        s3l__os_unlock(fd);
    }
    s3l_free(lock);
    return gone;
}
