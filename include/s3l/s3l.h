/*
 * libs3land's umbrella header: everything an embedder or the s3land command uses.
 * Each header it includes also compiles alone; include just the ones you need if you prefer.
 */
#ifndef S3L_S3L_H
#define S3L_S3L_H

#include "s3l/alloc.h"
#include "s3l/config.h"
#include "s3l/counts.h"
#include "s3l/creds.h"
#include "s3l/destination.h"
#include "s3l/error.h"
#include "s3l/input.h"
#include "s3l/ndjson_sink.h"
#include "s3l/object_source.h"
#include "s3l/parquet.h"
#include "s3l/pipeline.h"
#include "s3l/pq_footer.h"
#include "s3l/row.h"
#include "s3l/s3.h"
#include "s3l/schema.h"
#include "s3l/store.h"

/* The library's version, "X.Y.Z". */
const char *s3l_version(void);

#endif
