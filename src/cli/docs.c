/*
 * Config documents for the commands that run or reach a destination from them (`run`, and
 * `check` and `write` with --config): reading the files with their secrets, picking the Pipeline
 * and its Destination, and the S3 connection of a Destination under the runner's credentials rule
 * (docs/config.md, "Credentials"; issue 12 item 4): a Pipeline gives the destination no ambient
 * credentials, region or endpoint unless spec.runner.inherit is true, so a pipeline file means
 * the same on every machine. No secret value is ever printed.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void print_problems(struct cli *c, const struct s3l_config *cfg)
{
    for (size_t i = 0; i < s3l_config_problem_count(cfg); i++) {
        const struct s3l_config_problem *p = s3l_config_problem(cfg, i);
        struct s3l_error e = {0};
        s3l_error_set(&e, p->code, "%s", p->message);
        cli_fail(c, p->code, &e, S3L_SIDE_CONFIG);
    }
}

/* The only document of kind k, the one named name, or NULL (*many: more than one, unnamed). */
static const struct s3l_config_doc *pick(const struct s3l_config *cfg, enum s3l_config_kind k,
                                         const char *name, bool *many)
{
    const struct s3l_config_doc *found = NULL;
    *many = false;
    for (size_t i = 0; i < s3l_config_count(cfg); i++) {
        const struct s3l_config_doc *d = s3l_config_doc(cfg, i);
        if (d->kind != k || (name && strcmp(d->name, name) != 0))
            continue;
        if (found)
            *many = true;
        else
            found = d;
    }
    return found;
}

int cli_docs_load(struct cli *c, const char *cmd, const char *const *files, size_t n,
                  const struct cli_secret_src *src, const char *pipeline, bool need_pipeline,
                  struct cli_docs *out)
{
    memset(out, 0, sizeof(*out));
    if (s3l_config_new(&out->cfg) != 0)
        return cli_fail(c, S3L_ENOMEM, NULL, S3L_SIDE_CONFIG);
    struct s3l_config_secrets sec = {cli_secret_lookup, (void *)src};
    struct s3l_config_options opts = {S3L_CONFIG_OPTIONS_VERSION, &sec};
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        struct s3l_error err = {0};
        int rc = s3l_config_add_file(out->cfg, files[i], &opts, &err);
        if (rc && !first)
            first = rc;
    }
    if (first) {
        print_problems(c, out->cfg);
        cli_docs_free(out);
        return cli_exit_for(first, S3L_SIDE_CONFIG);
    }
    bool many = false;
    out->pipeline = pick(out->cfg, S3L_CONFIG_PIPELINE, pipeline, &many);
    if (many || (pipeline && !out->pipeline) || (need_pipeline && !out->pipeline)) {
        cli_docs_free(out);
        if (many)
            return cli_usage(c, cmd, "the files hold several Pipeline documents: name one "
                                     "with --pipeline NAME");
        if (pipeline)
            return cli_usage(c, cmd, "no Pipeline document is named %s", pipeline);
        return cli_usage(c, cmd, "the files hold no Pipeline document (kind: Pipeline)");
    }
    const char *dname = out->pipeline ? out->pipeline->pipeline->destination : NULL;
    out->destination = pick(out->cfg, S3L_CONFIG_DESTINATION, dname, &many);
    if (!out->destination || many) {
        cli_docs_free(out);
        if (dname)
            return cli_usage(c, cmd,
                             "spec.destination.name: no Destination document is named %s in "
                             "the files given (add its file with another --config)",
                             dname);
        return cli_usage(c, cmd, many ? "the files hold several Destination documents and no "
                                        "Pipeline that names one"
                                      : "the files hold no Destination document");
    }
    return 0;
}

void cli_docs_free(struct cli_docs *d)
{
    s3l_config_free(d->cfg);
    memset(d, 0, sizeof(*d));
}

/* The refusal of a destination without credentials under a runner that inherits none. */
static int no_credentials(struct cli *c, const struct cli_docs *d)
{
    struct s3l_error e = {0};
    s3l_error_set(&e, S3L_EAUTH_INVALID,
                  "destination %s: no credentials for %s: a pipeline gives its destination no "
                  "ambient credentials (AWS_* variables, profiles, instance role); set "
                  "spec.config.accessKeyId and spec.config.secretAccessKey in the Destination "
                  "(each may be { secret: NAME }), or spec.config.aws.role (assumed with the "
                  "runner's own credentials), or spec.runner.inherit: true in pipeline %s "
                  "to use the environment's",
                  d->destination->name, d->destination->destination->url.value,
                  d->pipeline ? d->pipeline->name : "");
    return cli_fail(c, e.code, &e, S3L_SIDE_CONFIG);
}

int cli_doc_s3_options(struct cli *c, const char *cmd, const struct cli_docs *d, bool inherit,
                       struct cli_doc_s3 *s)
{
    (void)cmd;
    const struct s3l_config_destination *dc = d->destination->destination;
    memset(s, 0, sizeof(*s));
    s->inherit = inherit;
    s->cfg.version = S3L_S3_CONFIG_VERSION;
    s->cfg.region = dc->region.value;
    s->cfg.endpoint = dc->endpoint.value;
    s->cfg.path_style = dc->path_style;
    /* The environment's region and endpoint only when the runner inherits it (issue 12 item 4;
     * the library reads no environment itself). */
    if (inherit)
        cli_s3_env_where(&s->cfg.region, &s->cfg.endpoint);
    s->opts.version = S3L_S3_STORE_OPTIONS_VERSION;
    s->opts.client = &s->cfg;
    const char *url = dc->url.value ? dc->url.value : "";
    if (strncmp(url, "s3://", 5) != 0)
        return 0; /* file://: no connection */
    int tex = cli_s3_trace_open(c); /* $S3LAND_TRACE, for every run whatever inherit says */
    if (tex)
        return tex;
    cli_s3_trace(&s->cfg);
    const char *role = dc->aws.role.value;
    if (dc->access_key_id.value && dc->secret_access_key.value) {
        s->cfg.access_key = dc->access_key_id.value;
        s->cfg.secret_key = dc->secret_access_key.value;
        s->cfg.session_token = dc->session_token.value;
        /* Keys given explicitly win over a role (issue 11 item 1): said, never silent. */
        snprintf(c->creds, sizeof(c->creds),
                 "keys from the document (spec.config.accessKeyId)%s%.200s%s",
                 role ? "; aws.role " : "", role ? role : "",
                 role ? " ignored: explicit keys win" : "");
        return 0;
    }
    if (dc->access_key_id.value || dc->secret_access_key.value)
        return cli_usage(c, cmd, "destination %s: spec.config.%s is set without spec.config.%s",
                         d->destination->name,
                         dc->access_key_id.value ? "accessKeyId" : "secretAccessKey",
                         dc->access_key_id.value ? "secretAccessKey" : "accessKeyId");
    if (role) {
        /* Assumed with the runner's own identity even when inherit is false: the destination
         * gets the role's credentials only (issue 12 item 4). */
        int ex = cli_access_doc_role(c, &dc->aws, dc->region.value, &s->cfg.credentials);
        if (ex)
            return ex;
        snprintf(c->creds, sizeof(c->creds),
                 "assume-role %.200s (spec.config.aws.role), assumed with the runner's own "
                 "credentials (the AWS default chain)",
                 role);
        return 0;
    }
    if (inherit)
        snprintf(c->creds, sizeof(c->creds), "the AWS default chain (%s)",
                 d->pipeline ? "spec.runner.inherit: true" : "a Destination alone, as write");
    return inherit ? 0 : no_credentials(c, d);
}
