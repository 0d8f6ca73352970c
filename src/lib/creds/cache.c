/*
 * creds: a cache in front of a provider (aws-c-auth's cached provider). Credentials are served
 * from memory until 5 minutes before their Expiration (issue 11's rule; botocore refreshes
 * earlier, 15 minutes ahead when it can and 10 minutes ahead at the latest). One mutex
 * covers the refresh, so that parallel part uploads ask the source once, not once each.
 * A source whose fresh answer is already expired fails (AUTH_EXPIRED), as botocore's
 * RefreshableCredentials raises "the refreshed credentials are still expired"; one whose answer
 * expires within the 5 minutes is asked again at most every 30 s (at most every half of what is
 * left), not for every request (botocore runs a credential_process for each: a break-it run
 * counted 14 runs for one small write).
 */
#include "creds/creds.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "os/os.h"
#include "util/util.h"

#define REFRESH_AHEAD_NS (300 * (int64_t)1000000000)
#define REASK_NS (30 * (int64_t)1000000000)

struct cache {
    struct s3l_creds_provider *inner;
    pthread_mutex_t mu;
    struct s3l_credentials held;
    bool have;
    int64_t reask_ns; /* held expires within REFRESH_AHEAD_NS: not asked again before this */
};

static bool fresh(const struct cache *c, int64_t now)
{
    const struct s3l_credentials *h = &c->held;
    return h->expiration_ns == 0 || now < h->expiration_ns - REFRESH_AHEAD_NS ||
           (now < c->reask_ns && now < h->expiration_ns);
}

/* got, just asked for at now: AUTH_EXPIRED when it is expired already (it is cleaned up);
 * else the time before which a short-lived one is not asked for again. */
static int check_fresh(struct cache *c, struct s3l_credentials *got, int64_t now,
                       struct s3l_error *err)
{
    c->reask_ns = 0;
    if (got->expiration_ns == 0 || now < got->expiration_ns - REFRESH_AHEAD_NS)
        return 0;
    if (now >= got->expiration_ns) {
        char src[sizeof(got->source)];
        snprintf(src, sizeof(src), "%s", got->source[0] ? got->source : "the source");
        int64_t ago = (now - got->expiration_ns) / 1000000000;
        s3l_credentials_cleanup(got);
        return s3l_error_set(err, S3L_EAUTH_EXPIRED,
                             "%s: credentials were refreshed, but the refreshed credentials are "
                             "still expired (their Expiration is %lld s ago)",
                             src, (long long)ago);
    }
    c->reask_ns = now + S3L_MIN(REASK_NS, (got->expiration_ns - now) / 2);
    return 0;
}

static int get(void *impl, struct s3l_credentials *out, struct s3l_error *err)
{
    struct cache *c = impl;
    pthread_mutex_lock(&c->mu);
    int64_t now = s3l__os_now_ns();
    int rc = 0;
    if (!c->have || !fresh(c, now)) {
        struct s3l_credentials got = {0};
        rc = s3l_creds_provider_get(c->inner, &got, err);
        if (rc == 0)
            rc = check_fresh(c, &got, now, err);
        if (rc == 0) {
            s3l_credentials_cleanup(&c->held);
            c->held = got; /* moved: got's strings now belong to the cache */
            c->have = true;
        } else if (c->have && c->held.expiration_ns != 0 && now >= c->held.expiration_ns) {
            s3l_credentials_cleanup(&c->held); /* expired and not renewed: never hand it out */
            c->have = false;
        }
    }
    if (rc == 0 && s3l_credentials_copy(out, &c->held) != 0)
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory for credentials");
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static void destroy(void *impl)
{
    struct cache *c = impl;
    s3l_creds_provider_free(c->inner);
    s3l_credentials_cleanup(&c->held);
    pthread_mutex_destroy(&c->mu);
    s3l_free(c);
}

static const struct s3l_creds_provider_ops ops = {S3L_CREDS_PROVIDER_OPS_VERSION, "cache", get,
                                                  destroy};

int s3l_creds_cache_new(struct s3l_creds_provider *inner, struct s3l_creds_provider **out,
                        struct s3l_error *err)
{
    *out = NULL;
    struct cache *c = s3l_calloc(1, sizeof(*c));
    if (!c) {
        s3l_creds_provider_free(inner);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for a credentials cache");
    }
    c->inner = inner;
    pthread_mutex_init(&c->mu, NULL);
    int rc = s3l_creds_provider_new(&ops, c, out, err);
    if (rc != 0)
        destroy(c);
    return rc;
}

void s3l_creds_cache_invalidate(struct s3l_creds_provider *p)
{
    if (!p || p->ops != &ops)
        return;
    struct cache *c = p->impl;
    pthread_mutex_lock(&c->mu);
    s3l_credentials_cleanup(&c->held);
    c->have = false;
    pthread_mutex_unlock(&c->mu);
}
