/*
 * s3land pipe's parts (cmd_pipe.c: the command, the binding, the sink and its checkpoints;
 * pipe_io.c: the state file and the input), sharing the run's state below.
 */
#ifndef S3L_CLI_PIPE_H
#define S3L_CLI_PIPE_H

#include "cli.h"

#define MAX_LINE  (16u << 20) /* the longest line (record) pipe takes */
#define MAX_SINKS 16
#define STATE_MAX (64u << 20)

/* The command line. */
struct args {
    const char *sql[MAX_SINKS], *config[MAX_SINKS];
    size_t n_sql, n_config;
    const char *state, *input;
    int64_t interval_ns;
    int64_t stdin_offset;
    struct cli_s3 s3;
    struct cli_secret_src secrets;
};

/* What the state file holds (docs/internals/sink.md, "pipe's state"). */
struct state {
    char sha[65];
    const char *factory;
    char *input; /* "-" or the input's path as given */
    uint64_t offset, checkpoint, records;
    char run[32];
    uint8_t *cmt; /* the pending committable (one sink), or NULL */
    size_t cmt_len;
};

/* One run of pipe. */
struct pipe {
    struct cli *c;
    struct args *a;
    const struct s3l_config_doc *doc;
    bool twopc;
    char *url, state_path[4096];
    struct s3l_store *store;
    struct s3l_sink *sink;
    struct state st;
    uint64_t offset, iv_records, ckpt, n_ckpts, records;
    bool begun;
    int64_t iv_start_ns;
};

struct reader {
    int fd;
    bool stream; /* stdin or a pipe: waits are bounded by poll */
    const char *name;
    char chunk[1 << 16];
    size_t pos, len;
    char *line;
    size_t line_len, line_cap;
    uint64_t line_no;
    bool eof;
    bool taken; /* the last line returned was handed out: the next call starts a new one */
};

enum { R_LINE = 1, R_END = 0, R_IDLE = 2 };

/* The n bytes at b as lowercase hex into out (2 * n + 1 bytes, NUL-terminated). */
void cli_pipe_hex(const uint8_t *b, size_t n, char *out);
/* CLOCK_MONOTONIC in ns. */
int64_t cli_pipe_now_ns(void);
/* The state file's path: --state, else $XDG_STATE_HOME/s3land/pipe-<sha>.json, else
 * ~/.local/state/s3land/pipe-<sha>.json. Returns 0 or the usage exit code. */
int cli_pipe_state_path(struct pipe *p);
/* Writes p->st to the state file, atomically (s3l_sink_state_save). 0 or the exit code. */
int cli_pipe_save_state(struct pipe *p);
/* Reads the state file into p->st (*found false when there is none); one of another factory or
 * input is refused. 0 or the exit code. */
int cli_pipe_load_state(struct pipe *p, bool *found);
/* A state file as gc --uploads reads it: the sink's store root (url: "s3://bucket" or a file://
 * URL; NULL for a state written before pipe recorded it) and the pending committable (kind
 * S3L_COMMITTABLE_EMPTY when none). */
struct cli_pipe_state_view {
    char *url; /* free() */
    uint64_t checkpoint;
    struct s3l_committable cmt;
};
/* Reads and checks the state at path whole (as cli_pipe_load_state does, and its committable
 * decoded by s3l_committable_decode). 0; or -1 with why (one clause, cap bytes) saying what is
 * wrong, v->cmt empty and v->url still set when the damaged file gave one. Free v->url. */
int cli_pipe_state_view(const char *path, struct cli_pipe_state_view *v, char *why, size_t cap);
/* Frees v's committable (not v->url). */
void cli_pipe_state_view_cleanup(struct cli_pipe_state_view *v);
/* Opens the input at the state's offset (a file: seek; stdin: the bytes before it dropped, from
 * --stdin-offset). 0 or the exit code. */
int cli_pipe_open_input(struct pipe *p, struct reader *r);
/* The next line (with its "\n"; at the end, the last bytes without one) in r->line: R_LINE,
 * R_END, R_IDLE, or -errno (-EFBIG: a line over MAX_LINE). */
int cli_pipe_next_line(struct reader *r, int timeout_ms);

#endif
