/*
 * A change event's identity: _openetl_seq, which orders the changes of a row, and _openetl_id,
 * which names the event so that the same event sent twice (a connector restarted after its
 * offsets were last flushed resends what followed them: Debezium's at-least-once delivery) gets
 * the same id wherever it is in the input.
 *
 * The source position: Debezium's `source` block names where in the database's log an event
 * comes from, in each connector's own fields (Debezium's connector documentation, "source
 * metadata"): PostgreSQL lsn, txId, sequence, xmin; MySQL file, pos, row, gtid; SQL Server and
 * Db2 change_lsn, commit_lsn, event_serial_no; Oracle scn, commit_scn, rs_id, ssn, row_id;
 * MongoDB ord. The id hashes those it finds, so a resent event (same position) has the same id.
 * A snapshot's rows share one position (op "r", the snapshot's lsn), so the row image is hashed
 * too; the image is hashed by value (kinds, lengths and decoded bytes), so re-serialising an
 * event with other whitespace or escapes does not change its id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "input/debezium/debezium.h"

static const char *const position_fields[] = {
    "lsn",   "txId",       "sequence", "xmin",  "file",   "pos",    "row",
    "gtid",  "change_lsn", "commit_lsn", "event_serial_no", "scn", "commit_scn",
    "rs_id", "ssn",        "row_id",   "ord",
};

int64_t s3l__dbz_seq(const struct s3l_value *v, size_t src, int64_t fallback)
{
    size_t lsn = src ? s3l__dbz_member(v, src, "lsn") : 0;
    if (!lsn || v[lsn].kind != S3L_VALUE_NUMBER || !(v[lsn].flags & S3L_VALUE_INT) ||
        v[lsn].len > 19 || v[lsn].str[0] == '-')
        return fallback;
    char tmp[24];
    memcpy(tmp, v[lsn].str, v[lsn].len);
    tmp[v[lsn].len] = 0;
    char *end;
    unsigned long long n = strtoull(tmp, &end, 10);
    return *end || n > (unsigned long long)INT64_MAX ? fallback : (int64_t)n;
}

/* Appends the value v[i] by value: a kind letter, then for scalars the length and bytes, for
 * arrays and objects their entries. Returns the index after it, or 0 on ENOMEM. */
static size_t canon(struct s3l_buf *b, const struct s3l_value *v, size_t i)
{
    static const char kinds[] = "nftNSAO";
    char head[32];
    int n = snprintf(head, sizeof(head), "%c%u:", kinds[v[i].kind < 7 ? v[i].kind : 0],
                     (unsigned)v[i].len);
    if (s3l_buf_append(b, head, (size_t)n))
        return 0;
    if (v[i].kind == S3L_VALUE_NUMBER || v[i].kind == S3L_VALUE_STRING)
        return s3l_buf_append(b, v[i].str, v[i].len) ? 0 : i + 1;
    size_t k = i + 1;
    while (k && k < v[i].end)
        k = canon(b, v, k);
    return k ? v[i].end : 0;
}

static int field(struct s3l_buf *b, const char *label, const struct s3l_value *v, size_t i)
{
    if (s3l_buf_append_str(b, label) || s3l_buf_append_byte(b, '='))
        return S3L_ENOMEM;
    if (i && !canon(b, v, i))
        return S3L_ENOMEM;
    return s3l_buf_append_byte(b, '\n') ? S3L_ENOMEM : 0;
}

int s3l__dbz_id(struct s3l__dbz *d, const struct s3l_value *v, size_t env, size_t src, char op,
                char out[37])
{
    struct s3l_buf *b = &d->name;
    s3l_buf_reset(b);
    static const char *const table[] = {"db", "schema", "table", "collection"};
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < 4; k++)
        rc = field(b, table[k], v, src ? s3l__dbz_member(v, src, table[k]) : 0);
    for (size_t k = 0; rc == 0 && k < sizeof(position_fields) / sizeof(position_fields[0]); k++) {
        size_t f = src ? s3l__dbz_member(v, src, position_fields[k]) : 0;
        if (f)
            rc = field(b, position_fields[k], v, f);
    }
    char ops[6] = {'o', 'p', '=', op, '\n', 0};
    if (rc == 0)
        rc = s3l_buf_append_str(b, ops) ? S3L_ENOMEM : 0;
    if (rc == 0)
        rc = field(b, "before", v, s3l__dbz_member(v, env, "before"));
    if (rc == 0)
        rc = field(b, "after", v, s3l__dbz_member(v, env, "after"));
    if (rc)
        return rc;
    uuid_t ns, id;
    if (uuid_parse(S3L__DBZ_NAMESPACE, ns) != 0)
        return S3L_EINTERNAL;
    uuid_generate_sha1(id, ns, (const char *)b->ptr, b->len);
    uuid_unparse_lower(id, out);
    return 0;
}
