/*
 * The reads a start needs, sent together (issue 14 item 2). A run used to read, one after the
 * other: the markers' listing of each table (is an input landed by another pipeline?), the
 * checkpoint (the open), then per stream the records under T/ (check_nesting), the namespace's
 * record and T's record; on S3 each a round trip. These functions hand each group to the store's
 * read_ahead (S3: one round trip for all; file://: nothing, each read is a few system calls),
 * whose kept answers the later calls find: every object is still read once, by the batch, and a
 * write of this store to it (the claim's checkpoint, a record's update) makes the next read go
 * to the store again. One group for all when the runner knows its tables at the start (it does:
 * s3l__dest_read_ahead_start takes them), so the start costs one round trip; a stream opened
 * later (follow mode, an inferred schema past the kept answers' life) sends its own group, of
 * what is not kept. The price: a rerun with nothing new, which opens no stream, reads its
 * tables' records too (in the same round trip).
 */
#include <string.h>

#include "commit/commit.h"
#include "util/util.h"

/* Table T's stream reads into items/keys (room for 3): T's record (read_record's get), the
 * records under T/ (check_nesting's listing) and, for NS/T, NS's record (check_nesting's stat).
 * Returns how many; a key that cannot be made is left out (its call reads for itself). */
static size_t stream_items(const char *table, struct s3l_read_item *items, char **keys)
{
    const char *slash = strchr(table, '/');
    char *ns = slash ? s3l_strndup(table, (size_t)(slash - table)) : NULL;
    size_t m = 0;
    if ((keys[m] = s3l__key_schema(table)) != NULL)
        items[m] = (struct s3l_read_item){S3L_READ_GET, keys[m], S3L__DOC_MAX}, m++;
    if ((keys[m] = s3l__key_schemas_under(table)) != NULL)
        items[m] = (struct s3l_read_item){S3L_READ_LIST, keys[m], 0}, m++;
    if (ns && (keys[m] = s3l__key_schema(ns)) != NULL)
        items[m] = (struct s3l_read_item){S3L_READ_STAT, keys[m], 0}, m++;
    s3l_free(ns);
    return m;
}

void s3l__dest_read_ahead_start(struct s3l_store *s, const char *pipeline,
                                const char *const *tables, size_t n, const char *const *streams,
                                size_t n_streams)
{
    size_t cap = 1 + n + 3 * n_streams;
    struct s3l_read_item *items = s3l_calloc(cap, sizeof(*items));
    char **keys = s3l_calloc(cap, sizeof(*keys));
    size_t m = 0;
    if (items && keys && (keys[m] = s3l__key_checkpoint(pipeline)) != NULL)
        items[m] = (struct s3l_read_item){S3L_READ_GET, keys[m], S3L__DOC_MAX}, m++;
    for (size_t i = 0; items && keys && i < n; i++)
        if ((keys[m] = s3l__key_markers_prefix(tables[i])) != NULL)
            items[m] = (struct s3l_read_item){S3L_READ_LIST, keys[m], 0}, m++;
    for (size_t i = 0; items && keys && i < n_streams; i++)
        m += stream_items(streams[i], items + m, keys + m);
    if (m >= 2)
        s3l_store_read_ahead(s, items, m);
    for (size_t i = 0; keys && i < m; i++)
        s3l_free(keys[i]);
    s3l_free(keys);
    s3l_free(items);
}

void s3l__dest_read_ahead_stream(struct s3l_store *s, const char *table)
{
    struct s3l_read_item items[3];
    char *keys[3] = {NULL, NULL, NULL};
    size_t m = stream_items(table, items, keys);
    if (m >= 2)
        s3l_store_read_ahead(s, items, m); /* what the start's batch kept is not read again */
    for (size_t i = 0; i < m; i++)
        s3l_free(keys[i]);
}
