/*
 * creds: credential_process, botocore's ProcessProvider (method "custom-process"). The
 * profile's command (from the merged profile) is split into words as shlex.split does, run
 * without a shell, and its stdout read as the JSON the AWS CLI documents ("Sourcing credentials
 * with an external process": Version 1, AccessKeyId, SecretAccessKey, SessionToken,
 * Expiration). The program runs at every get; a cache in front keeps its answer until 5 minutes
 * before Expiration. Its output holds the secret: it is wiped, and never quoted in a message.
 */
#include "creds/creds.h"

#include <string.h>

#include <openssl/crypto.h>

#include "os/os.h"
#include "util/util.h"

static int run(const char *cmd, const char *profile, struct s3l_credentials *out,
               struct s3l_error *err)
{
    char **argv = NULL;
    int rc = s3l__creds_split_words(cmd, &argv, err);
    if (rc != 0)
        return s3l_error_prefix(err, "profile %.100s", profile);
    struct s3l_buf so, se;
    s3l_buf_init(&so, S3L__CREDS_MAX_FILE);
    s3l_buf_init(&se, S3L__CREDS_MAX_FILE);
    /* One allocation for any usual answer (a JSON of a few hundred bytes): a buffer grown by
     * realloc would leave copies of the secret in freed memory. */
    if (s3l_buf_reserve(&so, 64 * 1024) != 0 || s3l_buf_reserve(&se, 4096) != 0) {
        s3l_buf_free(&so), s3l_buf_free(&se), s3l_free(argv);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for credential_process");
    }
    int status = 0;
    struct s3l_error e = {0};
    rc = s3l__os_run(argv, S3L__CREDS_MAX_FILE, &so, &se, &status, &e);
    if (rc != 0) {
        s3l_error_set(err, rc, "credential_process of profile %.100s: %s", profile, e.message);
    } else if (status != 0) {
        char first[160];
        s3l__creds_first_line((const char *)se.ptr, se.len, first, sizeof(first));
        rc = s3l_error_set(err, S3L_EAUTH_INVALID,
                           "credential_process %.100s of profile %.100s exited with status %d%s%s",
                           argv[0], profile, status, first[0] ? ": " : "", first);
    } else {
        rc = s3l__creds_from_json((const char *)so.ptr, so.len, "the credential_process answer",
                                  "SessionToken", true, "custom-process", out, err);
        if (rc != 0)
            s3l_error_prefix(err, "profile %.100s", profile);
    }
    if (so.ptr)
        OPENSSL_cleanse(so.ptr, so.len);
    if (se.ptr)
        OPENSSL_cleanse(se.ptr, se.len);
    s3l_buf_free(&so), s3l_buf_free(&se);
    s3l_free(argv);
    return rc;
}

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    const struct s3l__creds_opts *o = impl;
    struct s3l__profile p;
    int rc = s3l__profile_load(o, &p, err);
    if (rc != 0)
        return rc;
    const char *cmd = s3l__profile_get(&p, "credential_process");
    if (!cmd)
        rc = s3l_error_set(err, S3L_ENOT_FOUND, "no credential_process in profile %.100s",
                           o->profile);
    else
        rc = run(cmd, o->profile, out, err);
    s3l__profile_free(&p);
    return rc;
}

static const struct s3l_creds_provider_ops ops = {
    S3L_CREDS_PROVIDER_OPS_VERSION, "custom-process", get, s3l__creds_opts_destroy};

int s3l_creds_process_new(const struct s3l_creds_options *opts, struct s3l_creds_provider **out,
                          struct s3l_error *err)
{
    return s3l__creds_profile_provider_new(opts, &ops, out, err);
}
