/*
 * Footers of the Parquet files of a destination, read where they lie: the footer reader of
 * parquet/ (which reads from a byte source only, s3l_pq_read_fn) over ranged GETs of a store
 * object, so that `ls` and `check` read footers and page indexes of objects in S3 or a local lake
 * without downloading files: a stat for the size, then the reads of s3l_pq_footer_read (one
 * ranged GET for an object under 64 KiB, at most three otherwise).
 */
#include <string.h>

#include "s3l/destination.h"
#include "s3l/pq_footer.h"
#include "s3l/store.h"
#include "util/util.h"

int s3l_pq_read_store(void *ctx, uint64_t off, void *buf, size_t len, struct s3l_error *err)
{
    const struct s3l_pq_store_src *src = ctx;
    uint8_t *data = NULL;
    size_t n = 0;
    int rc = s3l_store_get(src->store, src->key, off, len, len, &data, &n, NULL, err);
    if (rc)
        return rc;
    if (n != len) {
        s3l_free(data);
        /* The object is shorter than its stat said: it was replaced or truncated meanwhile. */
        return s3l_error_set(err, S3L_EIO, "%s: read of %zu bytes at offset %llu returned %zu",
                             src->key, len, (unsigned long long)off, n);
    }
    if (len)
        memcpy(buf, data, len);
    s3l_free(data);
    return 0;
}

int s3l_pq_footer_read_store(struct s3l_store *store, const char *key,
                             const struct s3l_pq_footer_options *opts, struct s3l_pq_footer **out,
                             struct s3l_error *err)
{
    struct s3l_object_info info;
    memset(&info, 0, sizeof(info));
    int rc = s3l_store_stat(store, key, &info, err);
    if (rc)
        return rc;
    struct s3l_pq_footer_options o;
    if (opts)
        o = *opts; /* zero fields take their defaults in s3l_pq_footer_read */
    else
        s3l_pq_footer_options_init(&o);
    if (!opts || !opts->name)
        o.name = key;
    struct s3l_pq_store_src src = {store, key};
    return s3l_pq_footer_read(s3l_pq_read_store, &src, info.size, &o, out, err);
}
