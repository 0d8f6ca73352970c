/* The at_least_once test source kind (least_once_source.c). */
#ifndef S3L_TEST_LEAST_ONCE_SOURCE_H
#define S3L_TEST_LEAST_ONCE_SOURCE_H

#include "s3l/pipeline.h"

#define S3L_TEST_LEAST_ONCE_KIND "test-at-least-once"
/* The record member that holds a record's source position. */
#define S3L_TEST_LEAST_ONCE_POSITION "pos"

/* Registers the kind (once; again is a no-op). 0, or S3L_ENOMEM. */
int s3l_test_least_once_register(void);

#endif
