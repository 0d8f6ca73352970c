/*
 * Request counts: what a run cost a store, by operation (issue 14 item 4). The store reports them
 * (s3l_store_counts, include/s3l/store.h), the destination per epoch
 * (struct s3l_dest_commit_info), the pipeline per run (struct s3l_pipeline_stats) and
 * `s3land write --json` in its events. Plain values, no allocation: a struct can be copied.
 */
#ifndef S3L_COUNTS_H
#define S3L_COUNTS_H

#include <stddef.h>
#include <stdint.h>

/*
 * What a store cost: its requests by operation (issue 14 item 4). For S3 (unit "s3 requests")
 * an op is an S3 API operation name ("PutObject", "ListObjectsV2", ...) and n its HTTP attempts,
 * retries included; for the local backend and wrappers (unit "store operations") an op is a
 * dispatch function's name ("put", "get", "stat", "list", "remove", "copy", "upload" for a
 * published upload, "upload_abort", "remove_many"), counted once a call. Names are static strings; ops with a
 * count of 0 are left out; total is the sum of every n.
 */
#define S3L_STORE_COUNTS_MAX 24
struct s3l_store_count {
    const char *op;
    uint64_t n;
};
struct s3l_store_counts {
    const char *unit; /* "s3 requests" or "store operations" */
    size_t n;         /* entries used in ops */
    uint64_t total;
    struct s3l_store_count ops[S3L_STORE_COUNTS_MAX];
};

/*
 * after minus before, op by op (matched by name; an op missing in before counts from 0), into
 * out, which may be after itself; unit from after. Ops whose difference is 0 are left out. For
 * the requests of one step: take the counts before and after it.
 */
void s3l_counts_diff(const struct s3l_store_counts *after, const struct s3l_store_counts *before,
                     struct s3l_store_counts *out);

/* The count of op in c (0 when it is not there). */
uint64_t s3l_counts_get(const struct s3l_store_counts *c, const char *op);

#endif
