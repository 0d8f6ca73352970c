/*
 * --sse, --sse-kms-key-id and --storage-class on the commands that open a store through struct
 * cli_s3 (recover, gc, check: recover commits staged files, so its copies and markers must be
 * encrypted as write's were). write takes the same flags into its pipeline options (cmd_write.c).
 * Values are checked one by one against the S3 API's lists (s3l_s3_sse_check) as they are
 * parsed: a bad one is a usage error (exit 1); a KMS key id without --sse aws:kms is refused
 * when the store opens.
 */
#include <getopt.h>

#include "cli.h"

const char cli_sse_help[] =
    "Encryption (s3://; as write's, docs/cli.md):\n"
    "  --sse AES256|aws:kms   server-side encryption of every object written or copied\n"
    "  --sse-kms-key-id ID    the KMS key of --sse aws:kms\n"
    "  --storage-class C      data files' storage class (_openetl/ stays STANDARD)\n"
    "\n";

int cli_sse_option(struct cli *c, const char *cmd, int opt, struct cli_s3 *s3)
{
    const char *v = optarg;
    struct s3l_error e = {0};
    switch (opt) {
    case CLI_O_SSE:
        s3->sse = v;
        break;
    case CLI_O_SSE_KMS_KEY_ID:
        s3->sse_kms_key_id = v;
        return 0; /* checked with --sse, at open */
    case CLI_O_STORAGE_CLASS:
        s3->storage_class = v;
        break;
    default:
        return -1;
    }
    if (s3l_s3_sse_check(s3->sse, NULL, s3->storage_class, &e) != 0)
        return cli_usage(c, cmd, "%s", e.message);
    return 0;
}

void cli_sse_store_options(const struct cli_s3 *s, struct s3l_s3_store_options *o)
{
    o->sse = s->sse;
    o->sse_kms_key_id = s->sse_kms_key_id;
    o->storage_class = s->storage_class;
}
