/*
 * Replays a fuzz target's committed corpus under any compiler, so CI runs every target without
 * libFuzzer: `fuzz_NAME DIR` feeds each file in DIR to LLVMFuzzerTestOneInput. A corpus of fewer
 * than 50 inputs fails, so a target cannot silently lose its corpus.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            cap *= 2;
            uint8_t *p = realloc(buf, cap);
            if (!p) {
                free(buf);
                buf = NULL;
            }
            buf = p;
        }
    }
    fclose(f);
    if (!buf)
        return -1;
    /* Copy to an exact-size allocation so ASan catches reads past the end. */
    uint8_t *exact = malloc(len ? len : 1);
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    int count = 0;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
        if (replay(path) != 0) {
            closedir(d);
            return 1;
        }
        count++;
    }
    closedir(d);
    printf("replayed %d inputs from %s\n", count, argv[1]);
    if (count < 50) {
        fprintf(stderr, "corpus %s has %d inputs; at least 50 are required\n", argv[1], count);
        return 1;
    }
    return 0;
}
