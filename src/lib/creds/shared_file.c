/*
 * creds: keys in the shared credentials file, botocore's SharedCredentialProvider (method
 * "shared-credentials-file"): section [NAME] of ~/.aws/credentials (or
 * AWS_SHARED_CREDENTIALS_FILE). The key id decides, as in the environment.
 */
#include "creds/creds.h"

#include "util/util.h"

/* The profile's keys from the credentials file into out. */
static int keys(const struct s3l__profile *p, const struct s3l__creds_opts *o,
                struct s3l_credentials *out, struct s3l_error *err)
{
    const char *path = o->credentials_file;
    if (!p->creds_found)
        return s3l_error_set(err, S3L_ENOT_FOUND, "%s not found", path);
    if (!s3l__ini_has(&p->creds, o->profile))
        return s3l_error_set(err, S3L_ENOT_FOUND, "no [%.100s] in %s", o->profile, path);
    return s3l__profile_keys(p, s3l__profile_creds, o->profile, path, "shared-credentials-file",
                             out, err);
}

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    struct s3l__profile p;
    int rc = s3l__profile_load(impl, &p, err);
    if (rc != 0)
        return rc;
    rc = keys(&p, impl, out, err);
    s3l__profile_free(&p);
    return rc;
}

static const struct s3l_creds_provider_ops ops = {
    S3L_CREDS_PROVIDER_OPS_VERSION, "shared-credentials-file", get, s3l__creds_opts_destroy};

int s3l_creds_shared_file_new(const struct s3l_creds_options *opts, struct s3l_creds_provider **out,
                              struct s3l_error *err)
{
    return s3l__creds_profile_provider_new(opts, &ops, out, err);
}
