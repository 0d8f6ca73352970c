/*
 * creds: which profile, which files, and one profile's keys across both files. The rules are
 * botocore's (configprovider.py, configloader.py, Session.full_config):
 * - the profile is the one given in code, else AWS_DEFAULT_PROFILE, else AWS_PROFILE, else
 *   "default" (botocore lists AWS_DEFAULT_PROFILE first and takes the first one set);
 * - the files are AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE, else ~/.aws/credentials and
 *   ~/.aws/config, "~" expanded from HOME;
 * - in the config file a profile is `[profile NAME]` (the word and the name split like shell
 *   words), and the default profile may also be `[default]`; in the credentials file it is
 *   `[NAME]`;
 * - the merged profile takes the credentials file's value over the config file's.
 */
#include "creds/creds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "os/os.h"
#include "util/util.h"

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* path with a leading "~" or "~/" replaced by HOME (os.path.expanduser). */
static char *expand(const char *path)
{
    const char *home = env("HOME");
    if (path[0] != '~' || (path[1] && path[1] != '/') || !home)
        return s3l_strdup(path);
    size_t h = strlen(home), n = strlen(path + 1);
    char *out = s3l_malloc(h + n + 1);
    if (out) {
        memcpy(out, home, h);
        memcpy(out + h, path + 1, n + 1);
    }
    return out;
}

int s3l__creds_opts_resolve(const struct s3l_creds_options *in, struct s3l__creds_opts *out,
                            struct s3l_error *err)
{
    memset(out, 0, sizeof(*out));
    if (in && in->version != S3L_CREDS_OPTIONS_VERSION)
        return s3l_error_set(err, S3L_EINVALID_ARGUMENT,
                             "credentials options: version %d, expected %d", in->version,
                             S3L_CREDS_OPTIONS_VERSION);
    const char *profile = in && in->profile && *in->profile ? in->profile : NULL;
    out->profile_explicit = profile != NULL;
    if (!profile)
        profile = env("AWS_DEFAULT_PROFILE");
    if (!profile)
        profile = env("AWS_PROFILE");
    out->profile_named = profile != NULL;
    const char *cf = in && in->credentials_file ? in->credentials_file : NULL;
    const char *gf = in && in->config_file ? in->config_file : NULL;
    if (!cf)
        cf = env("AWS_SHARED_CREDENTIALS_FILE");
    if (!gf)
        gf = env("AWS_CONFIG_FILE");
    out->profile = s3l_strdup(profile ? profile : "default");
    out->credentials_file = expand(cf ? cf : "~/.aws/credentials");
    out->config_file = expand(gf ? gf : "~/.aws/config");
    if (!out->profile || !out->credentials_file || !out->config_file) {
        s3l__creds_opts_free(out);
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for credentials options");
    }
    return 0;
}

void s3l__creds_opts_free(struct s3l__creds_opts *o)
{
    s3l_free(o->profile), s3l_free(o->credentials_file), s3l_free(o->config_file);
    memset(o, 0, sizeof(*o));
}

static int load_one(const char *path, struct s3l__ini *ini, bool *found, struct s3l_error *err)
{
    struct s3l_error e = {0};
    struct s3l__os_stat st;
    if (s3l__os_stat(path, &st, &e) == 0 && !st.is_reg) {
        *found = false; /* a directory is no file (botocore: os.path.isfile, else skipped) */
        return 0;
    }
    struct s3l_buf b;
    s3l_buf_init(&b, S3L__CREDS_MAX_FILE);
    int rc = s3l__os_read_file(path, S3L__CREDS_MAX_FILE, &b, &e);
    *found = rc == 0;
    if (rc == S3L_ENOT_FOUND) {
        rc = 0; /* no file is no profile, not an error (botocore: ConfigNotFound, skipped) */
    } else if (rc != 0) {
        s3l_error_set(err, rc, "%s", e.message);
    } else {
        rc = s3l__ini_parse((const char *)b.ptr, b.len, path, ini, err);
    }
    if (b.ptr)
        s3l_buf_reset(&b), memset(b.ptr, 0, b.cap); /* the file may hold secrets */
    s3l_buf_free(&b);
    return rc;
}

/* Whether a config section header names profile `name`: "profile" then the name, as shell
 * words (botocore's build_profile_map: shlex.split of the header, two words). */
static bool names_profile(const char *section, const char *name)
{
    if (strncmp(section, "profile", 7) != 0)
        return false;
    char **w = NULL;
    if (s3l__creds_split_words(section, &w, NULL) != 0)
        return false;
    bool yes = w[0] && strcmp(w[0], "profile") == 0 && w[1] && !w[2] && strcmp(w[1], name) == 0;
    s3l_free(w);
    return yes;
}

/* The section of profile name in the config file: *out is s3l_malloc'ed, or NULL when there is
 * none. 0 or S3L_ENOMEM. */
static int config_section(const struct s3l__ini *ini, const char *name, char **out)
{
    const char *sec = NULL;
    for (size_t i = 0; i < ini->n && !sec; i++)
        if (!ini->e[i].key && names_profile(ini->e[i].section, name))
            sec = ini->e[i].section;
    if (!sec && strcmp(name, "default") == 0 && s3l__ini_has(ini, "default"))
        sec = "default";
    *out = sec ? s3l_strdup(sec) : NULL;
    return sec && !*out ? S3L_ENOMEM : 0;
}

int s3l__profile_load(const struct s3l__creds_opts *opts, struct s3l__profile *p,
                      struct s3l_error *err)
{
    memset(p, 0, sizeof(*p));
    p->opts = opts;
    int rc = load_one(opts->credentials_file, &p->creds, &p->creds_found, err);
    if (rc == 0)
        rc = load_one(opts->config_file, &p->config, &p->config_found, err);
    if (rc == 0 && config_section(&p->config, opts->profile, &p->config_section) != 0)
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
    if (rc != 0)
        s3l__profile_free(p);
    return rc;
}

const char *s3l__profile_creds(const struct s3l__profile *p, const char *key)
{
    return s3l__ini_get(&p->creds, p->opts->profile, key);
}

const char *s3l__profile_config(const struct s3l__profile *p, const char *key)
{
    return p->config_section ? s3l__ini_get(&p->config, p->config_section, key) : NULL;
}

const char *s3l__profile_get(const struct s3l__profile *p, const char *key)
{
    const char *v = s3l__profile_creds(p, key);
    return v ? v : s3l__profile_config(p, key);
}

bool s3l__profile_exists(const struct s3l__profile *p)
{
    return s3l__ini_has(&p->creds, p->opts->profile) || p->config_section != NULL;
}

const char *s3l__profile_get_named(const struct s3l__profile *p, const char *name,
                                   const char *key)
{
    const char *v = s3l__ini_get(&p->creds, name, key);
    if (v)
        return v;
    char *sec = NULL;
    config_section(&p->config, name, &sec); /* out of memory reads as absent */
    v = sec ? s3l__ini_get(&p->config, sec, key) : NULL;
    s3l_free(sec);
    return v;
}

bool s3l__profile_exists_named(const struct s3l__profile *p, const char *name)
{
    char *sec = NULL;
    config_section(&p->config, name, &sec);
    bool yes = sec != NULL || s3l__ini_has(&p->creds, name);
    s3l_free(sec);
    return yes;
}

void s3l__profile_free(struct s3l__profile *p)
{
    s3l__ini_free(&p->creds);
    s3l__ini_free(&p->config);
    s3l_free(p->config_section);
    memset(p, 0, sizeof(*p));
}

int s3l_creds_profile_region(const struct s3l_creds_options *opts, char **region,
                             struct s3l_error *err)
{
    *region = NULL;
    struct s3l__creds_opts o;
    struct s3l__profile p;
    int rc = s3l__creds_opts_resolve(opts, &o, err);
    if (rc != 0)
        return rc;
    rc = s3l__profile_load(&o, &p, err);
    if (rc == 0) {
        const char *r = s3l__profile_get(&p, "region");
        if (r && *r && !(*region = s3l_strdup(r)))
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
        s3l__profile_free(&p);
    }
    s3l__creds_opts_free(&o);
    return rc;
}

/* The value of sub-key `key` in an indented block ("\nendpoint_url = X\nother = Y", the
 * services section's nested settings as configparser joins them), copied into out. */
static bool sub_value(const char *block, const char *key, char *out, size_t max)
{
    size_t kn = strlen(key);
    for (const char *l = block; l && *l;) {
        while (*l == '\n' || *l == ' ' || *l == '\t')
            l++;
        size_t n = strcspn(l, "\n");
        const char *eq = memchr(l, '=', n);
        if (eq) {
            const char *k = l, *ke = eq;
            while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
                ke--;
            const char *v = eq + 1, *ve = l + n;
            while (v < ve && (*v == ' ' || *v == '\t'))
                v++;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
                ve--;
            if ((size_t)(ke - k) == kn && strncasecmp(k, key, kn) == 0 && ve > v &&
                (size_t)(ve - v) < max) {
                memcpy(out, v, (size_t)(ve - v));
                out[ve - v] = '\0';
                return true;
            }
        }
        l += n;
    }
    return false;
}

bool s3l__profile_endpoint(const struct s3l__profile *p, const char *service, char *out,
                           size_t max)
{
    out[0] = '\0';
    const char *svc = s3l__profile_get(p, "services");
    char section[300];
    snprintf(section, sizeof(section), "services %.200s", svc ? svc : "");
    const char *block = svc ? s3l__ini_get(&p->config, section, service) : NULL;
    if (!(block && sub_value(block, "endpoint_url", out, max))) {
        const char *g = s3l__profile_get(p, "endpoint_url");
        if (g && strlen(g) < max)
            snprintf(out, max, "%s", g);
    }
    return out[0] != '\0';
}

int s3l_creds_profile_endpoint(const struct s3l_creds_options *opts, const char *service,
                               char **url, struct s3l_error *err)
{
    *url = NULL;
    struct s3l__creds_opts o;
    struct s3l__profile p;
    int rc = s3l__creds_opts_resolve(opts, &o, err);
    if (rc != 0)
        return rc;
    rc = s3l__profile_load(&o, &p, err);
    if (rc == 0) {
        char found[1024];
        if (s3l__profile_endpoint(&p, service, found, sizeof(found)) &&
            !(*url = s3l_strdup(found)))
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory");
        s3l__profile_free(&p);
    }
    s3l__creds_opts_free(&o);
    return rc;
}

void s3l__creds_opts_destroy(void *impl)
{
    if (impl) {
        s3l__creds_opts_free(impl);
        s3l_free(impl);
    }
}

int s3l__creds_profile_provider_new(const struct s3l_creds_options *opts,
                                    const struct s3l_creds_provider_ops *ops,
                                    struct s3l_creds_provider **out, struct s3l_error *err)
{
    *out = NULL;
    struct s3l__creds_opts *o = s3l_calloc(1, sizeof(*o));
    if (!o)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for a credentials provider");
    int rc = s3l__creds_opts_resolve(opts, o, err);
    if (rc == 0)
        rc = s3l_creds_provider_new(ops, o, out, err);
    if (rc != 0)
        s3l__creds_opts_destroy(o);
    return rc;
}

int s3l__profile_keys(const struct s3l__profile *p, s3l__profile_lookup get, const char *section,
                      const char *path, const char *method, struct s3l_credentials *out,
                      struct s3l_error *err)
{
    const char *ak = get(p, "aws_access_key_id");
    const char *sk = get(p, "aws_secret_access_key");
    const char *tok = get(p, "aws_security_token");
    if (!tok)
        tok = get(p, "aws_session_token");
    if (!ak)
        return s3l_error_set(err, S3L_ENOT_FOUND, "[%.100s] in %s has no aws_access_key_id",
                             section, path);
    if (!sk)
        return s3l_error_set(err, S3L_EAUTH_INVALID,
                             "[%.100s] in %s has aws_access_key_id but no aws_secret_access_key",
                             section, path);
    if (s3l__creds_fill(out, ak, sk, tok, 0, method) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory for credentials");
    return 0;
}
