/*
 * creds: a chain of providers (aws-c-auth's provider chain, botocore's CredentialResolver).
 * The first answer wins. A source with nothing (S3L_ENOT_FOUND) passes to the next, and its
 * reason is kept for the message when nobody answers; a source that is configured but fails
 * stops the chain, because going on would sign with an identity the user did not choose.
 */
#include "creds/creds.h"

#include <stdio.h>
#include <string.h>

#include "util/util.h"

struct chain {
    struct s3l_creds_provider **p;
    int n;
};

static const char *name_of(const struct s3l_creds_provider *p)
{
    return p->ops->name ? p->ops->name : "provider";
}

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    struct chain *c = impl;
    char why[S3L_ERROR_MESSAGE_MAX];
    size_t at = 0;
    why[0] = '\0';
    for (int i = 0; i < c->n; i++) {
        struct s3l_error e = {0};
        int rc = s3l_creds_provider_get(c->p[i], out, &e);
        if (rc == 0)
            return 0;
        if (rc != S3L_ENOT_FOUND) {
            if (err && !err->code) { /* keep the detail (STS's HTTP status, code, request id) */
                *err = e;
                err->code = 0;
                err->message[0] = '\0';
            }
            s3l_error_set(err, rc, "%s: %s", name_of(c->p[i]), e.message);
            return rc;
        }
        if (!e.message[0])
            continue; /* a step that checks, not a source: nothing to report */
        int w = snprintf(why + at, sizeof(why) - at, "%s%s: %s", at ? "; " : "",
                         name_of(c->p[i]), e.message);
        if (w > 0)
            at = S3L_MIN(at + (size_t)w, sizeof(why) - 1);
    }
    return s3l_error_set(err, S3L_EAUTH_INVALID, "no credentials found: %s", why);
}

static void destroy(void *impl)
{
    struct chain *c = impl;
    for (int i = 0; i < c->n; i++)
        s3l_creds_provider_free(c->p[i]);
    s3l_free(c->p);
    s3l_free(c);
}

static const struct s3l_creds_provider_ops ops = {S3L_CREDS_PROVIDER_OPS_VERSION, "chain", get,
                                                  destroy};

int s3l_creds_chain_new(struct s3l_creds_provider **providers, int n,
                        struct s3l_creds_provider **out, struct s3l_error *err)
{
    *out = NULL;
    struct chain *c = n > 0 ? s3l_calloc(1, sizeof(*c)) : NULL;
    if (c)
        c->p = s3l_calloc((size_t)n, sizeof(*c->p));
    if (!c || !c->p) {
        for (int i = 0; i < n; i++)
            s3l_creds_provider_free(providers[i]);
        if (c)
            s3l_free(c);
        return n > 0 ? s3l_error_set(err, S3L_ENOMEM, "out of memory for a credentials chain")
                     : s3l_error_set(err, S3L_EINVALID_ARGUMENT, "a chain of no providers");
    }
    memcpy(c->p, providers, (size_t)n * sizeof(*c->p));
    c->n = n;
    int rc = s3l_creds_provider_new(&ops, c, out, err);
    if (rc != 0)
        destroy(c);
    return rc;
}
