/*
 * creds: web identity, botocore's AssumeRoleWithWebIdentityProvider (method
 * "assume-role-with-web-identity"): AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN (EKS IRSA),
 * or the profile's web_identity_token_file with role_arn. The environment is read first, then
 * the profile, as botocore does (its _get_config takes the environment variable over the
 * profile key).
 *
 * The token file is read at every get (EKS rotates it) and sent, unsigned, through STS
 * AssumeRoleWithWebIdentity (sts.c) with the role ARN and AWS_ROLE_SESSION_NAME or the
 * profile's role_session_name (default botocore-session-<unix seconds>, as botocore). The
 * token is a secret: wiped after the call, never quoted. A token file that cannot be read is an
 * error, not "nothing here": the setup names this source (botocore raises there too).
 */
#include "creds/creds.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "os/os.h"
#include "util/util.h"

static const char *var(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int call(const char *file, const char *arn, const char *session, const char *region,
                const char *endpoint, struct s3l_credentials *out, struct s3l_error *err)
{
    struct s3l_buf b;
    s3l_buf_init(&b, 64 * 1024);
    struct s3l_error e = {0};
    int rc = s3l__os_read_file(file, 64 * 1024, &b, &e);
    if (rc != 0) /* a missing file must not pass to the next source: the setup names this one */
        rc = s3l_error_set(err, rc == S3L_ENOT_FOUND ? S3L_EINVALID_CONFIG : rc,
                           "web identity token file %.200s: %s", file, e.message);
    while (rc == 0 && b.len > 0 && strchr("\r\n \t", b.ptr[b.len - 1]))
        b.ptr[--b.len] = '\0';
    if (rc == 0 && b.len == 0)
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "web identity token file %.200s is empty",
                           file);
    if (rc == 0) {
        struct s3l__sts_request rq = {0};
        rq.action = "AssumeRoleWithWebIdentity";
        rq.role_arn = arn;
        rq.session_name = session;
        rq.web_identity_token = (const char *)b.ptr;
        rq.profile_region = region;
        rq.profile_endpoint = endpoint;
        rq.source = "assume-role-with-web-identity";
        rc = s3l__sts_assume(&rq, out, err);
    }
    OPENSSL_cleanse(b.ptr, b.cap);
    s3l_buf_free(&b);
    return rc;
}

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    const struct s3l__creds_opts *o = impl;
    struct s3l__profile p;
    int rc = s3l__profile_load(o, &p, err);
    if (rc != 0)
        return rc;
    /* a profile named in code turns the environment's settings off (botocore's
     * disable_env_vars) */
    const char *file = o->profile_explicit ? NULL : var("AWS_WEB_IDENTITY_TOKEN_FILE");
    const char *arn = o->profile_explicit ? NULL : var("AWS_ROLE_ARN");
    if (!file)
        file = s3l__profile_get(&p, "web_identity_token_file");
    if (!arn)
        arn = s3l__profile_get(&p, "role_arn");
    if (!file)
        rc = s3l_error_set(err, S3L_ENOT_FOUND, "AWS_WEB_IDENTITY_TOKEN_FILE not set");
    else if (!arn)
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG,
                           "a web identity token file (%.200s) but no role ARN (AWS_ROLE_ARN or "
                           "role_arn in profile %.100s)",
                           file, o->profile);
    else {
        const char *session = o->profile_explicit ? NULL : var("AWS_ROLE_SESSION_NAME");
        if (!session)
            session = s3l__profile_get(&p, "role_session_name");
        char ep[1024];
        rc = call(file, arn, session, s3l__profile_get(&p, "region"),
                  s3l__profile_endpoint(&p, "sts", ep, sizeof(ep)) ? ep : NULL, out, err);
    }
    s3l__profile_free(&p);
    return rc;
}

static const struct s3l_creds_provider_ops ops = {S3L_CREDS_PROVIDER_OPS_VERSION,
                                                  "assume-role-with-web-identity", get,
                                                  s3l__creds_opts_destroy};

int s3l__creds_web_identity_new(const struct s3l_creds_options *opts,
                                struct s3l_creds_provider **out, struct s3l_error *err)
{
    return s3l__creds_profile_provider_new(opts, &ops, out, err);
}
