/*
 * Requests by S3 operation: the client counts every attempt it starts under the operation's name
 * (http.c), so that a run can say what it cost (issue 14 item 4: `s3land write --json` reports it
 * per epoch and per run). The names are the S3 API Reference's operation names.
 */
#include <string.h>

#include "s3/s3_int.h"

static const char *const op_names[S3L_S3_N_OPS] = {
    "PutObject",     "GetObject",      "HeadObject",          "HeadBucket",
    "ListObjectsV2", "DeleteObject",   "DeleteObjects",       "CopyObject",
    "CreateMultipartUpload", "UploadPart", "UploadPartCopy", "CompleteMultipartUpload",
    "AbortMultipartUpload",  "ListParts",  "ListMultipartUploads", "Other",
};

int s3l__s3_op_index(const char *op)
{
    for (int i = 0; op && i < S3L_S3_N_OPS - 1; i++)
        if (strcmp(op, op_names[i]) == 0)
            return i;
    return S3L_S3_N_OPS - 1;
}

const char *s3l__s3_op_name(int i)
{
    return op_names[i >= 0 && i < S3L_S3_N_OPS ? i : S3L_S3_N_OPS - 1];
}

uint64_t s3l_s3_client_op_counts(struct s3l_s3_client *c, const char *names[S3L_S3_N_OPS],
                                 uint64_t n[S3L_S3_N_OPS])
{
    if (c->sync_ok)
        pthread_mutex_lock(&c->mu);
    uint64_t total = c->n_requests;
    for (int i = 0; i < S3L_S3_N_OPS; i++) {
        if (names)
            names[i] = op_names[i];
        if (n)
            n[i] = c->op_n[i];
    }
    if (c->sync_ok)
        pthread_mutex_unlock(&c->mu);
    return total;
}
