/*
 * Credentials for libs3land: where the access key, secret and session token come from.
 *
 * A provider (opaque struct s3l_creds_provider) answers one question, "what are the credentials
 * now?", through a two-entry vtable (get, destroy), the shape of aws-c-auth's providers. The
 * library has one provider per source (static keys, the environment, the shared config and
 * credentials files, credential_process, the container endpoint, EC2 instance metadata), a chain
 * that asks them in order, and a cache that keeps an answer until 5 minutes before it expires.
 * s3l_creds_default_chain_new builds the chain in the order of the AWS SDKs (botocore's
 * create_credential_resolver; "Standardized credential providers" in the AWS SDKs and Tools
 * Reference Guide).
 *
 * Every answer says which source gave it, with botocore's method strings verbatim (env,
 * assume-role, assume-role-with-web-identity, shared-credentials-file, custom-process,
 * config-file, container-role, iam-role; "explicit" for keys given in code), so that what s3land
 * reports can be compared with `botocore.session.Session().get_credentials().method`.
 *
 * Secrets (the secret access key, the session token) never enter an error message; they are
 * wiped (OPENSSL_cleanse) when the struct holding them is cleaned up.
 */
#ifndef S3L_CREDS_H
#define S3L_CREDS_H

#include <stdint.h>

#include "s3l/error.h"

/*
 * One set of credentials. All strings are NUL-terminated and owned by the struct (allocated with
 * s3l_malloc); release them with s3l_credentials_cleanup, which wipes the secrets.
 * session_token is NULL when there is none. expiration_ns is the expiry in ns since the Unix
 * epoch (UTC), 0 when the credentials do not expire. source is botocore's method string of the
 * provider that gave them. principal is the ARN of the assumed role's session (STS's
 * AssumedRoleUser.Arn, "arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION") when the credentials
 * come from AssumeRole or AssumeRoleWithWebIdentity, else NULL (then the access key id, shown as
 * its first 4 and last 4 characters, names the principal in messages).
 */
struct s3l_credentials {
    char *access_key_id;
    char *secret_access_key;
    char *session_token;
    int64_t expiration_ns;
    char source[40];
    char *principal;
};

/* Wipes and frees the strings of c and zeroes it. c may be NULL or already clean. */
void s3l_credentials_cleanup(struct s3l_credentials *c);

/*
 * Sets dst to a deep copy of src (dst's previous content is cleaned up first). Returns 0, or
 * S3L_ENOMEM (dst is then clean).
 */
int s3l_credentials_copy(struct s3l_credentials *dst, const struct s3l_credentials *src);

struct s3l_creds_provider;

/*
 * Asks p for credentials and fills *out, which must be zeroed or hold credentials (it is cleaned
 * up first; the caller cleans it up after).
 * Returns 0; S3L_ENOT_FOUND when this source has none (err's message says why, e.g.
 * "AWS_ACCESS_KEY_ID not set"; a chain then asks the next source); S3L_EAUTH_INVALID when a
 * chain found nothing anywhere (the message lists each source tried and why it gave nothing) or
 * a source is configured but incomplete (an access key without its secret); S3L_EINVALID_CONFIG
 * for a malformed file or answer; S3L_EUNSUPPORTED for a configured source this build cannot use
 * (an sso_* profile, a role profile with mfa_serial); the STS classes of s3l_creds_role_new for
 * a role; S3L_ENOMEM. A provider may be
 * called from several threads only when it is a cache (s3l_creds_cache_new).
 */
int s3l_creds_provider_get(struct s3l_creds_provider *p, struct s3l_credentials *out,
                           struct s3l_error *err);

/* Destroys p and everything it owns. NULL is a no-op. */
void s3l_creds_provider_free(struct s3l_creds_provider *p);

/* ---------------------------------------------------------------- writing a provider */

/*
 * The vtable of a provider (for embedders with their own source, and for test fixtures).
 * name is the source's name in a chain's messages (botocore's method string for ours; may be
 * NULL); get follows s3l_creds_provider_get's contract; destroy frees impl (may be NULL).
 * version must be S3L_CREDS_PROVIDER_OPS_VERSION.
 */
#define S3L_CREDS_PROVIDER_OPS_VERSION 1
struct s3l_creds_provider_ops {
    int version;
    const char *name;
    int (*get)(void *impl, struct s3l_credentials *out, struct s3l_error *err);
    void (*destroy)(void *impl);
};

/*
 * Wraps impl behind ops as a provider (*out, freed with s3l_creds_provider_free, which calls
 * ops->destroy(impl)). ops must outlive the provider. Returns 0, S3L_EINVALID_ARGUMENT (NULL ops
 * or get, or a wrong version), or S3L_ENOMEM (impl is then not destroyed: the caller keeps it).
 */
int s3l_creds_provider_new(const struct s3l_creds_provider_ops *ops, void *impl,
                           struct s3l_creds_provider **out, struct s3l_error *err);

/* ---------------------------------------------------------------- the providers */

/*
 * Fixed keys given in code (source "explicit", as botocore names keys passed to a client).
 * access_key_id and secret_access_key must be non-empty; session_token may be NULL. The strings
 * are copied. Returns 0, S3L_EINVALID_ARGUMENT (a key missing), S3L_ENOMEM.
 */
int s3l_creds_static_new(const char *access_key_id, const char *secret_access_key,
                         const char *session_token, struct s3l_creds_provider **out,
                         struct s3l_error *err);

/*
 * The environment (source "env"): AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
 * (or the older AWS_SECURITY_TOKEN) and AWS_CREDENTIAL_EXPIRATION (ISO 8601), read at every
 * get, as botocore's EnvProvider does. get: S3L_ENOT_FOUND when AWS_ACCESS_KEY_ID is unset or
 * empty, S3L_EAUTH_INVALID when the key id is set without its secret, S3L_EINVALID_CONFIG for
 * an unreadable AWS_CREDENTIAL_EXPIRATION.
 */
int s3l_creds_env_new(struct s3l_creds_provider **out, struct s3l_error *err);

/*
 * Where the shared files are and which profile to read. NULL fields take the SDKs' defaults:
 * profile: AWS_DEFAULT_PROFILE, then AWS_PROFILE (botocore's order), then "default";
 * credentials_file: AWS_SHARED_CREDENTIALS_FILE, then ~/.aws/credentials; config_file:
 * AWS_CONFIG_FILE, then ~/.aws/config ("~" is HOME). A profile given here counts as explicit:
 * the default chain then leaves the environment's keys out, as botocore does for
 * Session(profile=...). version must be S3L_CREDS_OPTIONS_VERSION.
 */
#define S3L_CREDS_OPTIONS_VERSION 1
struct s3l_creds_options {
    int version;
    const char *profile;
    const char *credentials_file;
    const char *config_file;
};

/*
 * Keys of the profile in the shared credentials file (source "shared-credentials-file";
 * section `[NAME]`; aws_access_key_id, aws_secret_access_key, aws_session_token or
 * aws_security_token). get: S3L_ENOT_FOUND when the file, the section or its key id is absent;
 * S3L_EAUTH_INVALID for a key id without its secret. opts may be NULL (all defaults); it is
 * copied. Returns 0, S3L_EINVALID_ARGUMENT (wrong version), S3L_ENOMEM.
 */
int s3l_creds_shared_file_new(const struct s3l_creds_options *opts,
                              struct s3l_creds_provider **out, struct s3l_error *err);

/*
 * Keys of the profile in the config file (source "config-file"; section `[profile NAME]`, or
 * `[default]` for the default profile), as s3l_creds_shared_file_new otherwise.
 */
int s3l_creds_config_file_new(const struct s3l_creds_options *opts,
                              struct s3l_creds_provider **out, struct s3l_error *err);

/*
 * The profile's credential_process (source "custom-process"; from either file, the credentials
 * file's value winning). The command is split like a POSIX shell's words (quotes and
 * backslashes; no expansion, no shell) and run with stdin from /dev/null; its stdout must be
 * the JSON of the AWS CLI's "Sourcing credentials with an external process": Version 1,
 * AccessKeyId, SecretAccessKey, optional SessionToken and Expiration (ISO 8601). get:
 * S3L_ENOT_FOUND without credential_process; S3L_EAUTH_INVALID when the program fails (its
 * exit status and the first line of its stderr in the message); S3L_EINVALID_CONFIG for an
 * answer that is not that JSON or another Version. The output is never quoted in a message.
 */
int s3l_creds_process_new(const struct s3l_creds_options *opts, struct s3l_creds_provider **out,
                          struct s3l_error *err);

/*
 * The container credentials endpoint (source "container-role"; ECS, EKS Pod Identity):
 * AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on http://169.254.170.2), else
 * AWS_CONTAINER_CREDENTIALS_FULL_URI (https anywhere; http only to a loopback address,
 * 169.254.170.2 or 169.254.170.23), with the Authorization header from the file named by
 * AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (read at every get) or AWS_CONTAINER_AUTHORIZATION_TOKEN.
 * The answer is JSON: AccessKeyId, SecretAccessKey, Token, Expiration. Timeout 1 s per attempt.
 * get: S3L_ENOT_FOUND when neither variable is set or the endpoint does not answer;
 * S3L_EINVALID_CONFIG for a FULL_URI on a host the SDKs refuse, or a malformed answer;
 * S3L_EAUTH_INVALID when the endpoint refuses (4xx).
 */
int s3l_creds_container_new(struct s3l_creds_provider **out, struct s3l_error *err);

/*
 * EC2 instance metadata, IMDSv2 (source "iam-role"): PUT /latest/api/token with
 * X-aws-ec2-metadata-token-ttl-seconds: 21600, then GET
 * /latest/meta-data/iam/security-credentials/ (the role name) and .../ROLE (the JSON: Code
 * "Success", AccessKeyId, SecretAccessKey, Token, Expiration), each with the token in
 * X-aws-ec2-metadata-token. When the token PUT is answered 403, 404 or 405 (IMDSv1 only), the
 * GETs go without a token, as the SDKs fall back. Endpoint AWS_EC2_METADATA_SERVICE_ENDPOINT,
 * else http://169.254.169.254; AWS_EC2_METADATA_DISABLED=true turns it off; 1 s timeouts.
 * get: S3L_ENOT_FOUND when disabled, when nothing answers, or when the instance has no role;
 * S3L_EINVALID_CONFIG for a malformed answer.
 */
int s3l_creds_imds_new(struct s3l_creds_provider **out, struct s3l_error *err);

/*
 * A chain: asks each provider in order and returns the first answer. A provider's
 * S3L_ENOT_FOUND moves on (its reason is kept); any other failure stops the chain and is
 * returned, its message prefixed with the source's name (a source that is configured but broken
 * is not skipped: botocore raises there too). When every provider gave nothing, get returns
 * S3L_EAUTH_INVALID, "no credentials found: SOURCE: REASON; ...". The chain takes ownership of
 * the n providers (also on failure). Returns 0, S3L_EINVALID_ARGUMENT (n == 0), S3L_ENOMEM.
 */
int s3l_creds_chain_new(struct s3l_creds_provider **providers, int n,
                        struct s3l_creds_provider **out, struct s3l_error *err);

/*
 * The AWS SDKs' default chain, botocore's order: env (left out when opts names a profile),
 * assume-role (a role_arn in the profile), assume-role-with-web-identity
 * (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, or the profile's web_identity_token_file),
 * sso (refused: use credential_process), shared-credentials-file, custom-process, config-file,
 * container-role, iam-role. A role profile (role_arn with source_profile, chains of them, or
 * credential_source Environment, Ec2InstanceMetadata, EcsContainer; external_id,
 * role_session_name, duration_seconds) is assumed through STS AssumeRole, and web identity
 * through AssumeRoleWithWebIdentity (endpoint and region as s3l_creds_role_new, the profile's
 * region after AWS_REGION and AWS_DEFAULT_REGION); a loop of source profiles is
 * S3L_EINVALID_CONFIG, a profile with mfa_serial S3L_EUNSUPPORTED (s3land never prompts), and
 * STS's refusals are s3l_creds_role_new's. A profile named explicitly (opts->profile, AWS_PROFILE or
 * AWS_DEFAULT_PROFILE) that is in neither file is S3L_EINVALID_CONFIG, as botocore's
 * ProfileNotFound. Not cached: wrap it in s3l_creds_cache_new. Returns 0,
 * S3L_EINVALID_ARGUMENT (wrong options version), S3L_ENOMEM.
 */
int s3l_creds_default_chain_new(const struct s3l_creds_options *opts,
                                struct s3l_creds_provider **out, struct s3l_error *err);

/*
 * A role on top of source's credentials (the CLI's --role-arn; "Assume a role" in the AWS CLI
 * User Guide): STS AssumeRole (AWS STS API Reference; Query API, Version 2011-06-15, SigV4
 * service "sts") signed with source's answer, asked at every get. role_arn is required
 * ("arn:..."); external_id NULL sends none; session_name NULL is botocore's default,
 * "botocore-session-<unix seconds>"; duration_seconds 0 is STS's default (3600; STS accepts 900
 * up to the role's maximum); region NULL: AWS_REGION, AWS_DEFAULT_REGION, us-east-1;
 * sts_endpoint NULL: AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, else https://sts.REGION.amazonaws.com
 * (regional, as the SDKs default to today). The answer's source is "assume-role" and its
 * principal the assumed role's ARN; wrap the provider in s3l_creds_cache_new so that it refreshes
 * 5 minutes before Expiration. The provider takes ownership of source (also on failure).
 * Returns 0, S3L_EINVALID_ARGUMENT (wrong version, no source, no "arn:" ARN, a negative
 * duration), S3L_ENOMEM. get: source's failure (prefixed); S3L_EPERMISSION_DENIED for
 * AccessDenied (the message names the role and the caller, and says to check the trust policy's
 * principal and external id first, then the permissions policy); S3L_EAUTH_INVALID when STS
 * refuses the source's key; S3L_EAUTH_EXPIRED for an expired source token; S3L_ETHROTTLED or
 * S3L_ETRANSIENT after 3 attempts (also when STS does not answer in 10 s); S3L_EINVALID_CONFIG
 * for a ValidationError (a bad duration, a bad ARN) or a malformed answer; S3L_ENOMEM.
 */
#define S3L_CREDS_ROLE_OPTIONS_VERSION 1
struct s3l_creds_role_options {
    int version;
    const char *role_arn;
    const char *external_id;
    const char *session_name;
    int duration_seconds;
    const char *region;
    const char *sts_endpoint;
};

int s3l_creds_role_new(const struct s3l_creds_role_options *ro, struct s3l_creds_provider *source,
                       struct s3l_creds_provider **out, struct s3l_error *err);

/*
 * Who signer's keys are: STS GetCallerIdentity (AWS STS API Reference; it needs no permission),
 * signed with signer (SigV4, service "sts"). *arn is the caller's ARN (s3l_malloc'ed: the caller
 * frees it), e.g. "arn:aws:iam::123456789012:user/loader" or an assumed role's session.
 * region NULL: AWS_REGION, AWS_DEFAULT_REGION, us-east-1. Endpoint: endpoint when not NULL, else
 * AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, endpoint_fallback (an S3-compatible store's own
 * endpoint: Ceph RGW serves STS there), https://sts.REGION.amazonaws.com. Retried as
 * s3l_creds_role_new's calls (THROTTLED, TRANSIENT: 3 attempts, 10 s each). Returns 0;
 * S3L_EINVALID_ARGUMENT (no keys in signer); S3L_EAUTH_INVALID (the key refused);
 * S3L_EAUTH_EXPIRED; S3L_EPERMISSION_DENIED; S3L_ETRANSIENT (no answer: a store without STS);
 * S3L_EINVALID_CONFIG (a bad endpoint, an answer without Arn, or an error STS does not
 * classify, such as an S3-compatible store's NotImplemented); S3L_ENOMEM. Never a secret in err.
 */
int s3l_creds_caller_identity(const struct s3l_credentials *signer, const char *region,
                              const char *endpoint, const char *endpoint_fallback, char **arn,
                              struct s3l_error *err);

/*
 * A thread-safe cache over inner (owned, also on failure): get answers from the cache while the
 * credentials do not expire within 5 minutes (the SDKs' advisory refresh window), and asks
 * inner again otherwise; credentials without expiration are kept until
 * s3l_creds_cache_invalidate. A failed refresh is returned, and the old credentials are dropped
 * only when they have expired. Returns 0, S3L_ENOMEM.
 */
int s3l_creds_cache_new(struct s3l_creds_provider *inner, struct s3l_creds_provider **out,
                        struct s3l_error *err);

/*
 * Drops what the cache holds (after the store answered AUTH_EXPIRED), so that the next get asks
 * the inner provider. p must come from s3l_creds_cache_new; other providers are left alone.
 */
void s3l_creds_cache_invalidate(struct s3l_creds_provider *p);

/*
 * The profile's region (the `region` key of the profile in the config file, or of the same
 * profile in the credentials file, which wins, as botocore's merged profile). *region is
 * s3l_malloc'ed (caller frees), or NULL when the profile sets none. Returns 0,
 * S3L_EINVALID_CONFIG (a malformed file), S3L_ENOMEM.
 */
int s3l_creds_profile_region(const struct s3l_creds_options *opts, char **region,
                             struct s3l_error *err);

/*
 * The profile's endpoint for service ("s3", "sts"): the `endpoint_url` under `service` in the
 * `[services NAME]` section the profile's `services = NAME` names (the config file), else the
 * profile's own `endpoint_url` ("Service-specific endpoints" in the AWS SDKs and Tools
 * Reference Guide; botocore 1.29 knows neither). The environment variables
 * (AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL) come before these; this function does not read
 * them. *url is s3l_malloc'ed (caller frees), or NULL when none is set. Returns 0,
 * S3L_EINVALID_CONFIG (a malformed file), S3L_ENOMEM.
 */
int s3l_creds_profile_endpoint(const struct s3l_creds_options *opts, const char *service,
                               char **url, struct s3l_error *err);

#endif
