/*
 * A model pipeline for protocol tests: a deterministic input of total_rows rows (row i is
 * (i, "r<i>"), into table "t<i % tables>" -- "t0" in namespace "ns" -- and lane i % lanes),
 * read in epochs of epoch_rows and committed with the state {"next": <row index>} so a rerun
 * resumes exactly where the last commit left. The checker reads back what readers would see
 * (files listed by markers) and compares it with the model: every row exactly once.
 */
#ifndef S3L_MODEL_RUNNER_H
#define S3L_MODEL_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3l/error.h"

struct s3l_test_run {
    const char *url;
    const char *pipeline;
    unsigned lanes;
    unsigned tables;
    uint64_t file_size;
    uint64_t total_rows;
    uint64_t epoch_rows;
    bool gc;               /* run gc after opening */
    uint64_t reject_every; /* every n-th row (n > 0) is dead-lettered instead of written */
    bool serial;           /* serial commits (s3l_dest_options.serial_commit); else pipelined */
};

/* Runs (or resumes) the model pipeline to the end of its input, the last epoch's finish waited
 * for (s3l_dest_sync). 0 or the first failure. */
int s3l_test_run(const struct s3l_test_run *r, struct s3l_error *err);

/*
 * Checks the destination at url. Always: every marker's files exist with the marker's size,
 * SHA-256 and row count, no row is visible twice, and a table's schema record exists only when
 * an epoch holding its rows passed its commit point (a marker, or the pending epoch carries the
 * record). complete: also every row of the model is
 * visible and no data file lies outside a marker. Returns 0, or -1 with why filled.
 */
int s3l_test_verify(const struct s3l_test_run *r, bool complete, char *why, size_t cap);

/* Counts committed markers, data files in table directories, and staged files. */
struct s3l_test_census {
    unsigned markers;
    unsigned data_files;
    unsigned staged;
    bool pending; /* the checkpoint holds a pending epoch */
    uint64_t committed_epoch;
};
int s3l_test_census(const struct s3l_test_run *r, struct s3l_test_census *c);

#endif
