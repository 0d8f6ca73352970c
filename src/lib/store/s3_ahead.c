/*
 * Answers read ahead (the S3 backend's read_ahead op, include/s3l/sys/store.h): a start's reads
 * (the checkpoint, a table's markers and schema records) go out together in one round trip, and
 * the get, stat and list calls that follow are answered from what came back instead of each
 * sending its request in turn (issue 14 item 2). What is kept is exactly what the single call
 * would have returned at the moment of the batch, failures included (a missing key, a refusal),
 * so a call answered from it behaves as if it had been made then. It is dropped by any write of
 * this store to a key it is for (the write's outcome does not matter: a failed conditional write
 * means the object changed), and after S3L_STORE_READ_AHEAD_NS, so a read after this process's
 * own write, or a read long after the start, goes to the store. Thread-safe (lanes share the
 * store); list callbacks run with no lock held, since they may call into the store.
 */
#include <string.h>

#include "os/os.h"
#include "store/store.h"
#include "util/util.h"

struct s3l__ahead_entry {
    enum s3l_read_kind kind;
    char *key; /* the key, or a list's prefix; relative to the store's root */
    size_t max;
    int64_t at_ns; /* monotonic clock, when the answer came */
    int rc;
    struct s3l_error err;
    uint8_t *data; /* GET: NUL-terminated, len bytes */
    size_t len;
    struct s3l_object_info info;  /* GET, STAT */
    struct s3l_object_info *objs; /* LIST: keys owned */
    size_t n_objs, cap_objs;
};

int s3l__ahead_init(struct s3l__ahead *a)
{
    memset(a, 0, sizeof(*a));
    return pthread_mutex_init(&a->mu, NULL) == 0 ? 0 : S3L_ENOMEM;
}

void s3l__ahead_entry_free(struct s3l__ahead_entry *e)
{
    if (!e)
        return;
    s3l_free(e->key);
    s3l_free(e->data);
    for (size_t i = 0; i < e->n_objs; i++)
        s3l_free(e->objs[i].key);
    s3l_free(e->objs);
    s3l_free(e);
}

/* Drops entry i (mu held). */
static void drop(struct s3l__ahead *a, size_t i)
{
    s3l__ahead_entry_free(a->e[i]);
    a->e[i] = a->e[--a->n];
}

void s3l__ahead_cleanup(struct s3l__ahead *a)
{
    while (a->n)
        drop(a, a->n - 1);
    s3l_free(a->e);
    pthread_mutex_destroy(&a->mu);
}

struct s3l__ahead_entry *s3l__ahead_entry_new(enum s3l_read_kind kind, const char *key,
                                              size_t max)
{
    struct s3l__ahead_entry *e = s3l_calloc(1, sizeof(*e));
    if (e && !(e->key = s3l_strdup(key))) {
        s3l_free(e);
        return NULL;
    }
    if (e) {
        e->kind = kind;
        e->max = max;
    }
    return e;
}

void s3l__ahead_entry_set(struct s3l__ahead_entry *e, int rc, const struct s3l_error *err,
                          uint8_t *data, size_t len, const struct s3l_object_info *info)
{
    e->rc = rc;
    if (rc && err)
        e->err = *err;
    e->data = data;
    e->len = len;
    if (info)
        e->info = *info;
    e->info.key = NULL;
}

int s3l__ahead_entry_add(struct s3l__ahead_entry *e, const struct s3l_object_info *info)
{
    if (s3l__array_reserve(&e->objs, &e->cap_objs, e->n_objs + 1, sizeof(*e->objs), 16))
        return S3L_ENOMEM;
    e->objs[e->n_objs] = *info;
    if (!(e->objs[e->n_objs].key = s3l_strdup(info->key)))
        return S3L_ENOMEM;
    e->n_objs++;
    return 0;
}

void s3l__ahead_keep(struct s3l__ahead *a, struct s3l__ahead_entry *e)
{
    e->at_ns = s3l__os_mono_ns();
    pthread_mutex_lock(&a->mu);
    for (size_t i = 0; i < a->n; i++)
        if (a->e[i]->kind == e->kind && strcmp(a->e[i]->key, e->key) == 0) {
            drop(a, i);
            break;
        }
    if (s3l__array_reserve(&a->e, &a->cap, a->n + 1, sizeof(*a->e), 8) == 0) {
        a->e[a->n++] = e;
        e = NULL;
    }
    pthread_mutex_unlock(&a->mu);
    if (e)
        s3l__ahead_entry_free(e); /* no room: the later call reads for itself */
}

/* The live entry of kind for key (mu held), dropping the ones that are too old; NULL if none. */
static struct s3l__ahead_entry *find(struct s3l__ahead *a, enum s3l_read_kind kind,
                                     const char *key)
{
    int64_t now = s3l__os_mono_ns();
    for (size_t i = 0; i < a->n;) {
        struct s3l__ahead_entry *e = a->e[i];
        if (now - e->at_ns > S3L_STORE_READ_AHEAD_NS) {
            drop(a, i);
            continue;
        }
        if (e->kind == kind && strcmp(e->key, key) == 0)
            return e;
        i++;
    }
    return NULL;
}

bool s3l__ahead_wanted(struct s3l__ahead *a, struct s3l_read_item *it)
{
    if (it->kind == S3L_READ_GET_FRESH) {
        s3l__ahead_forget(a, it->key);
        it->kind = S3L_READ_GET;
        return true;
    }
    pthread_mutex_lock(&a->mu);
    bool has = find(a, it->kind, it->key) != NULL;
    pthread_mutex_unlock(&a->mu);
    return !has;
}

static void give_err(struct s3l_error *err, const struct s3l__ahead_entry *e)
{
    if (err && err->code == 0)
        *err = e->err;
}

bool s3l__ahead_get(struct s3l__ahead *a, const char *key, uint64_t offset, uint64_t len,
                    size_t max, uint8_t **data, size_t *data_len, struct s3l_object_info *info,
                    struct s3l_error *err, int *rc)
{
    if (offset != 0 || len != UINT64_MAX)
        return false;
    pthread_mutex_lock(&a->mu);
    struct s3l__ahead_entry *e = find(a, S3L_READ_GET, key);
    bool served = e && e->max == max;
    if (served) {
        *rc = e->rc;
        if (e->rc == 0) {
            *data = s3l_malloc(e->len + 1);
            if (*data) {
                memcpy(*data, e->data, e->len + 1);
                *data_len = e->len;
                if (info)
                    *info = e->info;
            } else {
                *rc = s3l_error_set(err, S3L_ENOMEM, "out of memory reading %s", key);
            }
        } else {
            give_err(err, e);
        }
    }
    pthread_mutex_unlock(&a->mu);
    return served;
}

bool s3l__ahead_stat(struct s3l__ahead *a, const char *key, struct s3l_object_info *info,
                     struct s3l_error *err, int *rc)
{
    pthread_mutex_lock(&a->mu);
    struct s3l__ahead_entry *e = find(a, S3L_READ_STAT, key);
    if (e) {
        *rc = e->rc;
        if (e->rc == 0 && info)
            *info = e->info;
        else if (e->rc)
            give_err(err, e);
    }
    pthread_mutex_unlock(&a->mu);
    return e != NULL;
}

bool s3l__ahead_list(struct s3l__ahead *a, const char *prefix, s3l_store_list_cb cb, void *ctx,
                     struct s3l_error *err, int *rc)
{
    /* The listing is copied out, so that cb runs with no lock held (it may call the store). */
    pthread_mutex_lock(&a->mu);
    struct s3l__ahead_entry *e = find(a, S3L_READ_LIST, prefix);
    struct s3l__ahead_entry *copy = e ? s3l__ahead_entry_new(e->kind, e->key, e->max) : NULL;
    bool served = copy != NULL;
    if (copy) {
        s3l__ahead_entry_set(copy, e->rc, &e->err, NULL, 0, NULL);
        for (size_t i = 0; served && i < e->n_objs; i++)
            served = s3l__ahead_entry_add(copy, &e->objs[i]) == 0;
    }
    pthread_mutex_unlock(&a->mu);
    if (served) {
        *rc = copy->rc;
        if (copy->rc)
            give_err(err, copy);
        for (size_t i = 0; *rc == 0 && i < copy->n_objs; i++)
            *rc = cb(ctx, &copy->objs[i]);
    }
    if (copy)
        s3l__ahead_entry_free(copy);
    return served;
}

void s3l__ahead_forget(struct s3l__ahead *a, const char *key)
{
    pthread_mutex_lock(&a->mu);
    for (size_t i = 0; i < a->n;) {
        struct s3l__ahead_entry *e = a->e[i];
        bool hit = e->kind == S3L_READ_LIST ? strncmp(key, e->key, strlen(e->key)) == 0
                                            : strcmp(key, e->key) == 0;
        if (hit)
            drop(a, i);
        else
            i++;
    }
    pthread_mutex_unlock(&a->mu);
}
