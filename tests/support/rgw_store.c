/*
 * The test S3 store for C tests (rgw_store.h): one copy of starting, joining and stopping the
 * RGW that tests/stores/ scripts manage, shared by the integration, crash and fault suites.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rgw_store.h"

static char rgw_dir[512];
static bool started_here;

static const char *source_dir(void)
{
    const char *src = getenv("S3L_SOURCE_DIR");
    return src ? src : ".";
}

/* Sets each NAME=VALUE or `export NAME=VALUE` line of path in the environment. */
static int load_env(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "rgw_store: cannot read %s\n", path);
        return -1;
    }
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = 0;
        char *name = strncmp(line, "export ", 7) == 0 ? line + 7 : line;
        char *eq = strchr(name, '=');
        if (!eq)
            continue;
        *eq = 0;
        setenv(name, eq + 1, 1);
    }
    fclose(f);
    return 0;
}

int s3l_test_rgw_start(const char *tag, const char *start_env)
{
    const char *env = getenv("S3L_RGW_ENV");
    char path[1024];
    if (!env) {
        snprintf(rgw_dir, sizeof(rgw_dir), "/tmp/s3land-rgw-%s.%d", tag, (int)getpid());
        char cmd[2048];
        snprintf(cmd, sizeof(cmd), "RGW_DIR=%s %s %s/tests/stores/start-rgw.sh >/dev/null",
                 rgw_dir, start_env ? start_env : "", source_dir());
        if (system(cmd) != 0)
            return -1;
        started_here = true;
        snprintf(path, sizeof(path), "%s/env", rgw_dir);
        env = path;
    }
    return load_env(env);
}

int s3l_test_rgw_stop(void)
{
    if (!started_here)
        return 0;
    started_here = false;
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "%s/tests/stores/stop-rgw.sh %s", source_dir(), rgw_dir);
    return system(cmd) == 0 ? 0 : -1;
}

int s3l_test_rgw_use(char *bucket, size_t cap)
{
    const char *b = getenv("RGW_BUCKET"), *ep = getenv("RGW_ENDPOINT");
    if (!b || !ep || snprintf(bucket, cap, "%s", b) >= (int)cap)
        return -1;
    setenv("AWS_ENDPOINT_URL", ep, 1);
    unsetenv("AWS_ENDPOINT_URL_S3");
    return 0;
}
