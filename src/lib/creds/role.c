/*
 * creds: a profile with role_arn, botocore's AssumeRoleProvider (method "assume-role"). It
 * comes right after the environment in the default chain: a profile that names a role means
 * "use the role", even when it also holds keys (those are then the source profile's keys).
 *
 * This build has no STS client yet (issue 11, Build item 1, "role_arn + source_profile"): the
 * provider recognises the setup with botocore's rules, checks the source (source_profile that
 * exists, or credential_source one of Environment, Ec2InstanceMetadata, EcsContainer, not both)
 * and then refuses with S3L_EUNSUPPORTED, so the chain stops here as botocore's does, and never
 * signs with another identity (a later source's keys) than the one configured.
 */
#include "creds/creds.h"

#include <string.h>

#include "util/util.h"

static bool has_keys(const struct s3l__profile *p, const char *name)
{
    return s3l__profile_get_named(p, name, "aws_access_key_id") ||
           s3l__profile_get_named(p, name, "aws_secret_access_key");
}

/* One role profile's own settings: a source, one of them, a known credential_source. */
static int check_one(const struct s3l__profile *p, const char *name, struct s3l_error *err)
{
    const char *src = s3l__profile_get_named(p, name, "source_profile");
    const char *cs = s3l__profile_get_named(p, name, "credential_source");
    if (src && cs)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "profile %.100s has both source_profile and credential_source", name);
    if (!src && !cs)
        return s3l_error_set(err, S3L_EAUTH_INVALID,
                             "profile %.100s has role_arn but neither source_profile nor "
                             "credential_source",
                             name);
    if (cs && strcmp(cs, "Environment") != 0 && strcmp(cs, "Ec2InstanceMetadata") != 0 &&
        strcmp(cs, "EcsContainer") != 0)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "profile %.100s: credential_source %.60s is not one of Environment, "
                             "Ec2InstanceMetadata, EcsContainer",
                             name, cs);
    if (src && !s3l__profile_exists_named(p, src))
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "profile %.100s: source_profile %.100s is in neither file", name, src);
    return 0;
}

/* Walks the source_profile links as botocore does: a profile may name itself when it holds
 * keys (the role is assumed with them); any other repeat is a loop. A source profile with keys,
 * or without role_arn, ends the walk. */
static int check(const struct s3l__profile *p, const char *name, struct s3l_error *err)
{
    const char *visited[16];
    int n = 0;
    visited[n++] = name;
    for (const char *cur = name;;) {
        int rc = check_one(p, cur, err);
        const char *src = s3l__profile_get_named(p, cur, "source_profile");
        if (rc != 0 || !src)
            return rc;
        for (int i = 0; i < n; i++)
            if (strcmp(visited[i], src) == 0) {
                if (strcmp(src, cur) == 0 && has_keys(p, src))
                    return 0;
                return s3l_error_set(err, S3L_EINVALID_CONFIG,
                                     "profile %.100s: source_profile %.100s makes a loop", cur,
                                     src);
            }
        if (n == (int)(sizeof(visited) / sizeof(visited[0])))
            return s3l_error_set(err, S3L_EINVALID_CONFIG,
                                 "profile %.100s: over 16 chained source profiles", name);
        visited[n++] = src;
        if (has_keys(p, src) || !s3l__profile_get_named(p, src, "role_arn"))
            return 0;
        cur = src;
    }
}

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    const struct s3l__creds_opts *o = impl;
    struct s3l__profile p;
    int rc = s3l__profile_load(o, &p, err);
    if (rc != 0)
        return rc;
    const char *arn = s3l__profile_get(&p, "role_arn");
    if (!arn)
        rc = s3l_error_set(err, S3L_ENOT_FOUND, "no role_arn in profile %.100s", o->profile);
    else if (s3l__profile_get(&p, "web_identity_token_file"))
        rc = s3l_error_set(err, S3L_ENOT_FOUND,
                           "profile %.100s has web_identity_token_file (a web identity role)",
                           o->profile);
    else if ((rc = check(&p, o->profile, err)) == 0)
        rc = s3l_error_set(err, S3L_EUNSUPPORTED,
                           "profile %.100s names role %.200s; STS AssumeRole is not built yet "
                           "(issue 11): give the role's credentials through credential_process",
                           o->profile, arn);
    s3l__profile_free(&p);
    return rc;
}

static const struct s3l_creds_provider_ops ops = {
    S3L_CREDS_PROVIDER_OPS_VERSION, "assume-role", get, s3l__creds_opts_destroy};

int s3l__creds_role_new(const struct s3l_creds_options *opts, struct s3l_creds_provider **out,
                        struct s3l_error *err)
{
    return s3l__creds_profile_provider_new(opts, &ops, out, err);
}
