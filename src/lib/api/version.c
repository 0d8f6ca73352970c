/*
 * The library's version string, set by the build (CMake's project version).
 */
#include "s3l/s3l.h"

#ifndef S3L_VERSION
#define S3L_VERSION "0.0.0"
#endif

const char *s3l_version(void)
{
    return S3L_VERSION;
}
