/*
 * creds: the default chain, in botocore's order (credentials.py, create_credential_resolver;
 * the same order as the AWS SDKs and Tools Reference Guide's "Standardized credential
 * providers"):
 *   env, assume-role, assume-role-with-web-identity, sso, shared-credentials-file,
 *   custom-process, config-file, container-role, iam-role.
 * A profile given in code leaves env out (botocore: "An explicitly provided profile will negate
 * an EnvProvider"). botocore's two legacy sources (the boto2 ~/.boto file and AWS_CREDENTIAL_FILE)
 * are not read. Before any source, a profile named explicitly (in code, AWS_PROFILE or
 * AWS_DEFAULT_PROFILE) must exist in one of the files: botocore raises ProfileNotFound then,
 * even when the environment holds keys.
 */
#include "creds/creds.h"

#include "util/util.h"

static int check_profile(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    const struct s3l__creds_opts *o = impl;
    /* S3L_ENOT_FOUND without a message: a chain lists no reason for this step */
    if (!o->profile_named)
        return S3L_ENOT_FOUND;
    struct s3l__profile p;
    int rc = s3l__profile_load(o, &p, err);
    if (rc != 0)
        return rc;
    if (s3l__profile_exists(&p))
        rc = S3L_ENOT_FOUND;
    else
        rc = s3l_error_set(err, S3L_EINVALID_CONFIG, "profile %.100s is in neither %s nor %s",
                           o->profile, o->credentials_file, o->config_file);
    s3l__profile_free(&p);
    return rc;
}

static const struct s3l_creds_provider_ops profile_check_ops = {
    S3L_CREDS_PROVIDER_OPS_VERSION, "profile", check_profile, s3l__creds_opts_destroy};

typedef int (*profile_ctor)(const struct s3l_creds_options *, struct s3l_creds_provider **,
                            struct s3l_error *);

int s3l_creds_default_chain_new(const struct s3l_creds_options *opts,
                                struct s3l_creds_provider **out, struct s3l_error *err)
{
    *out = NULL;
    struct s3l__creds_opts o;
    int rc = s3l__creds_opts_resolve(opts, &o, err);
    if (rc != 0)
        return rc;
    bool explicit_profile = o.profile_explicit;
    s3l__creds_opts_free(&o);
    const profile_ctor by_profile[] = {s3l__creds_role_new, s3l__creds_web_identity_new,
                                       s3l__creds_sso_new,  s3l_creds_shared_file_new,
                                       s3l_creds_process_new, s3l_creds_config_file_new};
    struct s3l_creds_provider *p[10];
    int n = 0;
    rc = s3l__creds_profile_provider_new(opts, &profile_check_ops, &p[n], err);
    if (rc == 0)
        n++;
    if (rc == 0 && !explicit_profile && (rc = s3l_creds_env_new(&p[n], err)) == 0)
        n++;
    for (size_t i = 0; rc == 0 && i < sizeof(by_profile) / sizeof(by_profile[0]); i++)
        if ((rc = by_profile[i](opts, &p[n], err)) == 0)
            n++;
    if (rc == 0 && (rc = s3l_creds_container_new(&p[n], err)) == 0)
        n++;
    if (rc == 0 && (rc = s3l_creds_imds_new(&p[n], err)) == 0)
        n++;
    if (rc != 0) {
        for (int i = 0; i < n; i++)
            s3l_creds_provider_free(p[i]);
        return rc;
    }
    return s3l_creds_chain_new(p, n, out, err);
}
