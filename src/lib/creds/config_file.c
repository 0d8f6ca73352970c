/*
 * creds: keys in the config file, botocore's ConfigProvider (method "config-file"): section
 * [profile NAME] of ~/.aws/config (or AWS_CONFIG_FILE), [default] for the default profile.
 */
#include "creds/creds.h"

#include "util/util.h"

static int keys(const struct s3l__profile *p, const struct s3l__creds_opts *o,
                struct s3l_credentials *out, struct s3l_error *err)
{
    const char *path = o->config_file;
    if (!p->config_found)
        return s3l_error_set(err, S3L_ENOT_FOUND, "%s not found", path);
    if (!p->config_section)
        return s3l_error_set(err, S3L_ENOT_FOUND, "no [profile %.100s] in %s", o->profile, path);
    return s3l__profile_keys(p, s3l__profile_config, p->config_section, path, "config-file", out,
                             err);
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

static const struct s3l_creds_provider_ops ops = {S3L_CREDS_PROVIDER_OPS_VERSION, "config-file",
                                                  get, s3l__creds_opts_destroy};

int s3l_creds_config_file_new(const struct s3l_creds_options *opts, struct s3l_creds_provider **out,
                              struct s3l_error *err)
{
    return s3l__creds_profile_provider_new(opts, &ops, out, err);
}
