/*
 * The values S3 takes for server-side encryption and storage class, checked before anything is
 * sent, so that a typo fails at once with the list rather than as a 400 after the data moved.
 * Sources: S3 API reference, PutObject / CopyObject / CreateMultipartUpload request headers:
 * x-amz-server-side-encryption "Valid Values: AES256 | aws:kms | aws:kms:dsse";
 * x-amz-storage-class "Valid Values: STANDARD | REDUCED_REDUNDANCY | STANDARD_IA | ONEZONE_IA |
 * INTELLIGENT_TIERING | GLACIER | DEEP_ARCHIVE | OUTPOSTS | GLACIER_IR | SNOW |
 * EXPRESS_ONEZONE"; x-amz-server-side-encryption-aws-kms-key-id only "if
 * x-amz-server-side-encryption has a valid value of aws:kms or aws:kms:dsse".
 */
#include <string.h>

#include "s3/s3_int.h"

static const char *const sse_values[] = {"AES256", "aws:kms", "aws:kms:dsse"};
static const char *const class_values[] = {
    "STANDARD",   "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING",
    "GLACIER",    "DEEP_ARCHIVE",       "OUTPOSTS",    "GLACIER_IR", "SNOW",
    "EXPRESS_ONEZONE",
};

static bool one_of(const char *v, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v, list[i]) == 0)
            return true;
    return false;
}

int s3l_s3_sse_check(const char *sse, const char *kms_key_id, const char *storage_class,
                     struct s3l_error *err)
{
    if (sse && !one_of(sse, sse_values, S3L_ARRAY_LEN(sse_values)))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "server-side encryption \"%.64s\": expected AES256, aws:kms or "
                             "aws:kms:dsse", sse);
    if (kms_key_id && (!sse || strncmp(sse, "aws:kms", 7) != 0))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "a KMS key id is given without server-side encryption aws:kms");
    if (kms_key_id && (!*kms_key_id || strlen(kms_key_id) > 2048 || strpbrk(kms_key_id, "\r\n")))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "the KMS key id is empty, over 2,048 bytes or holds CR or LF");
    if (storage_class && !one_of(storage_class, class_values, S3L_ARRAY_LEN(class_values)))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "storage class \"%.64s\": expected STANDARD, REDUCED_REDUNDANCY, "
                             "STANDARD_IA, ONEZONE_IA, INTELLIGENT_TIERING, GLACIER, "
                             "DEEP_ARCHIVE, OUTPOSTS, GLACIER_IR, SNOW or EXPRESS_ONEZONE",
                             storage_class);
    return 0;
}
