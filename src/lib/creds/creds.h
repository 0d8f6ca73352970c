/*
 * creds: the module's internal header. The public API is include/s3l/creds.h; this adds the
 * provider struct behind the opaque type, the shared-files reader (an INI parser with the rules
 * of Python's configparser, which botocore uses, and the profile lookup over both files), and the
 * helpers the providers share. docs/internals/creds.md is the design note.
 */
#ifndef S3L_CREDS_INT_H
#define S3L_CREDS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/creds.h"
#include "s3l/error.h"

struct s3l_creds_provider {
    const struct s3l_creds_provider_ops *ops;
    void *impl;
};

/* Largest shared file, credential_process output or endpoint answer we read. */
#define S3L__CREDS_MAX_FILE (1024 * 1024)

/* Fills out (cleaned first) with copies of the strings; tok may be NULL or "" (none). 0 or
 * S3L_ENOMEM. */
int s3l__creds_fill(struct s3l_credentials *out, const char *ak, const char *sk, const char *tok,
                    int64_t expiration_ns, const char *source);

/* Parses an ISO 8601 / RFC 3339 UTC time ("2026-12-01T20:00:00Z", fractional seconds and a
 * +hh:mm offset allowed) into ns since the epoch. 0 or S3L_EINVALID_CONFIG (no message set). */
int s3l__creds_parse_time(const char *s, int64_t *ns);

/* Reads credentials out of a JSON answer (credential_process, container, IMDS): the keys
 * AccessKeyId, SecretAccessKey, token_key (SessionToken or Token; optional), Expiration
 * (optional). what names the answer in messages (never the text itself). 0,
 * S3L_EINVALID_CONFIG, S3L_ENOMEM. When version_required, "Version" must be 1. */
int s3l__creds_from_json(const char *text, size_t len, const char *what, const char *token_key,
                         bool version_required, const char *source, struct s3l_credentials *out,
                         struct s3l_error *err);

/* Splits a command line into words like a POSIX shell without expansions (Python's
 * shlex.split, which botocore uses for credential_process): blanks separate, '...' is literal,
 * "..." honours \\ and \" only, a backslash outside quotes escapes the next character. *argv is a
 * NULL-terminated array in one allocation (free with s3l_free). 0, S3L_EINVALID_CONFIG
 * (unterminated quote, no words), S3L_ENOMEM. */
int s3l__creds_split_words(const char *cmd, char ***argv, struct s3l_error *err);

/* Copies the first line of s (at most max - 1 bytes) into out: for quoting a program's stderr. */
void s3l__creds_first_line(const char *s, size_t n, char *out, size_t max);

/* ---------------------------------------------------------------- INI files (ini.c) */

struct s3l__ini_entry {
    char *section;
    char *key; /* NULL: the section header itself */
    char *value;
};

struct s3l__ini {
    struct s3l__ini_entry *e;
    size_t n, cap;
};

/* Parses text as configparser does with botocore's settings: `[section]` headers, `key = value`
 * or `key: value` (key lower-cased, both stripped), full-line comments starting with # or ;,
 * lines indented deeper than their key's line continuing its value (joined with "\n"). A line
 * that is none of these,
 * a key before any section, a repeated section or a repeated key in one section is
 * S3L_EINVALID_CONFIG naming path and line. 0, S3L_EINVALID_CONFIG, S3L_ENOMEM. */
int s3l__ini_parse(const char *text, size_t len, const char *path, struct s3l__ini *ini,
                   struct s3l_error *err);
bool s3l__ini_has(const struct s3l__ini *ini, const char *section);
/* The value of key in section, else [DEFAULT]'s when section exists (configparser's defaults),
 * or NULL. */
const char *s3l__ini_get(const struct s3l__ini *ini, const char *section, const char *key);
/* Wipes the values (they may be secrets) and frees everything. */
void s3l__ini_free(struct s3l__ini *ini);

/* ---------------------------------------------------------------- profiles (profile.c) */

/* The options with every default resolved (strings owned). */
struct s3l__creds_opts {
    char *profile;
    bool profile_explicit; /* given in the options (like Session(profile=...)) */
    bool profile_named;    /* given in the options or by AWS_PROFILE / AWS_DEFAULT_PROFILE */
    char *credentials_file;
    char *config_file;
};

int s3l__creds_opts_resolve(const struct s3l_creds_options *in, struct s3l__creds_opts *out,
                            struct s3l_error *err);
void s3l__creds_opts_free(struct s3l__creds_opts *o);

/* Both files of one profile, read at one get. */
struct s3l__profile {
    const struct s3l__creds_opts *opts;
    struct s3l__ini creds, config;
    bool creds_found, config_found;
    char *config_section; /* "profile NAME" or "default", the section that holds it */
};

/* The profile's endpoint for service ("s3", "sts") into out (max bytes): the services
 * section's `endpoint_url` under service, else the profile's own endpoint_url (as
 * s3l_creds_profile_endpoint). false (out "") when neither is set or the value does not fit. */
bool s3l__profile_endpoint(const struct s3l__profile *p, const char *service, char *out,
                           size_t max);

/* Reads both files (a missing file is no error: *_found is false). 0, S3L_EINVALID_CONFIG,
 * S3L_EIO and the other os errors, S3L_ENOMEM. */
int s3l__profile_load(const struct s3l__creds_opts *opts, struct s3l__profile *p,
                      struct s3l_error *err);
/* key of the profile in the credentials file ([NAME]) or NULL. */
const char *s3l__profile_creds(const struct s3l__profile *p, const char *key);
/* key of the profile in the config file ([profile NAME], or [default]) or NULL. */
const char *s3l__profile_config(const struct s3l__profile *p, const char *key);
/* The merged profile (botocore's full_config): the credentials file's value wins. */
const char *s3l__profile_get(const struct s3l__profile *p, const char *key);
/* Whether another profile (a source_profile) exists in either file. */
bool s3l__profile_exists_named(const struct s3l__profile *p, const char *name);
const char *s3l__profile_get_named(const struct s3l__profile *p, const char *name,
                                   const char *key);
bool s3l__profile_exists(const struct s3l__profile *p);
void s3l__profile_free(struct s3l__profile *p);
/* A lookup of one file's section of the profile: s3l__profile_creds or s3l__profile_config. */
typedef const char *(*s3l__profile_lookup)(const struct s3l__profile *p, const char *key);
/* The keys found through get (aws_access_key_id, aws_secret_access_key, aws_session_token or
 * aws_security_token, botocore's names) into out, reported as `method`; section and path name the
 * place in messages. 0; S3L_ENOT_FOUND without a key id; S3L_EAUTH_INVALID with a key id but no
 * secret; S3L_ENOMEM. */
int s3l__profile_keys(const struct s3l__profile *p, s3l__profile_lookup get, const char *section,
                      const char *path, const char *method, struct s3l_credentials *out,
                      struct s3l_error *err);

/* ---------------------------------------------------------------- providers (one file each) */

/* A provider whose impl is the resolved options (struct s3l__creds_opts, freed by
 * s3l__creds_opts_destroy): the profile-based providers. 0, S3L_EINVALID_ARGUMENT, S3L_ENOMEM. */
int s3l__creds_profile_provider_new(const struct s3l_creds_options *opts,
                                    const struct s3l_creds_provider_ops *ops,
                                    struct s3l_creds_provider **out, struct s3l_error *err);
void s3l__creds_opts_destroy(void *impl);

int s3l__creds_role_new(const struct s3l_creds_options *opts, struct s3l_creds_provider **out,
                        struct s3l_error *err);
int s3l__creds_web_identity_new(const struct s3l_creds_options *opts,
                                struct s3l_creds_provider **out, struct s3l_error *err);
int s3l__creds_sso_new(const struct s3l_creds_options *opts, struct s3l_creds_provider **out,
                       struct s3l_error *err);

/* ---------------------------------------------------------------- STS (sts.c) */

/* One STS call. action "AssumeRole" or "GetCallerIdentity" (signed with signer; the latter
 * sends only Action and Version, and its answer's Arn is out->principal, no keys) or "AssumeRoleWithWebIdentity"
 * (unsigned; signer NULL, web_identity_token set). session_name NULL or "": botocore's default,
 * "botocore-session-<unix seconds>". external_id NULL: none sent. duration_seconds 0: STS's
 * default (1 h). region: an explicit one (a flag), else AWS_REGION, AWS_DEFAULT_REGION,
 * profile_region, us-east-1. endpoint: explicit, else AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL,
 * profile_endpoint (the profile's services section's sts endpoint_url, else its endpoint_url:
 * s3l__profile_endpoint), https://sts.REGION.amazonaws.com. source: the method string the
 * answer carries. */
struct s3l__sts_request {
    const char *action;
    const char *role_arn;
    const char *session_name;
    const char *external_id;
    int duration_seconds;
    const char *web_identity_token;
    const struct s3l_credentials *signer;
    const char *region;
    const char *profile_region;
    const char *endpoint;
    const char *profile_endpoint;
    const char *source;
    /* After AWS_ENDPOINT_URL_STS and AWS_ENDPOINT_URL, before the AWS endpoint: for
     * GetCallerIdentity, an S3-compatible store's own endpoint (Ceph RGW serves STS there). */
    const char *endpoint_fallback;
};

/* Calls STS and fills out (with principal = AssumedRoleUser.Arn). Retries THROTTLED and
 * TRANSIENT (3 attempts); returns 0, or: S3L_EPERMISSION_DENIED (AccessDenied: the message names
 * the role and the caller and says to check the trust policy's principal and external id first,
 * then the permissions policy), S3L_EAUTH_INVALID (the signer's key or the token refused),
 * S3L_EAUTH_EXPIRED (ExpiredToken), S3L_ETHROTTLED / S3L_ETRANSIENT (after the retries; also no
 * answer), S3L_EINVALID_CONFIG (ValidationError, a bad endpoint or region, an answer without
 * credentials), S3L_ENOMEM. err's http_status, s3_code and request_id are STS's. */
int s3l__sts_assume(const struct s3l__sts_request *rq, struct s3l_credentials *out,
                    struct s3l_error *err);

/* The access key id as its first 4 and last 4 characters ("AKIA...WXYZ"; whole when 8 or
 * fewer), the principal named in messages (issue 11). */
void s3l__creds_abbrev(const char *key_id, char *out, size_t max);

/* ---------------------------------------------------------------- HTTP for the endpoints (http.c) */

/* One HTTP request through libcurl with a 1 s connect and total timeout. method "GET" or "PUT";
 * headers NULL-terminated ("Name: value"). *status is the HTTP status, 0 when nothing answered
 * (then 0 is returned and *reason says why: "no answer in 1 s", "connection refused"). The body
 * is appended to body (at most S3L__CREDS_MAX_FILE). 0, S3L_ENOMEM, S3L_ETOO_LARGE. */
struct s3l_buf;
int s3l__creds_http(const char *method, const char *url, const char *const *headers,
                    long *status, struct s3l_buf *body, char *reason, size_t reason_max,
                    struct s3l_error *err);

/* The general request behind s3l__creds_http: method "GET", "PUT" or "POST" with body[0..len)
 * (may hold secrets: curl does not copy it; the caller wipes it), a total timeout in ms (the
 * connect timeout is the smaller of it and 5 s), and whether to bypass any proxy (the link-local
 * endpoints) or let libcurl honour the proxy variables (STS). Same results as s3l__creds_http;
 * *reason says "no answer in N s" after a timeout. */
struct s3l__creds_http_req {
    const char *method;
    const char *url;
    const char *const *headers;
    const void *body;
    size_t body_len;
    long timeout_ms;
    bool no_proxy;
};
int s3l__creds_http_do(const struct s3l__creds_http_req *rq, long *status, struct s3l_buf *body,
                       char *reason, size_t reason_max, struct s3l_error *err);

#endif
