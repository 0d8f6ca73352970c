/*
 * creds_source: resolves credentials through s3land's default chain under the current HOME and
 * environment and prints which source gave them, for the botocore comparison
 * (tests/unit/test_creds_botocore.py) and for people debugging a setup. It never prints a
 * secret: the access key id is shown as its first 4 and last 4 characters (issue 11's
 * "principal"), the secret and token only as whether they are there. Usage:
 *   creds_source [--profile NAME] [--twice]
 * Prints one line:
 *   method=SOURCE key=AKIA...WXYZ token=yes|no expires=yes|no region=REGION|-
 * or, when resolution fails, exit status 1 and:
 *   error=CODE_NAME message=MESSAGE
 * --twice asks a cache over the chain twice and prints the line for the second answer.
 */
#include <stdio.h>
#include <string.h>

#include "s3l/alloc.h"
#include "s3l/creds.h"

static void abbreviate(const char *id, char *out, size_t max)
{
    size_t n = strlen(id);
    if (n <= 8)
        snprintf(out, max, "%s", id);
    else
        snprintf(out, max, "%.4s...%s", id, id + n - 4);
}

int main(int argc, char **argv)
{
    struct s3l_creds_options o = {S3L_CREDS_OPTIONS_VERSION, NULL, NULL, NULL};
    int twice = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
            o.profile = argv[++i];
        else if (strcmp(argv[i], "--twice") == 0)
            twice = 1;
        else {
            fprintf(stderr, "usage: creds_source [--profile NAME] [--twice]\n");
            return 2;
        }
    }
    struct s3l_error err = {0};
    struct s3l_creds_provider *chain = NULL, *p = NULL;
    int rc = s3l_creds_default_chain_new(&o, &chain, &err);
    if (rc == 0)
        rc = s3l_creds_cache_new(chain, &p, &err);
    struct s3l_credentials c = {0};
    for (int round = 0; rc == 0 && round <= twice; round++)
        rc = s3l_creds_provider_get(p, &c, &err);
    if (rc != 0) {
        printf("error=%s message=%s\n", s3l_error_name(rc), err.message);
        s3l_creds_provider_free(p);
        return 1;
    }
    char key[32], *region = NULL;
    abbreviate(c.access_key_id, key, sizeof(key));
    struct s3l_error rerr = {0};
    s3l_creds_profile_region(&o, &region, &rerr);
    printf("method=%s key=%s token=%s expires=%s region=%s\n", c.source, key,
           c.session_token ? "yes" : "no", c.expiration_ns ? "yes" : "no",
           region ? region : "-");
    s3l_free(region);
    s3l_credentials_cleanup(&c);
    s3l_creds_provider_free(p);
    return 0;
}
