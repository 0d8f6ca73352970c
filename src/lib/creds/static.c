/*
 * creds: keys given in code. botocore calls such credentials "explicit" (a client created with
 * aws_access_key_id=...); they never expire and cannot be refreshed.
 */
#include "creds/creds.h"

#include <string.h>

#include "util/util.h"

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    if (s3l_credentials_copy(out, impl) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for credentials");
    return 0;
}

static void destroy(void *impl)
{
    s3l_credentials_cleanup(impl);
    s3l_free(impl);
}

static const struct s3l_creds_provider_ops ops = {S3L_CREDS_PROVIDER_OPS_VERSION, "explicit",
                                                  get, destroy};

int s3l_creds_static_new(const char *access_key_id, const char *secret_access_key,
                         const char *session_token, struct s3l_creds_provider **out,
                         struct s3l_error *err)
{
    *out = NULL;
    if (!access_key_id || !*access_key_id || !secret_access_key || !*secret_access_key)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "static credentials need an access key id and a secret access key");
    struct s3l_credentials *c = s3l_calloc(1, sizeof(*c));
    if (!c || s3l__creds_fill(c, access_key_id, secret_access_key, session_token, 0,
                              "explicit") != 0) {
        s3l_free(c);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for credentials");
    }
    int rc = s3l_creds_provider_new(&ops, c, out, err);
    if (rc != 0)
        destroy(c);
    return rc;
}
