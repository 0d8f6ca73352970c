/*
 * creds: a profile with role_arn, botocore's AssumeRoleProvider (method "assume-role"). It
 * comes right after the environment in the default chain: a profile that names a role means
 * "use the role", even when it also holds keys (those are then the source profile's keys).
 *
 * The rules are botocore's (credentials.py, AssumeRoleProvider): a role profile has
 * source_profile or credential_source (Environment, Ec2InstanceMetadata, EcsContainer), not
 * both; a source_profile must exist; a profile may name itself as its source only when it holds
 * keys; any other repeat is a loop (InfiniteLoopConfigError). The source credentials are:
 * credential_source's provider; or, for a source profile with keys or without role_arn, that
 * profile's own chain with the environment off (web identity, sso, shared-credentials-file,
 * custom-process, config-file: botocore's profile_provider_builder); or the source profile's
 * own role, assumed first (a chain of roles). Then STS AssumeRole (sts.c) with the profile's
 * role_arn, external_id, role_session_name (default botocore-session-<unix seconds>) and
 * duration_seconds (an integer; botocore ignores one that is not). mfa_serial is not supported
 * (s3land never prompts): such a profile is refused.
 */
#include "creds/creds.h"

#include <stdlib.h>
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

static int assume(const struct s3l__creds_opts *o, const struct s3l__profile *p,
                  const char *name, int depth, struct s3l_credentials *out,
                  struct s3l_error *err);

/* The provider of a credential_source (botocore's CanonicalNameCredentialSourcer). */
static int from_source(const char *cs, const char *name, struct s3l_credentials *out,
                       struct s3l_error *err)
{
    struct s3l_creds_provider *sp = NULL;
    int rc = strcmp(cs, "Environment") == 0           ? s3l_creds_env_new(&sp, err)
             : strcmp(cs, "Ec2InstanceMetadata") == 0 ? s3l_creds_imds_new(&sp, err)
                                                      : s3l_creds_container_new(&sp, err);
    struct s3l_error e = {0};
    if (rc == 0 && (rc = s3l_creds_provider_get(sp, out, &e)) == S3L_ENOT_FOUND)
        rc = s3l_error_set(err, S3L_EAUTH_INVALID,
                           "profile %.100s: credential_source %s gave no credentials (%s)", name,
                           cs, e.message);
    else if (rc != 0)
        rc = s3l_error_set(err, rc, "profile %.100s: credential_source %s: %s", name, cs,
                           e.message);
    s3l_creds_provider_free(sp);
    return rc;
}

/* A source profile's own chain, the environment off (botocore's profile_provider_builder). */
static int from_profile(const struct s3l__creds_opts *o, const char *src,
                        struct s3l_credentials *out, struct s3l_error *err)
{
    struct s3l_creds_options so = {S3L_CREDS_OPTIONS_VERSION, src, o->credentials_file,
                                   o->config_file};
    typedef int (*ctor)(const struct s3l_creds_options *, struct s3l_creds_provider **,
                        struct s3l_error *);
    const ctor make[] = {s3l__creds_web_identity_new, s3l__creds_sso_new,
                         s3l_creds_shared_file_new, s3l_creds_process_new,
                         s3l_creds_config_file_new};
    struct s3l_creds_provider *ps[5], *chain = NULL;
    int n = 0, rc = 0;
    for (size_t i = 0; rc == 0 && i < S3L_ARRAY_LEN(make); i++)
        if ((rc = make[i](&so, &ps[n], err)) == 0)
            n++;
    if (rc == 0) {
        rc = s3l_creds_chain_new(ps, n, &chain, err);
    } else {
        for (int i = 0; i < n; i++)
            s3l_creds_provider_free(ps[i]);
    }
    struct s3l_error e = {0};
    if (rc == 0 && (rc = s3l_creds_provider_get(chain, out, &e)) != 0)
        rc = s3l_error_set(err, rc == S3L_ENOT_FOUND ? S3L_EAUTH_INVALID : rc,
                           "source profile %.100s: %s", src, e.message);
    s3l_creds_provider_free(chain);
    return rc;
}

static int source_of(const struct s3l__creds_opts *o, const struct s3l__profile *p,
                     const char *name, int depth, struct s3l_credentials *out,
                     struct s3l_error *err)
{
    const char *cs = s3l__profile_get_named(p, name, "credential_source");
    if (cs)
        return from_source(cs, name, out, err);
    const char *src = s3l__profile_get_named(p, name, "source_profile");
    if (has_keys(p, src) || !s3l__profile_get_named(p, src, "role_arn") ||
        s3l__profile_get_named(p, src, "web_identity_token_file"))
        return from_profile(o, src, out, err);
    return assume(o, p, src, depth + 1, out, err);
}

static int assume(const struct s3l__creds_opts *o, const struct s3l__profile *p,
                  const char *name, int depth, struct s3l_credentials *out,
                  struct s3l_error *err)
{
    if (depth > 16)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "profile %.100s: over 16 chained roles", o->profile);
    if (s3l__profile_get_named(p, name, "mfa_serial"))
        return s3l_error_set(err, S3L_EUNSUPPORTED,
                             "profile %.100s has mfa_serial: s3land never prompts for a code; "
                             "give the role's credentials through credential_process",
                             name);
    struct s3l_credentials src = {0};
    int rc = source_of(o, p, name, depth, &src, err);
    if (rc != 0)
        return rc;
    const char *dur = s3l__profile_get_named(p, name, "duration_seconds");
    char *end = NULL;
    long d = dur ? strtol(dur, &end, 10) : 0;
    struct s3l__sts_request rq = {0};
    rq.action = "AssumeRole";
    rq.role_arn = s3l__profile_get_named(p, name, "role_arn");
    rq.session_name = s3l__profile_get_named(p, name, "role_session_name");
    rq.external_id = s3l__profile_get_named(p, name, "external_id");
    rq.duration_seconds = dur && *dur && !*end && d > 0 && d < 1000000 ? (int)d : 0;
    rq.signer = &src;
    rq.profile_region = s3l__profile_get_named(p, o->profile, "region");
    char ep[1024]; /* the STS client is the profile's (o->profile, the top of the chain) */
    rq.profile_endpoint = s3l__profile_endpoint(p, "sts", ep, sizeof(ep)) ? ep : NULL;
    rq.source = "assume-role";
    rc = s3l__sts_assume(&rq, out, err);
    if (rc != 0)
        s3l_error_prefix(err, "profile %.100s", name);
    s3l_credentials_cleanup(&src);
    return rc;
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
        rc = assume(o, &p, o->profile, 0, out, err);
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
