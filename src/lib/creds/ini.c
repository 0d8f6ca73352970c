/*
 * creds: the INI dialect of ~/.aws/credentials and ~/.aws/config. botocore reads both with
 * Python's configparser (RawConfigParser, strict, no inline comments, default delimiters), so
 * that is the rule followed here: the same file must mean the same thing to s3land and to the
 * AWS CLI. The entries are a flat array; the files are small and read once per get.
 */
#include "creds/creds.h"

#include <ctype.h>
#include <string.h>

#include <openssl/crypto.h>

#include "util/util.h"

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* The line [a, b) with blanks cut on both sides. */
static void trim(const char **a, const char **b)
{
    while (*a < *b && blank(**a))
        (*a)++;
    while (*b > *a && blank((*b)[-1]))
        (*b)--;
}

static struct s3l__ini_entry *find(const struct s3l__ini *ini, const char *section,
                                   const char *key)
{
    for (size_t i = 0; i < ini->n; i++) {
        struct s3l__ini_entry *e = &ini->e[i];
        if (strcmp(e->section, section) == 0 &&
            (key ? e->key && strcmp(e->key, key) == 0 : e->key == NULL))
            return e;
    }
    return NULL;
}

static int add(struct s3l__ini *ini, const char *section, const char *key, size_t key_len,
               const char *value, size_t value_len)
{
    if (s3l__array_reserve(&ini->e, &ini->cap, ini->n + 1, sizeof(*ini->e), 32))
        return S3L_ENOMEM;
    struct s3l__ini_entry *e = &ini->e[ini->n];
    e->section = s3l_strdup(section);
    e->key = key ? s3l_strndup(key, key_len) : NULL;
    e->value = s3l_strndup(value ? value : "", value ? value_len : 0);
    if (!e->section || (key && !e->key) || !e->value) {
        s3l_free(e->section), s3l_free(e->key), s3l_free(e->value);
        return S3L_ENOMEM;
    }
    if (e->key)
        for (char *k = e->key; *k; k++)
            *k = (char)tolower((unsigned char)*k); /* configparser's optionxform */
    ini->n++;
    return 0;
}

/* Appends "\n" and [a, b) to the value of the last entry (a continuation line). */
static int extend(struct s3l__ini *ini, const char *a, const char *b)
{
    struct s3l__ini_entry *e = &ini->e[ini->n - 1];
    size_t old = strlen(e->value), n = (size_t)(b - a);
    char *v = s3l_malloc(old + n + 2);
    if (!v)
        return S3L_ENOMEM;
    memcpy(v, e->value, old);
    size_t at = old;
    if (old > 0)
        v[at++] = '\n';
    memcpy(v + at, a, n);
    v[at + n] = '\0';
    OPENSSL_cleanse(e->value, old);
    s3l_free(e->value);
    e->value = v;
    return 0;
}

/*
 * One line [a, b) (without its newline) in the current section (*section, owned). *key_indent:
 * the indentation of the last key's line, -1 after a section header. As configparser's _read, a
 * line indented deeper than its key's line continues the value; one indented as deep (a section
 * pasted with every line indented) is a key of its own.
 */
static int line(struct s3l__ini *ini, const char *a, const char *b, char **section,
                long *key_indent, const char *path, int no, struct s3l_error *err)
{
    const char *text = a;
    trim(&a, &b);
    if (a == b || *a == '#' || *a == ';')
        return 0; /* empty lines and full-line comments; a value continues past them */
    long indent = (long)(a - text);
    if (*key_indent >= 0 && indent > *key_indent)
        return extend(ini, a, b) ? s3l_error_set(err, S3L_ENOMEM, "out of memory") : 0;
    *key_indent = -1;
    if (*a == '[') {
        const char *close = b;
        while (close > a && close[-1] != ']')
            close--;
        if (close - a < 3)
            return s3l_error_set(err, S3L_EINVALID_CONFIG, "%s:%d: malformed section header",
                                 path, no);
        char *name = s3l_strndup(a + 1, (size_t)(close - 1 - (a + 1)));
        if (!name)
            return s3l_error_set(err, S3L_ENOMEM, "out of memory");
        s3l_free(*section);
        *section = name;
        if (find(ini, name, NULL))
            return s3l_error_set(err, S3L_EINVALID_CONFIG, "%s:%d: section [%.100s] repeated",
                                 path, no, name);
        return add(ini, name, NULL, 0, NULL, 0) ? s3l_error_set(err, S3L_ENOMEM, "oom") : 0;
    }
    const char *d = a;
    while (d < b && *d != '=' && *d != ':')
        d++;
    if (d == b || d == a)
        return s3l_error_set(err, S3L_EINVALID_CONFIG,
                             "%s:%d: expected [section] or key = value", path, no);
    if (!*section)
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "%s:%d: key before any [section]", path,
                             no);
    const char *ke = d, *va = d + 1, *vb = b;
    trim(&a, &ke);
    trim(&va, &vb);
    char key[128];
    size_t kn = (size_t)(ke - a) < sizeof(key) - 1 ? (size_t)(ke - a) : sizeof(key) - 1;
    for (size_t i = 0; i < kn; i++)
        key[i] = (char)tolower((unsigned char)a[i]);
    key[kn] = '\0';
    if (find(ini, *section, key))
        return s3l_error_set(err, S3L_EINVALID_CONFIG, "%s:%d: key %.100s repeated in [%.100s]",
                             path, no, key, *section);
    if (add(ini, *section, a, (size_t)(ke - a), va, (size_t)(vb - va)) != 0)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory");
    *key_indent = indent;
    return 0;
}

int s3l__ini_parse(const char *text, size_t len, const char *path, struct s3l__ini *ini,
                   struct s3l_error *err)
{
    memset(ini, 0, sizeof(*ini));
    char *section = NULL;
    long key_indent = -1;
    int rc = 0, no = 0;
    const char *p = text, *end = text + len;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3; /* a UTF-8 byte order mark, as editors on Windows write */
    while (rc == 0 && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *b = nl ? nl : end;
        no++;
        rc = line(ini, p, b, &section, &key_indent, path, no, err);
        p = nl ? nl + 1 : end;
    }
    s3l_free(section);
    if (rc != 0)
        s3l__ini_free(ini);
    return rc;
}

bool s3l__ini_has(const struct s3l__ini *ini, const char *section)
{
    return find(ini, section, NULL) != NULL;
}

const char *s3l__ini_get(const struct s3l__ini *ini, const char *section, const char *key)
{
    struct s3l__ini_entry *e = find(ini, section, key);
    /* configparser's [DEFAULT] gives every section the keys it lacks */
    if (!e && strcmp(section, "DEFAULT") != 0 && find(ini, section, NULL))
        e = find(ini, "DEFAULT", key);
    return e ? e->value : NULL;
}

void s3l__ini_free(struct s3l__ini *ini)
{
    for (size_t i = 0; i < ini->n; i++) {
        OPENSSL_cleanse(ini->e[i].value, strlen(ini->e[i].value));
        s3l_free(ini->e[i].section), s3l_free(ini->e[i].key), s3l_free(ini->e[i].value);
    }
    s3l_free(ini->e);
    memset(ini, 0, sizeof(*ini));
}
