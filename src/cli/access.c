/*
 * Access options of every command that touches a store: which profile, and a role on top.
 *   --profile NAME, --role-arn ARN, --external-id ID, --role-session-name NAME,
 *   --role-duration DURATION (900 s .. 12 h, STS's AssumeRole range)
 * There are no flags for keys: a command line is visible to every user of the machine (ps).
 *
 * The credentials: the AWS SDKs' default chain for the profile (include/s3l/creds.h; a profile
 * named here turns the environment's keys off, as botocore's Session(profile=...)), cached, and
 * with --role-arn an AssumeRole on top of it, cached again, so that the role's credentials are
 * refreshed 5 minutes before they expire. Nothing given: the S3 client builds the default chain
 * itself. Region and endpoint: the flags, then AWS_REGION / AWS_DEFAULT_REGION and
 * AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, then the profile's `region` and its s3 endpoint (the
 * services section's s3 endpoint_url, then endpoint_url), as the AWS SDKs order them.
 *
 * The providers live until the process ends (the stores that borrow them are freed first); they
 * are freed at exit, wiping what they hold.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static struct s3l_creds_provider *held[4];
static char *held_str[16];
static bool at_exit;

static void free_held(void)
{
    for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
        s3l_creds_provider_free(held[i]), held[i] = NULL;
    for (size_t i = 0; i < sizeof(held_str) / sizeof(held_str[0]); i++)
        s3l_free(held_str[i]), held_str[i] = NULL;
}

static void keep(struct s3l_creds_provider *p, char *s)
{
    if (!at_exit) {
        atexit(free_held);
        at_exit = true;
    }
    for (size_t i = 0; p && i < sizeof(held) / sizeof(held[0]); i++)
        if (!held[i]) {
            held[i] = p;
            p = NULL;
        }
    s3l_creds_provider_free(p); /* more than 4 opens in one process: not ours */
    for (size_t i = 0; s && i < sizeof(held_str) / sizeof(held_str[0]); i++)
        if (!held_str[i]) {
            held_str[i] = s;
            s = NULL;
        }
    s3l_free(s);
}

int cli_access_option(struct cli *c, const char *cmd, int opt, struct cli_access *a)
{
    int64_t ns = 0;
    switch (opt) {
    case CLI_O_PROFILE:
        a->profile = optarg;
        return 0;
    case CLI_O_ROLE_ARN:
        if (strncmp(optarg, "arn:", 4) != 0)
            return cli_usage(c, cmd, "--role-arn %s: expected an ARN (arn:aws:iam::ACCOUNT:role/NAME)",
                             optarg);
        a->role_arn = optarg;
        return 0;
    case CLI_O_EXTERNAL_ID:
        a->external_id = optarg;
        return 0;
    case CLI_O_ROLE_SESSION_NAME:
        a->session_name = optarg;
        return 0;
    case CLI_O_ROLE_DURATION:
        if (!cli_parse_duration(optarg, &ns) || ns % 1000000000 != 0 ||
            ns < 900 * (int64_t)1000000000 || ns > 43200 * (int64_t)1000000000)
            return cli_usage(c, cmd, "--role-duration %s: expected 900s to 12h (STS's range)",
                             optarg);
        a->duration_s = (int)(ns / 1000000000);
        return 0;
    default:
        return -1;
    }
}

/* The default chain for co (NULL: no profile named), cached; then, when ro is not NULL, the role
 * it names assumed with that chain's credentials, cached too. Held until exit. 0 or the exit
 * code after reporting. */
static int provider(struct cli *c, const struct s3l_creds_options *co,
                    const struct s3l_creds_role_options *ro, struct s3l_creds_provider **out)
{
    struct s3l_error err = {0};
    struct s3l_creds_provider *chain = NULL, *p = NULL, *role = NULL;
    int rc = s3l_creds_default_chain_new(co, &chain, &err);
    if (rc == 0)
        rc = s3l_creds_cache_new(chain, &p, &err);
    if (rc == 0 && ro) {
        rc = s3l_creds_role_new(ro, p, &role, &err);
        p = NULL;
        if (rc == 0)
            rc = s3l_creds_cache_new(role, &p, &err);
    }
    if (rc != 0)
        return cli_fail(c, rc, &err, S3L_SIDE_DESTINATION);
    keep(p, NULL);
    *out = p;
    return 0;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int cli_access_resolve(struct cli *c, struct cli_access *a, const char **region,
                       const char **endpoint)
{
    struct s3l_error err = {0};
    struct s3l_creds_options co = {S3L_CREDS_OPTIONS_VERSION, a->profile, NULL, NULL};
    if ((a->external_id || a->session_name || a->duration_s) && !a->role_arn)
        return cli_usage(c, "access",
                         "--external-id, --role-session-name and --role-duration go with "
                         "--role-arn");
    int ex = cli_s3_trace_open(c);
    if (ex)
        return ex;
    cli_s3_env_where(region, endpoint); /* the flags, then the environment, then the profile */
    int rc = 0;
    char *v = NULL;
    if (!*region &&
        (rc = s3l_creds_profile_region(&co, &v, &err)) == 0 && v) {
        *region = v;
        keep(NULL, v);
    }
    v = NULL;
    if (rc == 0 && !*endpoint &&
        (rc = s3l_creds_profile_endpoint(&co, "s3", &v, &err)) == 0 && v) {
        *endpoint = v;
        keep(NULL, v);
    }
    /* --role-arn's STS endpoint: AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, then the profile's
     * (its services section's sts endpoint_url, then its endpoint_url) */
    char *sts = NULL;
    if (rc == 0 && a->role_arn && !env("AWS_ENDPOINT_URL_STS") && !env("AWS_ENDPOINT_URL") &&
        (rc = s3l_creds_profile_endpoint(&co, "sts", &sts, &err)) == 0 && sts)
        keep(NULL, sts);
    if (rc != 0)
        return cli_fail(c, rc, &err, S3L_SIDE_CONFIG);
    if (!a->profile && !a->role_arn)
        return 0; /* the S3 client's own default chain */
    struct s3l_creds_role_options ro = {S3L_CREDS_ROLE_OPTIONS_VERSION, a->role_arn,
                                        a->external_id, a->session_name, a->duration_s,
                                        *region, sts};
    return provider(c, &co, a->role_arn ? &ro : NULL, &a->creds);
}

int cli_access_doc_role(struct cli *c, const struct s3l_config_aws *aws, const char *region,
                        struct s3l_creds_provider **out)
{
    struct s3l_creds_role_options ro = {S3L_CREDS_ROLE_OPTIONS_VERSION,
                                        aws->role.value,
                                        aws->external_id.value,
                                        aws->session_name.value,
                                        (int)aws->duration_seconds,
                                        region,
                                        aws->sts_endpoint.value};
    /* The runner's identity: the default chain with no profile named (AWS_PROFILE and the
     * environment's keys apply, as for any AWS SDK), whatever spec.runner.inherit says. */
    return provider(c, NULL, &ro, out);
}

const char cli_access_help[] =
    "Access (s3:// URLs; the credentials come from the AWS SDKs' default chain: environment,\n"
    "role profile, web identity, SSO (refused), credentials file, credential_process, config\n"
    "file, container, instance metadata; there are no flags for keys):\n"
    "  --profile NAME         the profile of ~/.aws/config and ~/.aws/credentials (default:\n"
    "                         $AWS_DEFAULT_PROFILE, then $AWS_PROFILE, else default); given here,\n"
    "                         the environment's keys are not used; its region and endpoint_url\n"
    "                         apply after the flags and the AWS_* variables\n"
    "  --role-arn ARN         assume this role (STS AssumeRole) with those credentials\n"
    "  --external-id ID       the external id the role's trust policy asks for\n"
    "  --role-session-name N  the role session's name (default: botocore-session-SECONDS)\n"
    "  --role-duration D      how long the role's credentials last, 900s to 12h (default: 1h);\n"
    "                         they are renewed 5 minutes before they expire\n"
    "  (STS endpoint: $AWS_ENDPOINT_URL_STS, then $AWS_ENDPOINT_URL, then the profile's\n"
    "  services section (sts = endpoint_url = URL), then its endpoint_url, else\n"
    "  sts.REGION.amazonaws.com)\n"
    "\n";
