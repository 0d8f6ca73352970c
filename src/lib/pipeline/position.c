/*
 * Input positions: identity of an input file, the offset committed so far, the hash that proves
 * the bytes before it are unchanged, and their JSON form inside the destination's checkpoint.
 *
 * Why a hash of the bytes before the offset: a log that was truncated and refilled, or rewritten
 * in place, keeps its inode, and may even be longer than the offset again; resuming at the offset
 * would then skip or duplicate rows silently. Comparing the 4 KiB before the offset catches that
 * for the price of one pread per epoch (issue 3, item 6).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "input/input.h"
#include "os/os.h"
#include "runner.h"
#include "s3l/input.h"
#include "s3l/pipeline.h"
#include "util/util.h"

int s3l_input_open(const char *path, struct s3l_input_position *pos, int *fd_out,
                   struct s3l_error *err)
{
    memset(pos, 0, sizeof(*pos));
    *fd_out = -1;
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? 0 : -1, rc;
    struct s3l__os_stat st;
    if ((!is_stdin && (rc = s3l__os_open_read(path, &fd, err)) != 0) ||
        (rc = s3l__os_fstat(fd, path, &st, err)) != 0)
        goto os_fail;
    if (st.is_dir) {
        rc = s3l_error_set(err, S3L_EINVALID_INPUT, "input %s is a directory", path);
        goto fail;
    }
    pos->replayable = !is_stdin && st.is_reg;
    if (pos->replayable) {
        if ((rc = s3l__os_realpath(path, &pos->path, err)) != 0)
            goto os_fail;
        pos->dev = st.dev;
        pos->ino = st.ino;
        pos->compression = (uint8_t)s3l__input_compression_of(path);
    } else if (!(pos->path = s3l_strdup(is_stdin ? "-" : path))) {
        rc = s3l_error_set(err, S3L_ENOMEM, "out of memory opening input %s", path);
        goto fail;
    }
    if ((rc = s3l_input_position_advance(pos, fd, 0, err)) != 0)
        goto fail;
    *fd_out = fd;
    return 0;
os_fail:
    s3l_error_prefix(err, "input"); /* "input: open PATH: <strerror>" */
fail:
    s3l_input_position_cleanup(pos);
    if (!is_stdin && fd >= 0)
        s3l__os_close(fd, path, NULL); /* the error being returned wins */
    return rc;
}

void s3l_input_position_cleanup(struct s3l_input_position *pos)
{
    if (!pos)
        return;
    s3l_free(pos->path);
    s3l_free(pos->csv_header);
    s3l_free(pos->object_state);
    s3l__object_input_free(pos->object_ctx);
    memset(pos, 0, sizeof(*pos));
}

int s3l_input_position_copy(struct s3l_input_position *dst, const struct s3l_input_position *src)
{
    *dst = *src;
    dst->path = s3l_strdup(src->path);
    dst->csv_header = src->csv_header ? s3l_strdup(src->csv_header) : NULL;
    dst->object_ctx = NULL; /* the run's listing stays with src */
    dst->object_state = src->object_state ? s3l_strdup(src->object_state) : NULL;
    if (!dst->path || (src->csv_header && !dst->csv_header) ||
        (src->object_state && !dst->object_state)) {
        s3l_input_position_cleanup(dst);
        return S3L_ENOMEM;
    }
    return 0;
}

/* SHA-256 of bytes [max(0, offset - window), offset) of fd into hex; *mid_line (may be NULL):
 * offset > 0, the byte before it is not a line break, and it is not just after a BOM at 0. */
static int hash_window(int fd, const char *path, uint64_t offset, char hex[65], bool *mid_line,
                       struct s3l_error *err)
{
    uint8_t buf[S3L_INPUT_HASH_WINDOW];
    uint64_t start = offset > sizeof(buf) ? offset - sizeof(buf) : 0;
    size_t want = (size_t)(offset - start), got = 0;
    int rc = s3l__os_pread_full(fd, buf, want, start, &got, path, err);
    if (rc)
        return s3l_error_prefix(err, "input"), rc;
    if (got < want)
        return s3l_error_set(err, S3L_EIO, "input %s is shorter than offset %llu", path,
                             (unsigned long long)offset);
    /* Just after a UTF-8 byte order mark at offset 0 is a line start too: the readers skip a
     * BOM there (and only there), so the first record starts at offset 3, and a run that left a
     * half-written first line unread commits offset 3 (issue 10, item 3 of the inputs part: the
     * rerun took that for a committed line without a line break and refused the file). */
    bool after_bom = offset == 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0;
    if (mid_line)
        *mid_line = want > 0 && !after_bom && buf[want - 1] != '\n' && buf[want - 1] != '\r';
    if (s3l__sha256_hex(buf, want, hex) != 0)
        return s3l_error_set(err, S3L_EINTERNAL, "SHA-256 failed hashing input %s", path);
    return 0;
}

int s3l_input_position_advance(struct s3l_input_position *pos, int fd, uint64_t offset,
                               struct s3l_error *err)
{
    if (pos->object) {
        /* An object prefix: the object source's state is made from the offset when the
         * positions are written (s3l_positions_to_json); its objects prove themselves by ETag. */
    } else if (pos->replayable && pos->compression) {
        /* The compressed bytes prove the file unchanged; offset counts decompressed bytes. */
        int rc = hash_window(fd, pos->path, pos->raw_size, pos->sha256, NULL, err);
        if (rc)
            return rc;
        pos->mid_line = false;
    } else if (pos->replayable) {
        int rc = hash_window(fd, pos->path, offset, pos->sha256, &pos->mid_line, err);
        if (rc)
            return rc;
    } else {
        pos->sha256[0] = 0;
        pos->mid_line = false;
    }
    pos->offset = offset;
    return 0;
}

/* What a refused (rotated, truncated, rewritten) input's error says to do next: the checkpoint
 * cannot take the changed file, but a new pipeline can (pipeline_id.c: the id follows the paths;
 * landed.c does not refuse a file whose committed bytes changed). */
#define FORWARD                                                                                    \
    "refusing to re-read or skip it; to land it as a new input, give a new --pipeline-id, or "     \
    "move it to another path (a new path is a new pipeline; run: give the Pipeline another "       \
    "metadata.name)"

static const char *compression_name(uint8_t c)
{
    return c == S3L_INPUT_GZIP ? "gzip" : c == S3L_INPUT_ZSTD ? "zstd" : "plain (not compressed)";
}

/*
 * A compressed input is unchanged when its compressed bytes before raw_size are (the same 4 KiB
 * window as a plain file's, before raw_size): its decompressed bytes before the offset then are
 * too, since what a decoder gives for a prefix of its input is a prefix of what it gives for
 * the whole. Bytes appended after raw_size (new members or frames, the rest of a cut one) are
 * read on; anything else is a rewrite.
 */
static int verify_compressed(const struct s3l_input_position *recorded, int fd, const char *path,
                             struct s3l_error *err)
{
    struct s3l__os_stat st;
    int rc = s3l__os_fstat(fd, path, &st, err);
    if (rc)
        return rc;
    if (st.size < recorded->raw_size)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s was truncated or rewritten: it has %llu compressed bytes, "
                             "but %llu were already read into committed epochs; " FORWARD,
                             path, (unsigned long long)st.size,
                             (unsigned long long)recorded->raw_size);
    char hex[65];
    rc = hash_window(fd, path, recorded->raw_size, hex, NULL, err);
    if (rc)
        return rc;
    if (strcmp(hex, recorded->sha256) != 0)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s was rewritten: its compressed bytes before byte %llu differ "
                             "from those committed (only whole gzip members or zstd frames may be "
                             "appended); " FORWARD,
                             path, (unsigned long long)recorded->raw_size);
    return 0;
}

int s3l_input_position_verify(const struct s3l_input_position *recorded,
                              const struct s3l_input_position *current, int fd,
                              struct s3l_error *err)
{
    const char *path = current->path;
    if (recorded->object || current->object)
        return s3l__object_input_verify(recorded, current, err);
    if (!recorded->replayable) {
        if (current->replayable && recorded->offset > 0)
            return s3l_error_set(err, S3L_EINVALID_INPUT,
                                 "input %s was recorded as a stream (stdin or a pipe) and is now "
                                 "a file; refusing to guess where to resume",
                                 path);
        return 0;
    }
    if (!current->replayable)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s was a file read up to offset %llu and is now a stream; "
                             "refusing to re-read or skip it",
                             path, (unsigned long long)recorded->offset);
    if (recorded->dev != current->dev || recorded->ino != current->ino)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s was replaced (rotated?) since the last commit: device:inode "
                             "was %llu:%llu, is %llu:%llu; " FORWARD,
                             path, (unsigned long long)recorded->dev,
                             (unsigned long long)recorded->ino, (unsigned long long)current->dev,
                             (unsigned long long)current->ino);
    if (recorded->compression != current->compression)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s was read as %s and is now named as %s; " FORWARD, path,
                             compression_name(recorded->compression),
                             compression_name(current->compression));
    if (recorded->compression)
        return verify_compressed(recorded, fd, path, err);
    struct s3l__os_stat st;
    int rc = s3l__os_fstat(fd, path, &st, err);
    if (rc)
        return s3l_error_prefix(err, "input"), rc;
    if (st.size < recorded->offset)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s was truncated: it has %llu bytes, but %llu were already "
                             "committed; " FORWARD,
                             path, (unsigned long long)st.size,
                             (unsigned long long)recorded->offset);
    char hex[65];
    rc = hash_window(fd, path, recorded->offset, hex, NULL, err);
    if (rc)
        return rc;
    if (strcmp(hex, recorded->sha256) != 0)
        return s3l_error_set(err, S3L_EINVALID_INPUT,
                             "input %s was rewritten: the bytes before offset %llu differ from "
                             "those committed; " FORWARD,
                             path, (unsigned long long)recorded->offset);
    return 0;
}

/* ---- JSON form ---------------------------------------------------------------------------- */

static json_t *position_json(const struct s3l_input_position *p)
{
    if (p->object)
        return s3l__object_input_json(p);
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = json_object_set_new(o, "path", json_string(p->path));
    bad |= json_object_set_new(o, "replayable", json_boolean(p->replayable));
    bad |= json_object_set_new(o, "dev", json_integer((json_int_t)p->dev));
    bad |= json_object_set_new(o, "ino", json_integer((json_int_t)p->ino));
    bad |= json_object_set_new(o, "offset", json_integer((json_int_t)p->offset));
    bad |= json_object_set_new(o, "sha256", json_string(p->sha256));
    bad |= json_object_set_new(o, "line", json_integer((json_int_t)p->line));
    if (p->mid_line)
        bad |= json_object_set_new(o, "mid_line", json_true());
    if (p->csv_header)
        bad |= json_object_set_new(o, "csv_header", json_string(p->csv_header));
    if (p->compression) {
        bad |= json_object_set_new(o, "compression",
                                   json_string(p->compression == S3L_INPUT_GZIP ? "gzip" : "zstd"));
        bad |= json_object_set_new(o, "raw_size", json_integer((json_int_t)p->raw_size));
    }
    if (p->raw_done)
        bad |= json_object_set_new(o, "raw_done", json_true());
    if (p->size_known) /* a field a reader without it ignores */
        bad |= json_object_set_new(o, "size", json_integer((json_int_t)p->size));
    if (p->csv_delimiter) {
        char d[2] = {p->csv_delimiter, 0};
        bad |= json_object_set_new(o, "csv_delimiter", json_string(d));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int s3l_positions_to_json(const struct s3l_input_position *pos, size_t n, char **out)
{
    json_t *root = json_object(), *arr = json_array();
    int bad = !root || !arr;
    if (!bad)
        bad = json_object_set_new(root, "version", json_integer(1)) != 0;
    for (size_t i = 0; !bad && i < n; i++)
        bad = json_array_append_new(arr, position_json(&pos[i])) != 0;
    if (!bad) {
        bad = json_object_set(root, "inputs", arr) != 0;
    }
    char *text = bad ? NULL : s3l__json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(arr);
    json_decref(root);
    if (!text)
        return S3L_ENOMEM;
    /* jansson allocates with its own allocator (malloc): hand over an s3l_ copy. */
    *out = s3l_strdup(text);
    s3l_free(text);
    return *out ? 0 : S3L_ENOMEM;
}

static int get_u64(json_t *o, const char *key, size_t i, uint64_t *v, struct s3l_error *err)
{
    json_t *j = json_object_get(o, key);
    if (!json_is_integer(j) || json_integer_value(j) < 0)
        return s3l_error_set(err, S3L_ECORRUPT,
                             "checkpoint input %zu: \"%s\" is missing or not a non-negative "
                             "integer",
                             i, key);
    *v = (uint64_t)json_integer_value(j);
    return 0;
}

static int parse_position(json_t *o, size_t i, struct s3l_input_position *p, struct s3l_error *err)
{
    json_t *path = json_object_get(o, "path"), *rep = json_object_get(o, "replayable");
    json_t *sha = json_object_get(o, "sha256"), *hdr = json_object_get(o, "csv_header");
    json_t *mid = json_object_get(o, "mid_line"), *dl = json_object_get(o, "csv_delimiter");
    if (!json_is_object(o) || !json_is_string(path) || !json_is_boolean(rep) ||
        !json_is_string(sha) || strlen(json_string_value(sha)) > 64 ||
        (hdr && !json_is_string(hdr)) || (mid && !json_is_boolean(mid)) ||
        (dl && (!json_is_string(dl) || json_string_length(dl) != 1)))
        return s3l_error_set(err, S3L_ECORRUPT,
                             "checkpoint input %zu: expected an object with string \"path\", "
                             "boolean \"replayable\", string \"sha256\" (and string "
                             "\"csv_header\", boolean \"mid_line\", a one-byte string "
                             "\"csv_delimiter\")",
                             i);
    if (json_object_get(o, "object_source"))
        return s3l__object_input_parse(o, i, p, err);
    p->csv_delimiter = dl ? json_string_value(dl)[0] : 0;
    json_t *cmp = json_object_get(o, "compression"), *done = json_object_get(o, "raw_done");
    const char *cs = json_string_value(cmp);
    if ((cmp && (!cs || (strcmp(cs, "gzip") && strcmp(cs, "zstd")))) ||
        (done && !json_is_boolean(done)))
        return s3l_error_set(err, S3L_ECORRUPT,
                             "checkpoint input %zu: \"compression\" is not \"gzip\" or \"zstd\", "
                             "or \"raw_done\" is not a boolean",
                             i);
    p->compression = !cs ? S3L_INPUT_PLAIN : strcmp(cs, "gzip") == 0 ? S3L_INPUT_GZIP
                                                                     : S3L_INPUT_ZSTD;
    p->raw_done = json_is_true(done);
    if (cmp) {
        int rc0 = get_u64(o, "raw_size", i, &p->raw_size, err);
        if (rc0)
            return rc0;
    }
    int rc = 0;
    if (json_object_get(o, "line"))
        rc = get_u64(o, "line", i, &p->line, err);
    if (rc == 0 && json_object_get(o, "size")) {
        rc = get_u64(o, "size", i, &p->size, err);
        p->size_known = rc == 0;
    }
    p->mid_line = json_is_true(mid);
    if (rc == 0)
        rc = get_u64(o, "dev", i, &p->dev, err);
    if (rc == 0)
        rc = get_u64(o, "ino", i, &p->ino, err);
    if (rc == 0)
        rc = get_u64(o, "offset", i, &p->offset, err);
    if (rc)
        return rc;
    p->replayable = json_is_true(rep);
    strcpy(p->sha256, json_string_value(sha));
    p->path = s3l_strdup(json_string_value(path));
    p->csv_header = hdr ? s3l_strdup(json_string_value(hdr)) : NULL;
    if (!p->path || (hdr && !p->csv_header))
        return s3l_error_set(err, S3L_ENOMEM, "out of memory reading the checkpoint");
    return 0;
}

int s3l_positions_from_json(const char *json, size_t len, struct s3l_input_position **out,
                            size_t *n_out, struct s3l_error *err)
{
    *out = NULL;
    *n_out = 0;
    json_error_t jerr;
    json_t *root = json_loadb(json, len, 0, &jerr);
    if (!root)
        return s3l_error_set(err, S3L_ECORRUPT, "checkpoint input positions: %s at line %d",
                             jerr.text, jerr.line);
    json_t *ver = json_object_get(root, "version"), *arr = json_object_get(root, "inputs");
    int rc = 0;
    if (!json_is_integer(ver) || json_integer_value(ver) != 1 || !json_is_array(arr))
        rc = s3l_error_set(err, S3L_ECORRUPT,
                           "checkpoint input positions: expected {\"version\": 1, \"inputs\": "
                           "[...]}");
    size_t n = rc ? 0 : json_array_size(arr);
    struct s3l_input_position *pos = NULL;
    if (rc == 0 && n > 0) {
        pos = s3l_calloc(n, sizeof(*pos));
        if (!pos)
            rc = s3l_error_set(err, S3L_ENOMEM, "out of memory reading the checkpoint");
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = parse_position(json_array_get(arr, i), i, &pos[i], err);
    json_decref(root);
    if (rc) {
        s3l_positions_free(pos, n);
        return rc;
    }
    *out = pos;
    *n_out = n;
    return 0;
}

void s3l_positions_free(struct s3l_input_position *pos, size_t n)
{
    if (!pos)
        return;
    for (size_t i = 0; i < n; i++)
        s3l_input_position_cleanup(&pos[i]);
    s3l_free(pos);
}

const struct s3l_input_position *s3l_positions_find(const struct s3l_input_position *pos, size_t n,
                                                    const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (pos[i].path && strcmp(pos[i].path, path) == 0)
            return &pos[i];
    return NULL;
}
