/*
 * The reads a start needs, sent together (issue 14 item 2). A run used to read, one after the
 * other: the markers' listing of each table (is an input landed by another pipeline?), the
 * checkpoint (the open), then per stream the records under T/ (check_nesting), the namespace's
 * record and T's record; on S3 each a round trip. These functions hand each group to the store's
 * read_ahead (S3: one round trip for all; file://: nothing, each read is a few system calls),
 * whose kept answers the later calls find: every object is still read once, by the batch, and a
 * write of this store to it (the claim's checkpoint, a record's update) makes the next read go
 * to the store again. Two groups, not one: the stream's reads are needed only when a stream
 * opens, which the runner knows once it has the checkpoint (a rerun with nothing new opens none
 * and reads no record).
 */
#include <string.h>

#include "commit/commit.h"
#include "util/util.h"

void s3l__dest_read_ahead_start(struct s3l_store *s, const char *pipeline,
                                const char *const *tables, size_t n)
{
    struct s3l_read_item *items = s3l_calloc(n + 1, sizeof(*items));
    char **keys = s3l_calloc(n + 1, sizeof(*keys));
    size_t m = 0;
    if (items && keys && (keys[m] = s3l__key_checkpoint(pipeline)) != NULL)
        items[m] = (struct s3l_read_item){S3L_READ_GET, keys[m], S3L__DOC_MAX}, m++;
    for (size_t i = 0; items && keys && i < n; i++)
        if ((keys[m] = s3l__key_markers_prefix(tables[i])) != NULL)
            items[m] = (struct s3l_read_item){S3L_READ_LIST, keys[m], 0}, m++;
    if (m >= 2)
        s3l_store_read_ahead(s, items, m);
    for (size_t i = 0; keys && i < m; i++)
        s3l_free(keys[i]);
    s3l_free(keys);
    s3l_free(items);
}

void s3l__dest_read_ahead_stream(struct s3l_store *s, const char *table)
{
    const char *slash = strchr(table, '/');
    char *ns = slash ? s3l_strndup(table, (size_t)(slash - table)) : NULL;
    char *keys[3] = {s3l__key_schema(table), s3l__key_schemas_under(table),
                     ns ? s3l__key_schema(ns) : NULL};
    struct s3l_read_item items[3];
    size_t m = 0;
    if (keys[0]) /* read_record's get */
        items[m++] = (struct s3l_read_item){S3L_READ_GET, keys[0], S3L__DOC_MAX};
    if (keys[1]) /* check_nesting's listing */
        items[m++] = (struct s3l_read_item){S3L_READ_LIST, keys[1], 0};
    if (keys[2]) /* check_nesting's stat of the namespace's own record */
        items[m++] = (struct s3l_read_item){S3L_READ_STAT, keys[2], 0};
    if (m >= 2)
        s3l_store_read_ahead(s, items, m);
    for (size_t i = 0; i < 3; i++)
        s3l_free(keys[i]);
    s3l_free(ns);
}
