/*
 * creds: the environment, botocore's EnvProvider (method "env"). The variables are read at each
 * get, so a process that changes them (a test, a wrapper renewing a token) is seen. The key id
 * decides: unset or empty, the source has nothing; set, its secret must be too.
 */
#include "creds/creds.h"

#include <stdlib.h>

#include "util/util.h"

static const char *var(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    const char *ak = var("AWS_ACCESS_KEY_ID"), *sk = var("AWS_SECRET_ACCESS_KEY");
    /* botocore takes AWS_SECURITY_TOKEN (the older name) first, then AWS_SESSION_TOKEN */
    const char *tok = var("AWS_SECURITY_TOKEN");
    if (!tok)
        tok = var("AWS_SESSION_TOKEN");
    const char *exp = var("AWS_CREDENTIAL_EXPIRATION");
    if (!ak)
        return s3l_error_set(err, S3L_ENOT_FOUND, "AWS_ACCESS_KEY_ID not set");
    if (!sk)
        return s3l_error_set(err, S3L_EAUTH_INVALID,
                             "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
    int64_t exp_ns = 0;
    if (exp && s3l__creds_parse_time(exp, &exp_ns) != 0)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "AWS_CREDENTIAL_EXPIRATION \"%.40s\" is not an ISO 8601 time", exp);
    if (s3l__creds_fill(out, ak, sk, tok, exp_ns, "env") != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for credentials");
    return 0;
}

static const struct s3l_creds_provider_ops ops = {S3L_CREDS_PROVIDER_OPS_VERSION, "env", get,
                                                  NULL};

int s3l_creds_env_new(struct s3l_creds_provider **out, struct s3l_error *err)
{
    return s3l_creds_provider_new(&ops, NULL, out, err);
}
