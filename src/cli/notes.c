/*
 * Notes from the library that are not failures (include/s3l/s3.h, s3l_s3_set_note_handler: a
 * bucket followed into its region). Printed as "note: MESSAGE" on stderr, or with --json as
 * {"event": "note", "message"} on stdout; --quiet drops them. The library says each once.
 */
#include <stdio.h>

#include <jansson.h>

#include "cli.h"
#include "s3l/s3.h"

static void on_note(void *ctx, const char *message)
{
    const struct cli *c = ctx;
    if (c->json)
        cli_emit_json(json_pack("{s:s, s:s}", "event", "note", "message", message));
    else if (!c->quiet)
        fprintf(stderr, "note: %s\n", message);
}

void cli_notes_init(struct cli *c)
{
    s3l_s3_set_note_handler(on_note, c);
}
