/*
 * The transport: S3 requests over libcurl's multi interface, several in flight on reused
 * connections, each signed afresh for every attempt (SigV4 dates must be current), with the
 * retry rules of docs/design.md section 5: THROTTLED, TRANSIENT and AUTH_EXPIRED are retried with
 * capped exponential backoff and full jitter; RequestTimeTooSkewed corrects our clock from the
 * server's Date header; SlowDown halves the number of requests in flight, which then grows back
 * by one per 8 successes. Everything else fails at once, carrying S3 code, status and request id.
 * Bodies are sent from memory with Content-Length, never chunked; answers are capped.
 * Several threads may drive one client at once: the locking protocol is described at struct
 * s3l_s3_client (s3_int.h); in short, one thread at a time pumps every transfer of the client,
 * the others wait for its rounds, and the in-flight limit counts all callers' requests.
 */
#include <stdlib.h>
#include <strings.h>
#include <time.h>

#include "os/os.h"
#include "s3/s3_int.h"

enum { ST_NEW, ST_PENDING, ST_ACTIVE, ST_DONE };

#define ERROR_CAP (1u << 20) /* bytes of an error answer kept, whatever the caller's cap */

static int64_t mono_ms(void)
{
    return s3l__os_mono_ns() / 1000000;
}

/* The wall clock in whole seconds since the epoch (SigV4 dates, the skew correction). */
static int64_t wall_s(void)
{
    return s3l__os_now_ns() / 1000000000;
}

int s3l__http_add_header(struct s3l__http_req *r, const char *name, const char *value)
{
    if (r->n_headers >= S3L__MAX_HDRS)
        return S3L_EINTERNAL;
    r->headers[r->n_headers].name = name;
    r->headers[r->n_headers++].value = value;
    return 0;
}

int s3l__http_add_query(struct s3l__http_req *r, const char *name, const char *value)
{
    if (r->n_query >= S3L__MAX_QUERY)
        return S3L_EINTERNAL;
    r->query[r->n_query].name = name;
    r->query[r->n_query++].value = value;
    return 0;
}

void s3l__http_req_reset(struct s3l__http_req *r)
{
    curl_slist_free_all(r->slist);
    r->slist = NULL;
    s3l_buf_free(&r->resp);
}

void s3l__http_req_cleanup(struct s3l__http_req *r)
{
    if (r->easy)
        curl_easy_cleanup(r->easy);
    r->easy = NULL;
    curl_slist_free_all(r->slist);
    r->slist = NULL;
    s3l_buf_free(&r->resp);
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct s3l__http_req *r = ud;
    size_t n = size * nmemb;
    /* the caller's cap is for the answer it asked for; an error document may be larger than a
     * tiny object, and has a cap of its own */
    long status = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
    r->resp.max = status >= 200 && status < 300 ? r->resp_cap : S3L_MAX(r->resp_cap, ERROR_CAP);
    if (s3l_buf_append(&r->resp, ptr, n) != 0) {
        r->too_large = true;
        return 0; /* makes curl fail the transfer with CURLE_WRITE_ERROR */
    }
    return n;
}

static size_t on_read(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct s3l__http_req *r = ud;
    size_t n = S3L_MIN(size * nmemb, r->body_len - r->body_off);
    if (n)
        memcpy(ptr, r->body + r->body_off, n);
    r->body_off += n;
    return n;
}

static bool header_is(const char *line, size_t len, const char *name, const char **val,
                      size_t *vlen)
{
    size_t n = strlen(name);
    if (len <= n || line[n] != ':' || strncasecmp(line, name, n) != 0)
        return false;
    const char *v = line + n + 1, *end = line + len;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    *val = v;
    *vlen = (size_t)(end - v);
    return true;
}

static void keep(char *dst, size_t cap, const char *v, size_t n)
{
    n = S3L_MIN(n, cap - 1);
    memcpy(dst, v, n);
    dst[n] = 0;
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *ud)
{
    struct s3l__http_req *r = ud;
    size_t len = size * nmemb;
    const char *v;
    size_t n;
    if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) { /* a new answer (after 100 Continue) */
        r->etag[0] = r->request_id[0] = r->bucket_region[0] = r->date[0] = 0;
        r->last_modified[0] = r->upload_meta[0] = r->content_range[0] = 0;
        r->have_content_length = false;
    } else if (header_is(line, len, "ETag", &v, &n)) {
        s3l__etag_copy(r->etag, v, n);
    } else if (header_is(line, len, "x-amz-request-id", &v, &n)) {
        keep(r->request_id, sizeof(r->request_id), v, n);
    } else if (header_is(line, len, "x-amz-bucket-region", &v, &n)) {
        keep(r->bucket_region, sizeof(r->bucket_region), v, n);
    } else if (header_is(line, len, "Date", &v, &n)) {
        keep(r->date, sizeof(r->date), v, n);
    } else if (header_is(line, len, "Last-Modified", &v, &n)) {
        keep(r->last_modified, sizeof(r->last_modified), v, n);
    } else if (header_is(line, len, "x-amz-meta-s3land-upload", &v, &n)) {
        keep(r->upload_meta, sizeof(r->upload_meta), v, n);
    } else if (header_is(line, len, "Content-Range", &v, &n)) {
        keep(r->content_range, sizeof(r->content_range), v, n);
    } else if (header_is(line, len, "Content-Length", &v, &n)) {
        char tmp[32];
        keep(tmp, sizeof(tmp), v, n);
        r->content_length = strtoull(tmp, NULL, 10);
        r->have_content_length = true;
    }
    return len;
}

/* ------------------------------------------------------------------ building one attempt */

static int build_url(struct s3l_s3_client *c, struct s3l__http_req *r, struct s3l_buf *host,
                     struct s3l_buf *path)
{
    bool key = r->key && *r->key;
    /* buckets with dots break TLS wildcard names under virtual-hosted style: path-style then */
    bool path_style = c->path_style || !r->bucket || strchr(r->bucket, '.');
    int rc = 0;
    if (path_style || !r->bucket) {
        rc = s3l_buf_append_str(host, c->host);
        if (rc == 0 && r->bucket)
            rc = s3l_buf_printf(path, "/%s%s", r->bucket, key ? "/" : "");
        else if (rc == 0)
            rc = s3l_buf_append_str(path, "/");
    } else {
        rc = s3l_buf_printf(host, "%s.%s", r->bucket, c->host);
        if (rc == 0)
            rc = s3l_buf_append_str(path, "/");
    }
    if (rc == 0 && key)
        rc = s3l__uri_encode(path, r->key, strlen(r->key), true);
    return rc;
}

/* Signs r for this attempt and fills its curl handle. */
static int prepare(struct s3l_s3_client *c, struct s3l__http_req *r)
{
    struct s3l_buf host, path, url;
    s3l_buf_init(&host, 1024);
    s3l_buf_init(&path, 8192);
    s3l_buf_init(&url, 16384);
    struct s3l__sigv4_result sig;
    s3l__sigv4_result_init(&sig);
    int rc = build_url(c, r, &host, &path);

    time_t now = (time_t)(wall_s() + c->clock_offset_s);
    char amz_date[17];
    s3l__amz_date(now, amz_date);
    struct s3l__kv h[S3L__MAX_HDRS + 4];
    size_t nh = 0;
    h[nh++] = (struct s3l__kv){"host", (const char *)host.ptr};
    h[nh++] = (struct s3l__kv){"x-amz-date", amz_date};
    h[nh++] = (struct s3l__kv){"x-amz-content-sha256", r->payload_hash};
    if (c->session_token && *c->session_token)
        h[nh++] = (struct s3l__kv){"x-amz-security-token", c->session_token};
    for (size_t i = 0; i < r->n_headers; i++)
        h[nh++] = r->headers[i];
    struct s3l__sigv4_request sreq = {
        .method = r->method, .path = (const char *)path.ptr, .query = r->query,
        .n_query = r->n_query, .headers = h, .n_headers = nh,
        .payload_hash = r->payload_hash, .s3 = true,
    };
    struct s3l__creds creds = {c->access_key, c->secret_key, c->session_token};
    snprintf(r->signed_region, sizeof(r->signed_region), "%s", c->region);
    if (rc == 0)
        rc = s3l__sigv4_sign(&sreq, &creds, c->region, "s3", now, &c->key_cache, &sig);
    if (rc == 0)
        rc = s3l_buf_printf(&url, "%s://%s%s%s%s", c->scheme, (char *)host.ptr, (char *)path.ptr,
                            sig.canonical_query.len ? "?" : "",
                            sig.canonical_query.len ? (char *)sig.canonical_query.ptr : "");
    curl_slist_free_all(r->slist);
    r->slist = NULL;
    struct s3l_buf line;
    s3l_buf_init(&line, 1 << 16);
    for (size_t i = 1; rc == 0 && i <= nh; i++) { /* host is curl's own to send */
        s3l_buf_reset(&line);
        if (i < nh)
            rc = s3l_buf_printf(&line, "%s: %s", h[i].name, h[i].value);
        else
            rc = s3l_buf_printf(&line, "Authorization: %s", (char *)sig.authorization.ptr);
        struct curl_slist *l = rc == 0 ? curl_slist_append(r->slist, (char *)line.ptr) : NULL;
        if (rc == 0 && !l)
            rc = S3L_ENOMEM;
        if (l)
            r->slist = l;
    }
    if (rc == 0) {
        /* no 100-continue round trip: our bodies are in memory and bounded */
        struct curl_slist *l = curl_slist_append(r->slist, "Expect:");
        rc = l ? 0 : S3L_ENOMEM;
        if (l)
            r->slist = l;
    }
    /* curl copies the URL; the slist must live until the transfer ends */
    if (rc == 0)
        curl_easy_setopt(r->easy, CURLOPT_URL, (char *)url.ptr);
    s3l_buf_free(&line);
    s3l_buf_free(&host);
    s3l_buf_free(&path);
    s3l_buf_free(&url);
    s3l__sigv4_result_free(&sig);
    return rc;
}

static int setup_easy(struct s3l_s3_client *c, struct s3l__http_req *r)
{
    if (!r->easy)
        r->easy = curl_easy_init();
    else
        curl_easy_reset(r->easy);
    if (!r->easy)
        return S3L_ENOMEM;
    CURL *e = r->easy;
    s3l_buf_reset(&r->resp);
    r->too_large = false;
    r->body_off = 0;
    r->curl_err[0] = 0;
    int rc = prepare(c, r);
    if (rc != 0)
        return rc;
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, r->slist);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->curl_err);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    if (!r->no_low_speed) {
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, c->low_speed_time_s);
    }
    if (c->ca_file)
        curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
    if (c->resolve)
        curl_easy_setopt(e, CURLOPT_RESOLVE, c->resolve);
    if (strcmp(r->method, "HEAD") == 0) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (r->has_body) {
        curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
        /* curl copies the body into this buffer, and each send(2) takes one buffer's worth:
         * 64 KiB by default; 1 MiB makes 16 times fewer calls of the read callback and of
         * send(2) for a part (measured: about 0.08 s less CPU per GiB sent, bench/s3_upload) */
        if (r->body_len >= (1u << 20))
            curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, (long)(1u << 20));
        curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(e, CURLOPT_READDATA, r);
        curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->body_len);
        if (strcmp(r->method, "PUT") != 0)
            curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
    } else if (strcmp(r->method, "GET") != 0) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
    }
    return 0;
}

/* With c->mu held: waits until no thread drives, so that the caller may use the multi handle. */
static void own_multi(struct s3l_s3_client *c)
{
    while (c->driving) {
        c->multi_waiters++;
        curl_multi_wakeup(c->multi);
        pthread_cond_wait(&c->cv, &c->mu);
        c->multi_waiters--;
    }
}

static void enqueue(struct s3l_s3_client *c, struct s3l__http_req *r)
{
    r->state = ST_PENDING;
    r->queue_next = NULL;
    if (c->queue_tail)
        c->queue_tail->queue_next = r;
    else
        c->queue_head = r;
    c->queue_tail = r;
}

static void dequeue(struct s3l_s3_client *c, struct s3l__http_req *r, struct s3l__http_req *prev)
{
    if (prev)
        prev->queue_next = r->queue_next;
    else
        c->queue_head = r->queue_next;
    if (c->queue_tail == r)
        c->queue_tail = prev;
    r->queue_next = NULL;
}

/* The driver (mu held, the multi its own) starts one attempt of r. */
static int start(struct s3l_s3_client *c, struct s3l__http_req *r)
{
    r->attempts++;
    c->n_requests++;
    int op = s3l__s3_op_index(r->op);
    c->op_n[op]++;
    s3l__tally_add(r->tally, c, s3l__s3_op_name(op), 1);
    r->status = 0;
    struct s3l_error ce = {0};
    if (s3l__http_current_creds(c, &ce) != 0) {
        r->rc = ce.code;
        r->err = ce;
        s3l_error_prefix(&r->err, "%s %s: credentials", r->op, s3l__http_what(r));
        r->state = ST_DONE;
        return r->rc;
    }
    int rc = setup_easy(c, r);
    if (rc == 0 && curl_multi_add_handle(c->multi, r->easy) != CURLM_OK)
        rc = S3L_EINTERNAL;
    if (rc != 0) {
        r->rc = rc;
        s3l_error_clear(&r->err);
        s3l_error_set(&r->err, rc, "%s %s: cannot prepare the request", r->op, s3l__http_what(r));
        r->state = ST_DONE;
        return rc;
    }
    r->started_ms = mono_ms();
    r->state = ST_ACTIVE;
    c->n_active++;
    return 0;
}

/* With mu held, after the driver removed r's handle from the multi: classifies the attempt. */
static void on_done(struct s3l_s3_client *c, struct s3l__http_req *r, CURLcode cc)
{
    c->n_active--;
    s3l__http_finish_attempt(c, r, cc);
    s3l__http_trace(c, r, mono_ms() - r->started_ms);
    int64_t delay = 0;
    if (r->rc == 0) {
        r->state = ST_DONE;
        if (++c->successes_since_slowdown >= 8 && c->in_flight_limit < c->max_in_flight) {
            c->in_flight_limit++;
            c->successes_since_slowdown = 0;
        }
    } else if (s3l__region_follow(c, r)) { /* signed for the bucket's region, at once */
        c->n_retries++;
        enqueue(c, r);
        r->next_at_ms = 0;
    } else if (s3l__http_should_retry(c, r, &delay)) {
        c->n_retries++;
        enqueue(c, r);
        r->next_at_ms = mono_ms() + delay;
    } else {
        r->state = ST_DONE;
    }
}

/* Queues the caller's new requests; returns whether there were any. */
static bool init_reqs(struct s3l_s3_client *c, struct s3l__http_req **reqs, size_t n)
{
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        struct s3l__http_req *r = reqs[i];
        if (r->state != ST_NEW)
            continue; /* already running: s3l__http_drive is called again on a window */
        size_t cap = r->max_response ? r->max_response : c->max_response;
        if (!r->resp.ptr)
            s3l_buf_init(&r->resp, cap);
        r->resp.max = cap;
        r->resp_cap = cap;
        r->next_at_ms = 0;
        r->attempts = 0;
        r->region_moved = false;
        r->rc = 0;
        r->tally = s3l__tally_current(); /* this thread's: its attempts count there too */
        if (!r->payload_hash[0]) {
            if (c->sign_payload && r->has_body)
                s3l__sha256_hex(r->body, r->body_len, r->payload_hash);
            else if (c->sign_payload || !r->has_body)
                memcpy(r->payload_hash, S3L_SIGV4_EMPTY_SHA256, 65);
            else
                memcpy(r->payload_hash, S3L_SIGV4_UNSIGNED, sizeof(S3L_SIGV4_UNSIGNED));
        }
        enqueue(c, r);
        any = true;
    }
    return any;
}

/* The driver starts the queued requests that are due, oldest first, while the in-flight limit
 * allows; returns when the next waiting one is due (INT64_MAX: none, or no room). */
static int64_t start_due(struct s3l_s3_client *c)
{
    int64_t now = mono_ms(), next_due = INT64_MAX;
    struct s3l__http_req *prev = NULL, *r = c->queue_head;
    while (r) {
        struct s3l__http_req *next = r->queue_next;
        if (r->next_at_ms <= now && c->n_active < c->in_flight_limit) {
            dequeue(c, r, prev);
            (void)start(c, r);
        } else {
            next_due = S3L_MIN(next_due, r->next_at_ms);
            prev = r;
        }
        r = next;
    }
    return c->n_active < c->in_flight_limit ? next_due : INT64_MAX;
}

#define MAX_MSGS 64

/* One round of the driver (mu held on entry and exit, `driving` set): starts what is due, moves
 * every transfer of the client on with mu released, takes in the finished ones, and waits in
 * curl_multi_poll unless something finished or the caller needs no wait. Returns whether a
 * request finished. */
static bool drive_round(struct s3l_s3_client *c, bool wait)
{
    int64_t next_due = start_due(c);
    pthread_mutex_unlock(&c->mu);
    int running = 0;
    curl_multi_perform(c->multi, &running);
    struct {
        struct s3l__http_req *r;
        CURLcode cc;
    } done[MAX_MSGS];
    size_t n_done = 0;
    CURLMsg *m;
    int left;
    while (n_done < MAX_MSGS && (m = curl_multi_info_read(c->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        struct s3l__http_req *r = NULL;
        CURL *easy = m->easy_handle;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&r);
        done[n_done].r = r;
        done[n_done++].cc = m->data.result;
        curl_multi_remove_handle(c->multi, easy); /* m is invalid from here */
    }
    if (n_done == 0 && wait) {
        int64_t ms = next_due == INT64_MAX ? 1000 : S3L_MAX(0, S3L_MIN(1000, next_due - mono_ms()));
        curl_multi_poll(c->multi, NULL, 0, (int)ms, NULL);
    }
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < n_done; i++)
        on_done(c, done[i].r, done[i].cc);
    return n_done > 0;
}

/* Waits (mu held) for a request to finish in another thread's round. The driver starts our
 * queued requests (it was woken for them, and its poll ends when a retry is due), so the
 * timeout is only a safety net. */
static void await_round(struct s3l_s3_client *c)
{
    int64_t at = s3l__os_mono_ns() + 1000000000; /* the condition variable's clock (client.c) */
    struct timespec ts = {(time_t)(at / 1000000000), (long)(at % 1000000000)};
    pthread_cond_timedwait(&c->cv, &c->mu, &ts);
}

int s3l__http_drive(struct s3l_s3_client *c, struct s3l__http_req **reqs, size_t n,
                    size_t allowed, struct s3l_error *err)
{
    pthread_mutex_lock(&c->mu);
    if (init_reqs(c, reqs, n) && c->driving)
        curl_multi_wakeup(c->multi); /* the driver starts them at its next round */
    bool pumped = false;
    for (;;) {
        size_t unfinished = 0;
        for (size_t i = 0; i < n; i++)
            unfinished += reqs[i]->state != ST_DONE;
        /* while another thread drives, the transfers move on without us */
        if (unfinished == 0 || ((pumped || c->driving) && unfinished <= allowed))
            break;
        if (c->driving) {
            c->n_waiting++;
            await_round(c);
            c->n_waiting--;
            continue;
        }
        c->driving = true;
        bool done = drive_round(c, unfinished > allowed);
        c->driving = false;
        pumped = true;
        /* the others look again when a request finished (not at every round: waking them costs
         * more than the round) or when they wait to use the multi handle */
        if ((done && c->n_waiting > 0) || c->multi_waiters > 0)
            pthread_cond_broadcast(&c->cv);
        while (c->multi_waiters > 0) /* let them in before the next round */
            pthread_cond_wait(&c->cv, &c->mu);
    }
    if (pumped && c->n_waiting > 0)
        pthread_cond_broadcast(&c->cv); /* we drove: one of them has to drive in our place */
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (reqs[i]->state == ST_DONE && reqs[i]->rc != 0) {
            if (err && err->code == 0)
                *err = reqs[i]->err;
            rc = reqs[i]->rc;
        }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int s3l__http_run(struct s3l_s3_client *c, struct s3l__http_req **reqs, size_t n,
                  struct s3l_error *err)
{
    return s3l__http_drive(c, reqs, n, 0, err);
}

bool s3l__http_done(struct s3l_s3_client *c, const struct s3l__http_req *r)
{
    pthread_mutex_lock(&c->mu);
    bool done = r->state == ST_DONE;
    pthread_mutex_unlock(&c->mu);
    return done;
}

void s3l__http_cancel(struct s3l_s3_client *c, struct s3l__http_req *r)
{
    pthread_mutex_lock(&c->mu);
    if (r->state == ST_ACTIVE) {
        own_multi(c); /* meanwhile it may finish, or fail and wait in the queue for a retry */
        if (r->state == ST_ACTIVE) {
            curl_multi_remove_handle(c->multi, r->easy);
            c->n_active--;
        }
        pthread_cond_broadcast(&c->cv); /* a driver may wait for multi_waiters to drop */
    }
    if (r->state == ST_PENDING) {
        struct s3l__http_req *prev = NULL, *q = c->queue_head;
        while (q && q != r)
            prev = q, q = q->queue_next;
        if (q)
            dequeue(c, r, prev);
    }
    if (r->state != ST_DONE && r->rc == 0) {
        r->rc = S3L_ESTATE;
        s3l_error_set(&r->err, S3L_ESTATE, "%s %s: cancelled", r->op, s3l__http_what(r));
    }
    r->state = ST_DONE;
    pthread_mutex_unlock(&c->mu);
}
