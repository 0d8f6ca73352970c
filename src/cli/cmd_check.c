/*
 * `s3land check`: can it write there, and as whom? Seven steps, each printed as ok or as its
 * error class with the fix (issue 11 item 6; docs/cli.md, "check"):
 *   1 credentials  the source and the principal (STS GetCallerIdentity, else the key id's first
 *                  and last 4 characters), and whether a role was assumed;
 *   2 bucket       reachable in its region: HeadBucket, a 403 settled by ListObjectsV2 under
 *                  PREFIX/ (a prefix-only policy); file://: the directory exists (never created);
 *   3 object       put, get back (bytes compared) and delete an object under _openetl/check/;
 *   4 multipart    an upload of two parts (5 MiB and 1 MiB) staged, then aborted (file://: the
 *                  local store's staged upload, its equivalent);
 *   5 list         a listing of the destination's prefix (PREFIX/);
 *   6 conditional  put-if-absent (If-None-Match: *) on an existing key and If-Match with a stale
 *                  ETag must both be refused, If-Match with the current ETag accepted (file://:
 *                  the local store's link(2) and its compare-and-rename);
 *   7 load         a scratch table under URL/_openetl/check/<uuid>/ through the destination code
 *                  a run uses (stage, checkpoint, copy, marker), its rows read back from the
 *                  Parquet footers, the pipeline state written and read back, all removed.
 * Everything check writes is under _openetl/check/<uuid>/ and removed before it ends, so the
 * destination's listing is the same after it as before; a killed check leaves that area to gc
 * (s3l_dest_gc_check_leftovers, after an hour). The steps are the public API's own calls (the
 * store's dispatch functions, s3l_dest_*, and for S3 s3l_s3_caller_identity and HeadBucket), so
 * an embedder can make the same; only the wording of the fixes is the command's.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

static const char check_help[] =
    "Usage: s3land check [--url URL | --config FILE [--secrets-dir DIR]]\n"
    "\n"
    "Answers \"can it write there, and as whom?\" in seven steps, each printed as ok or as its\n"
    "error class with the fix:\n"
    "  1 credentials  their source, the principal (STS GetCallerIdentity, else the access key\n"
    "                 id's first 4 and last 4 characters) and the role assumed, if any\n"
    "  2 bucket       the bucket reachable in its region (HeadBucket; a 403 settled by a\n"
    "                 ListObjectsV2 under PREFIX/); file://: the directory exists\n"
    "  3 object       put, get back (bytes compared) and delete an object under _openetl/check/\n"
    "  4 multipart    a 6 MiB upload in two parts, staged, then aborted\n"
    "  5 list         a listing of the prefix (PREFIX/)\n"
    "  6 conditional  If-None-Match: * and If-Match with a stale ETag refused (412), the current\n"
    "                 ETag accepted: markers need put-if-absent, schema records compare-and-swap\n"
    "  7 load         a scratch table under URL/_openetl/check/<uuid>/ written as a run writes\n"
    "                 (stage, checkpoint, copy, marker), its rows read back from the Parquet\n"
    "                 footers, the pipeline state read back, then all of it removed\n"
    "check creates nothing it does not remove (a missing file:// directory is a failed step, not\n"
    "created). The exit status is the first failed step's (the exit codes below).\n"
    "\n"
    "  --url URL          the destination (default ./lake)\n"
    "  --config FILE      the destination of a config file's Destination document; with a\n"
    "                     Pipeline there, its Destination with the credentials `run` would use\n"
    "                     (none from the environment unless spec.runner.inherit: true)\n"
    "  --secrets-dir DIR  where { secret: NAME } values are read from\n"
    "  --endpoint URL, --region R, --path-style   s3:// connection (below)\n"
    "  --profile NAME, --role-arn ARN, --external-id ID, --role-session-name N,\n"
    "  --role-duration D     access: which credentials, a role on top (below)\n"
    "  -q, --quiet        only failed steps (on stderr)\n"
    "  --json             one {\"event\": \"check_step\", \"step\", \"name\", \"ok\", \"class\", \"fix\",\n"
    "                     \"detail\"} per step, then {\"event\": \"check\", \"ok\", \"exit\"}\n"
    "  -h, --help\n"
    "\n";

enum { O_JSON = 256 };

static const struct option check_options[] = {
    CLI_DEST_LONG_OPTIONS,
    CLI_S3_LONG_OPTIONS,
    CLI_SSE_LONG_OPTIONS,
    {"json", no_argument, NULL, O_JSON},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

#define N_STEPS 7
#define MULTIPART_PART (5u << 20)
#define MULTIPART_SIZE (MULTIPART_PART + (1u << 20))
#define LOAD_ROWS 1000

static const char *const step_names[N_STEPS + 1] = {
    "", "credentials", "bucket", "object", "multipart", "list", "conditional", "load",
};

struct check {
    struct cli *c;
    struct cli_dest_args dest; /* --url or --config, the S3 flags */
    bool help;
    char *url;
    struct s3l_store *store;
    /* s3:// only (NULL for file://): the store's client, bucket and prefix ("" or "P/") */
    struct s3l_s3_client *client;
    const char *bucket, *prefix;
    char area[64]; /* "_openetl/check/<uuid>/": everything check writes */
    int first_code;
    int first_step;
    bool failed[N_STEPS + 1];
};

/* ---- reporting ---- */

/*
 * One step's outcome: ok (code 0) with detail, skipped (code 1, detail says why) or failed (a
 * negative S3L_E* code, detail the error's message, fix what to do). Failed steps also go to
 * stderr as errors, in every mode.
 */
static void report(struct check *k, int step, int code, const char *detail, const char *fix)
{
    bool ok = code == 0, skipped = code == 1;
    if (code < 0) {
        k->failed[step] = true;
        if (!k->first_code) {
            k->first_code = code;
            k->first_step = step;
        }
        fprintf(stderr, "%s: error: check step %d (%s): %s [%s]\n", k->c->prog, step,
                step_names[step], detail, s3l_error_name(code));
        if (fix)
            fprintf(stderr, "  fix: %s\n", fix);
    }
    if (k->c->json) {
        cli_emit_json(json_pack("{s:s, s:i, s:s, s:b, s:s?, s:s?, s:s, s:b}", "event",
                                "check_step", "step", step, "name", step_names[step], "ok", ok,
                                "class", code < 0 ? s3l_error_name(code) : NULL, "fix", fix,
                                "detail", detail, "skipped", skipped));
    } else if (!k->c->quiet) {
        printf("step %d %-11s %s: %s\n", step, step_names[step],
               ok ? "ok" : skipped ? "skipped" : s3l_error_name(code), detail);
        if (fix)
            printf("  %s: %s\n", code < 0 ? "fix" : "note", fix);
    }
}

/* A failed step from err (its message, or the code's text). */
static void report_err(struct check *k, int step, int code, const struct s3l_error *err,
                       const char *fix)
{
    report(k, step, code, err && err->message[0] ? err->message : s3l_strerror(code), fix);
}

/* The steps after a failure that makes them meaningless. */
static void skip_rest(struct check *k, int from, const char *why)
{
    for (int s = from; s <= N_STEPS; s++)
        report(k, s, 1, why, NULL);
}

/* ---- fixes ---- */

/* The resource for fixes: "arn:aws:s3:::BUCKET/PREFIX/" and a star, or the directory. */
static void resource(const struct check *k, char *out, size_t cap)
{
    if (k->client)
        snprintf(out, cap, "arn:aws:s3:::%s/%s*", k->bucket, k->prefix);
    else
        snprintf(out, cap, "%s", k->url + (strncmp(k->url, "file://", 7) == 0 ? 7 : 0));
}

/* The fix for a failure of a store operation (the S3 action it needs). */
static const char *fix_for(const struct check *k, int code, const char *action, char *buf,
                           size_t cap)
{
    char res[700];
    resource(k, res, sizeof(res));
    switch (code) {
    case S3L_EPERMISSION_DENIED:
        if (k->client)
            snprintf(buf, cap, "grant %s on %s to the principal of step 1", action, res);
        else
            snprintf(buf, cap, "make %s writable by this user (uid %ld)", res, (long)getuid());
        return buf;
    case S3L_EAUTH_INVALID:
        return "the store refused the key: check the credentials of step 1 (the secret, the "
               "key id, and that this is the store they belong to)";
    case S3L_EAUTH_EXPIRED:
        return "the session token expired: renew the credentials of step 1";
    case S3L_ENO_SPACE:
        return "free space on the destination's filesystem";
    case S3L_ETRANSIENT:
    case S3L_ETHROTTLED:
        return "the store did not answer in time, or asked to slow down: check the endpoint "
               "and the network, then run check again";
    default:
        return NULL;
    }
}

/* ---- step 1: credentials ---- */

static void step_credentials(struct check *k)
{
    char detail[2600];
    if (!k->client) {
        snprintf(detail, sizeof(detail),
                 "file:// needs no credentials: files are written as this process's user "
                 "(uid %ld); skipped: STS GetCallerIdentity, which is S3's", (long)getuid());
        report(k, 1, 0, detail, NULL);
        return;
    }
    struct s3l_s3_identity id;
    struct s3l_error err = {0};
    int rc = s3l_s3_caller_identity(k->client, &id, &err);
    if (rc) {
        report_err(k, 1, rc, &err, NULL);
        return;
    }
    bool refused = !id.from_sts && (strstr(id.why_no_arn, "[AUTH_INVALID]") ||
                                    strstr(id.why_no_arn, "[AUTH_EXPIRED]"));
    char role[600];
    if (k->c->creds[0]) /* --config: the document's source, its aws.role assumed or ignored */
        snprintf(role, sizeof(role), "credentials: %s", k->c->creds);
    else if (id.role_arn[0])
        snprintf(role, sizeof(role), "role assumed: %s", id.role_arn);
    else if (k->dest.s3.access.role_arn)
        snprintf(role, sizeof(role), "--role-arn %s ignored: the credentials are not the "
                 "role's", k->dest.s3.access.role_arn);
    else
        snprintf(role, sizeof(role), "no role assumed");
    if (refused) {
        snprintf(detail, sizeof(detail), "source %s, key %s: %s", id.source, id.key_id,
                 id.why_no_arn);
        report(k, 1, strstr(id.why_no_arn, "[AUTH_EXPIRED]") ? S3L_EAUTH_EXPIRED
                                                             : S3L_EAUTH_INVALID,
               detail, fix_for(k, S3L_EAUTH_INVALID, "", role, sizeof(role)));
        return;
    }
    if (id.from_sts)
        snprintf(detail, sizeof(detail), "source %s, principal %s (STS GetCallerIdentity), "
                 "key %s; %s", id.source, id.arn, id.key_id, role);
    else if (id.arn[0])
        snprintf(detail, sizeof(detail), "source %s, principal %s (the AssumeRole answer; STS "
                 "GetCallerIdentity gave none: %s), key %s; %s", id.source, id.arn,
                 id.why_no_arn, id.key_id, role);
    else
        snprintf(detail, sizeof(detail), "source %s, principal: key %s (the key id's first 4 "
                 "and last 4 characters: STS GetCallerIdentity gave no ARN: %s); %s",
                 id.source, id.key_id, id.why_no_arn, role);
    report(k, 1, 0, detail, NULL);
}

/* ---- step 2: bucket ---- */

static void step_bucket(struct check *k)
{
    char detail[1200], fix[900];
    if (!k->client) {
        snprintf(detail, sizeof(detail), "directory %s exists", k->url + 7);
        report(k, 2, 0, detail, NULL);
        return;
    }
    char before[64], after[64];
    s3l_s3_client_region(k->client, before, sizeof(before));
    struct s3l_error err = {0};
    const char *how = "HeadBucket";
    int rc = s3l_s3_head_bucket(k->client, k->bucket, &err);
    if (rc == S3L_EPERMISSION_DENIED) {
        /* A prefix-only policy denies HeadBucket (it carries no s3:prefix): a listing under
         * PREFIX/ settles whether the bucket is there and ours to use. */
        struct s3l_s3_list_page page;
        struct s3l_error e2 = {0};
        rc = s3l_s3_list_objects(k->client, k->bucket, k->prefix, NULL, NULL, 1, &page, &e2);
        s3l_s3_list_page_free(&page);
        how = "HeadBucket refused (403), so ListObjectsV2 under the prefix";
        if (rc)
            err = e2;
    }
    s3l_s3_client_region(k->client, after, sizeof(after));
    if (rc == S3L_ENOT_FOUND) {
        snprintf(detail, sizeof(detail), "bucket %s does not exist (%s)", k->bucket,
                 err.message[0] ? err.message : "404");
        snprintf(fix, sizeof(fix), "create the bucket (aws s3 mb s3://%s --region %s) or "
                 "correct --url", k->bucket, after);
        report(k, 2, rc, detail, fix);
    } else if (rc == S3L_EPERMISSION_DENIED) {
        snprintf(fix, sizeof(fix), "grant s3:ListBucket on arn:aws:s3:::%s (with the "
                 "condition s3:prefix StringLike \"%s*\") to the principal of step 1",
                 k->bucket, k->prefix);
        report_err(k, 2, rc, &err, fix);
    } else if (rc == S3L_EINVALID_CONFIG) {
        report_err(k, 2, rc, &err, "set --region (or AWS_REGION) to the bucket's region, or "
                                   "correct --endpoint");
    } else if (rc) {
        report_err(k, 2, rc, &err, fix_for(k, rc, "s3:ListBucket", fix, sizeof(fix)));
    } else if (strcmp(before, after) != 0) {
        snprintf(detail, sizeof(detail), "bucket %s reachable (%s), in region %s, not %s: "
                 "requests are signed for %s from now on", k->bucket, how, after, before,
                 after);
        snprintf(fix, sizeof(fix), "set --region %s (or AWS_REGION=%s): every command's first "
                 "request is redirected until then", after, after);
        report(k, 2, 0, detail, fix);
    } else {
        snprintf(detail, sizeof(detail), "bucket %s reachable (%s), region %s", k->bucket, how,
                 after);
        report(k, 2, 0, detail, NULL);
    }
}

/* ---- step 3: put, get back, delete ---- */

static void step_object(struct check *k)
{
    char key[128], body[160], detail[600], fix[900];
    snprintf(key, sizeof(key), "%sprobe", k->area);
    snprintf(body, sizeof(body), "s3land check %s\n", key);
    struct s3l_error err = {0};
    const char *op = "s3:PutObject";
    int rc = s3l_store_put(k->store, key, body, strlen(body), NULL, NULL, &err);
    uint8_t *data = NULL;
    size_t len = 0;
    if (rc == 0) {
        op = "s3:GetObject";
        rc = s3l_store_get(k->store, key, 0, UINT64_MAX, 4096, &data, &len, NULL, &err);
        if (rc == 0 && (len != strlen(body) || memcmp(data, body, len) != 0))
            rc = s3l_error_set(&err, S3L_ECORRUPT, "%s read back is %zu bytes that differ from "
                               "the %zu written", key, len, strlen(body));
    }
    s3l_free(data);
    if (rc == 0) {
        op = "s3:DeleteObject";
        rc = s3l_store_remove(k->store, key, &err);
    }
    if (rc == S3L_ECORRUPT)
        report_err(k, 3, rc, &err, "something between s3land and the store changes objects: "
                                   "check proxies and the gateway");
    else if (rc)
        report_err(k, 3, rc, &err, fix_for(k, rc, op, fix, sizeof(fix)));
    else {
        snprintf(detail, sizeof(detail), "put, got back (%zu bytes, the same) and deleted %s",
                 strlen(body), key);
        report(k, 3, 0, detail, NULL);
    }
}

/* ---- step 4: multipart ---- */

static void step_multipart(struct check *k)
{
    char key[128], detail[600], fix[900];
    snprintf(key, sizeof(key), "%smultipart", k->area);
    struct s3l_put_options po = {0};
    po.part_size = MULTIPART_PART;
    po.size_hint = MULTIPART_SIZE;
    struct s3l_error err = {0};
    struct s3l_upload *u = NULL;
    struct s3l_staged st = {0};
    uint8_t *buf = s3l_malloc(MULTIPART_SIZE);
    int rc = buf ? 0 : s3l_error_set(&err, S3L_ENOMEM, "out of memory for a %u-byte upload",
                                     MULTIPART_SIZE);
    for (size_t i = 0; buf && i < MULTIPART_SIZE; i++)
        buf[i] = (uint8_t)(i * 2654435761u >> 24);
    if (rc == 0)
        rc = s3l_store_upload_begin(k->store, key, &po, &u, &err);
    if (rc == 0)
        rc = s3l_store_upload_write(u, buf, MULTIPART_SIZE, &err);
    if (rc == 0) {
        rc = s3l_store_upload_stage(u, &st, &err); /* frees u */
        u = NULL;
    }
    s3l_store_upload_abort(u);
    s3l_free(buf);
    uint32_t parts = st.n_parts;
    if (rc == 0)
        rc = s3l_store_staged_abort(k->store, key, st.upload_id, &err);
    s3l_staged_cleanup(&st);
    if (rc == 0 && k->client && parts != 2)
        rc = s3l_error_set(&err, S3L_EINTERNAL, "the upload of %s was staged in %u parts, not 2",
                           key, parts);
    if (rc == S3L_EPERMISSION_DENIED && k->client)
        report_err(k, 4, rc, &err, fix_for(k, rc, "s3:PutObject (CreateMultipartUpload, "
                                           "UploadPart) and s3:AbortMultipartUpload (with "
                                           "SSE-KMS also kms:GenerateDataKey and kms:Decrypt "
                                           "on the key)", fix, sizeof(fix)));
    else if (rc)
        report_err(k, 4, rc, &err, fix_for(k, rc, "s3:PutObject", fix, sizeof(fix)));
    else if (k->client) {
        snprintf(detail, sizeof(detail), "a %u-byte multipart upload of %s in 2 parts (5 MiB, "
                 "1 MiB) staged, then aborted", MULTIPART_SIZE, key);
        report(k, 4, 0, detail, NULL);
    } else {
        snprintf(detail, sizeof(detail), "file:// has no multipart uploads; its equivalent, a "
                 "staged upload of %u bytes (%s, fsynced, invisible), staged then aborted",
                 MULTIPART_SIZE, key);
        report(k, 4, 0, detail, NULL);
    }
}

/* ---- step 5: list ---- */

static int first_object(void *ctx, const struct s3l_object_info *info)
{
    (void)info;
    *(bool *)ctx = true;
    return 1;
}

static void step_list(struct check *k)
{
    char detail[600], fix[900];
    bool any = false;
    struct s3l_error err = {0};
    int rc = s3l_store_list(k->store, "", first_object, &any, &err);
    if (rc < 0) {
        if (rc == S3L_EPERMISSION_DENIED && k->client)
            snprintf(fix, sizeof(fix), "grant s3:ListBucket on arn:aws:s3:::%s with the "
                     "condition s3:prefix StringLike \"%s*\" to the principal of step 1",
                     k->bucket, k->prefix);
        report_err(k, 5, rc, &err, rc == S3L_EPERMISSION_DENIED && k->client
                                       ? fix
                                       : fix_for(k, rc, "s3:ListBucket", fix, sizeof(fix)));
        return;
    }
    snprintf(detail, sizeof(detail), "listed %s%s (%s)", k->url,
             k->client && k->prefix[0] ? "/" : "", any ? "it holds objects" : "empty");
    report(k, 5, 0, detail, NULL);
}

/* ---- step 6: conditional writes ---- */

static void step_conditional(struct check *k)
{
    char key[128], detail[800], fix[900];
    snprintf(key, sizeof(key), "%sconditional", k->area);
    struct s3l_error err = {0};
    struct s3l_object_info v1 = {0}, v2 = {0};
    struct s3l_put_options po = {0};
    int rc = s3l_store_put(k->store, key, "version 1\n", 10, NULL, &v1, &err);
    if (rc == 0)
        rc = s3l_store_put(k->store, key, "version 2\n", 10, NULL, &v2, &err);
    if (rc) {
        report_err(k, 6, rc, &err, fix_for(k, rc, "s3:PutObject", fix, sizeof(fix)));
        return;
    }
    /* put-if-absent on the key that exists: must be refused */
    po.if_none_match = true;
    struct s3l_error e1 = {0};
    int r1 = s3l_store_put(k->store, key, "version 3\n", 10, &po, NULL, &e1);
    /* compare-and-swap with the stale ETag of version 1: must be refused */
    po.if_none_match = false;
    po.if_match = v1.etag;
    struct s3l_error e2 = {0};
    int r2 = s3l_store_put(k->store, key, "version 4\n", 10, &po, NULL, &e2);
    if (r1 == 0) {
        report(k, 6, S3L_EUNSUPPORTED, "the store accepted a PutObject with If-None-Match: * "
               "on a key that exists (it should answer 412 PreconditionFailed): it ignores the "
               "condition",
               "markers need put-if-absent (If-None-Match: *): without it two writers can "
               "both commit one epoch; use a store that honours conditional writes (AWS S3 "
               "does since 2024, Ceph RGW does)");
        return;
    }
    if (r2 == 0) {
        report(k, 6, S3L_EUNSUPPORTED, "the store accepted a PutObject with If-Match and a "
               "stale ETag (it should answer 412 PreconditionFailed): it ignores the condition",
               "schema records need compare-and-swap (If-Match): without it two writers can "
               "overwrite each other's schema changes; use a store that honours conditional "
               "writes (AWS S3 does since 2024, Ceph RGW does)");
        return;
    }
    if (r1 != S3L_EPRECONDITION_FAILED || r2 != S3L_EPRECONDITION_FAILED) {
        const struct s3l_error *e = r1 != S3L_EPRECONDITION_FAILED ? &e1 : &e2;
        int r = r1 != S3L_EPRECONDITION_FAILED ? r1 : r2;
        report_err(k, 6, r, e, fix_for(k, r, "s3:PutObject", fix, sizeof(fix)));
        return;
    }
    /* the current ETag must be accepted: a store that refuses every If-Match would stop
     * every schema change */
    struct s3l_object_info cur = {0};
    rc = s3l_store_stat(k->store, key, &cur, &err);
    po.if_match = cur.etag;
    if (rc == 0)
        rc = s3l_store_put(k->store, key, "version 5\n", 10, &po, NULL, &err);
    if (rc == S3L_EPRECONDITION_FAILED) {
        report_err(k, 6, rc, &err, "the store refuses If-Match with the ETag it gave: schema "
                                   "records cannot be updated (compare-and-swap); check the "
                                   "gateway's ETag handling");
        return;
    }
    if (rc) {
        report_err(k, 6, rc, &err, fix_for(k, rc, "s3:GetObject and s3:PutObject", fix,
                                           sizeof(fix)));
        return;
    }
    snprintf(detail, sizeof(detail), "%s: If-None-Match: * on the existing key refused (412), "
             "If-Match with a stale ETag refused (412), with the current ETag accepted%s", key,
             k->client ? "" : " (file://: the local store's put-if-absent by link(2) and its "
                              "compare-and-rename under a lock)");
    report(k, 6, 0, detail, NULL);
}

/* ---- step 7: the load path (check_load.c) ---- */

static void step_load(struct check *k)
{
    char detail[800], fix[900];
    struct s3l_error err = {0};
    int rc = cli_check_load(k->store, k->area, LOAD_ROWS, detail, sizeof(detail), &err);
    if (rc)
        report_err(k, 7, rc, &err, fix_for(k, rc, "s3:PutObject, s3:GetObject, s3:DeleteObject "
                                           "and s3:AbortMultipartUpload", fix, sizeof(fix)));
    else
        report(k, 7, 0, detail, NULL);
}

/* ---- the command ---- */

static int parse(struct check *k, int argc, char **argv)
{
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "qh", check_options, NULL)) != -1) {
        switch (opt) {
        case O_JSON:
            k->c->json = true;
            break;
        case 'q':
            k->c->quiet = true;
            break;
        case 'h':
            k->help = true;
            return 0;
        default: {
            int ex = cli_dest_option(k->c, "check", opt, &k->dest);
            if (ex < 0)
                return cli_bad_option(k->c, "check", check_options, argv[optind - 1]);
            if (ex > 0)
                return ex;
            break;
        }
        }
    }
    if (optind < argc)
        return cli_usage(k->c, "check", "unexpected argument %s", argv[optind]);
    return cli_dest_args_check(k->c, "check", &k->dest);
}

/* 32 hex digits as a UUID (8-4-4-4-12) from /dev/urandom, version 4. */
static void new_uuid(char out[37])
{
    unsigned char b[16] = {0};
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(b, 1, sizeof(b), f) != sizeof(b)) {
        /* never the same twice in one process, nor across processes at once */
        unsigned long long v = (unsigned long long)getpid() * 1000003ull ^
                               (unsigned long long)(uintptr_t)out;
        memcpy(b, &v, sizeof(v));
    }
    if (f)
        fclose(f);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
}

/* After the store could not be opened: whether the credentials it would use can be had (the
 * CLI's provider for --profile or --role-arn, else the default chain the client builds): 0, or
 * their failure in *err (err replaced). */
static int creds_probe(struct check *k, struct s3l_error *err)
{
    struct s3l_creds_provider *p = k->dest.s3.access.creds, *chain = NULL, *own = NULL;
    struct s3l_error e = {0};
    int rc = 0;
    if (!p && (rc = s3l_creds_default_chain_new(NULL, &chain, &e)) == 0 &&
        (rc = s3l_creds_cache_new(chain, &own, &e)) == 0)
        p = own;
    struct s3l_credentials cr = {0};
    if (rc == 0)
        rc = s3l_creds_provider_get(p, &cr, &e);
    s3l_credentials_cleanup(&cr);
    s3l_creds_provider_free(own);
    if (rc) {
        s3l_error_clear(err);
        *err = e;
    }
    return rc;
}

/*
 * Opens the store without creating anything. A failure is step 1's when the credentials are
 * refused or missing (s3://), else step 2's (the destination is not there or not reachable).
 */
static int open_store(struct check *k)
{
    struct s3l_error err = {0};
    if (k->dest.config) {
        int ex = cli_docs_open_store(k->c, "check", k->dest.config, &k->dest.secrets, false,
                                     &k->store, &k->url);
        return ex ? -ex : 0;
    }
    int rc = cli_default_url(k->dest.url_arg, &k->url, &err);
    if (rc)
        return -cli_fail(k->c, rc, &err, S3L_SIDE_CONFIG);
    bool s3 = strncmp(k->url, "s3://", 5) == 0;
    if (s3) {
        int ex = cli_access_resolve(k->c, &k->dest.s3.access, &k->dest.s3.region,
                                    &k->dest.s3.endpoint);
        if (ex)
            return -ex;
    }
    struct s3l_store_options so = {0};
    so.version = S3L_STORE_OPTIONS_VERSION;
    cli_s3_store_options(&k->dest.s3, &so);
    rc = s3l_store_open(k->url, &so, &k->store, &err);
    if (rc == 0)
        return 0;
    bool access = rc == S3L_EAUTH_INVALID || rc == S3L_EAUTH_EXPIRED ||
                  rc == S3L_EPERMISSION_DENIED;
    char fix[900];
    if (rc == S3L_ENOT_FOUND && !s3) {
        snprintf(fix, sizeof(fix), "create the directory (mkdir -p %s) or correct --url: "
                 "check creates nothing", k->url + 7);
        report(k, 1, 0, "file:// needs no credentials", NULL);
        report_err(k, 2, rc, &err, fix);
    } else if (s3 && access) {
        report_err(k, 1, rc, &err, rc == S3L_EPERMISSION_DENIED
                                       ? "the role refused to be assumed: check its trust "
                                         "policy (Principal, sts:ExternalId), then its "
                                         "permissions policy"
                                       : "set credentials: AWS_ACCESS_KEY_ID and "
                                         "AWS_SECRET_ACCESS_KEY, a profile (--profile), or a "
                                         "role (--role-arn); the message lists each source "
                                         "tried");
    } else if (s3 && (rc = creds_probe(k, &err)) != 0) {
        /* The failure was the credentials' (a role that does not exist, STS not reachable):
         * step 1's, not the bucket's (found by a break-it run: "bucket ... correct --url"). */
        report_err(k, 1, rc, &err, "the credentials could not be had: check the profile (its "
                                   "role_arn exists and trusts its source_profile) or "
                                   "--role-arn, and STS's endpoint (AWS_ENDPOINT_URL_STS)");
        report(k, 2, 1, "the credentials of step 1 could not be had", NULL);
    } else {
        report(k, 1, s3 ? 1 : 0, s3 ? "the store could not be opened" : "file:// needs none",
               NULL);
        report_err(k, 2, rc, &err, rc == S3L_EINVALID_CONFIG ? "correct --url (or the "
                                                               "endpoint)"
                                                             : fix_for(k, rc, "", fix,
                                                                       sizeof(fix)));
    }
    return 1;
}

/* Removes whatever a failed step left under the check's area (best effort: gc removes the rest
 * after an hour, s3l_dest_gc_check_leftovers). */
static void clean_area(struct check *k)
{
    struct s3l_error err = {0};
    cli_check_remove_under(k->store, k->area, NULL, &err);
}

int cli_cmd_check(struct cli *c, int argc, char **argv)
{
    struct check k = {0};
    k.c = c;
    int ex = parse(&k, argc, argv);
    if (ex || k.help) {
        if (k.help) {
            fputs(check_help, stdout);
            fputs(cli_s3_help, stdout);
            fputs(cli_access_help, stdout);
            fputs(cli_sse_help, stdout);
            fputs(cli_exit_codes_help, stdout);
        }
        return ex;
    }
    char uuid[37];
    new_uuid(uuid);
    snprintf(k.area, sizeof(k.area), "%s%s/", s3l_dest_scratch_prefix(), uuid);
    int o = open_store(&k);
    if (o < 0) {
        s3l_free(k.url);
        return -o; /* reported (usage, a config file) */
    }
    if (o == 0) {
        if (s3l_s3_store_client(k.store, &k.client, &k.bucket, &k.prefix) != 0)
            k.client = NULL;
        if (!c->json && !c->quiet)
            printf("check %s\n", k.url);
        step_credentials(&k);
        if (!k.failed[1])
            step_bucket(&k);
        if (k.failed[1] || k.failed[2]) {
            skip_rest(&k, k.failed[1] && !k.failed[2] ? 2 : 3,
                      k.failed[1] ? "step 1 failed: the credentials are refused"
                                  : "step 2 failed: the destination is not reachable");
        } else {
            step_object(&k);
            if (k.failed[3]) {
                report(&k, 4, 1, "step 3 failed: no object can be written", NULL);
                step_list(&k);
                report(&k, 6, 1, "step 3 failed: no object can be written", NULL);
                report(&k, 7, 1, "step 3 failed: no object can be written", NULL);
            } else {
                step_multipart(&k);
                step_list(&k);
                step_conditional(&k);
                step_load(&k);
            }
            clean_area(&k);
        }
    } else {
        skip_rest(&k, 3, "the destination could not be opened");
    }
    ex = cli_exit_for(k.first_code, S3L_SIDE_DESTINATION);
    if (c->json)
        cli_emit_json(json_pack("{s:s, s:s?, s:b, s:i}", "event", "check", "url", k.url, "ok",
                                k.first_code == 0, "exit", ex));
    else if (!c->quiet && k.first_code == 0)
        printf("check: ok: %s can be written, read, listed and loaded\n", k.url);
    else if (k.first_code)
        fprintf(stderr, "%s: error: check failed at step %d (%s) [%s]\n", c->prog,
                k.first_step, step_names[k.first_step], s3l_error_name(k.first_code));
    s3l_store_free(k.store);
    s3l_free(k.url);
    return ex;
}
