/*
 * util: a small tree of an XML answer, built with expat (S3's answers, src/lib/s3/xml.c; STS's,
 * src/lib/creds/sts.c). Element names lose their namespace, leaf text is kept. Hostile input is
 * bounded: no DOCTYPE (so no entities), depth 32, 1,000,000 elements; the callers cap the
 * document's size before it gets here. Moved here from src/lib/s3/xml.c so that creds may use it
 * (creds may not include s3).
 */
#include <expat.h>
#include <openssl/crypto.h>
#include <stdio.h>

#include "util/util.h"

#define MAX_DEPTH 32
#define MAX_NODES 1000000

struct parser {
    XML_Parser xp;
    struct s3l__xml_doc *doc;
    struct s3l__xml_node *stack[MAX_DEPTH];
    int depth;
    size_t nodes;
    struct s3l_buf text;
    int rc;
    const char *why;
};

static void stop(struct parser *p, int rc, const char *why)
{
    if (p->rc == 0) {
        p->rc = rc;
        p->why = why;
    }
    XML_StopParser(p->xp, XML_FALSE);
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    (void)attrs;
    struct parser *p = ud;
    if (p->rc != 0)
        return;
    if (p->depth >= MAX_DEPTH || ++p->nodes > MAX_NODES) {
        stop(p, S3L_ECORRUPT, "XML nested too deep or too many elements");
        return;
    }
    const char *local = strrchr(name, '|'); /* namespace separator set at create */
    local = local ? local + 1 : name;
    struct s3l__xml_node *n = s3l_arena_alloc(&p->doc->arena, sizeof(*n));
    char *nm = n ? s3l_arena_strndup(&p->doc->arena, local, strlen(local)) : NULL;
    if (!nm) {
        stop(p, S3L_ENOMEM, "out of memory");
        return;
    }
    memset(n, 0, sizeof(*n));
    n->name = nm;
    n->text = "";
    if (p->depth == 0) {
        if (p->doc->root) {
            stop(p, S3L_ECORRUPT, "XML has two root elements");
            return;
        }
        p->doc->root = n;
    } else {
        struct s3l__xml_node *parent = p->stack[p->depth - 1];
        if (parent->last_child)
            parent->last_child->next = n;
        else
            parent->child = n;
        parent->last_child = n;
    }
    p->stack[p->depth++] = n;
    s3l_buf_reset(&p->text);
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    (void)name;
    struct parser *p = ud;
    if (p->rc != 0 || p->depth == 0)
        return;
    struct s3l__xml_node *n = p->stack[--p->depth];
    if (!n->child && p->text.len > 0) {
        char *t = s3l_arena_strndup(&p->doc->arena, (const char *)p->text.ptr, p->text.len);
        if (!t) {
            stop(p, S3L_ENOMEM, "out of memory");
            return;
        }
        n->text = t;
    }
    s3l_buf_reset(&p->text);
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    struct parser *p = ud;
    if (p->rc != 0)
        return;
    if (s3l_buf_append(&p->text, s, (size_t)len) != 0)
        stop(p, S3L_ENOMEM, "out of memory");
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset)
{
    (void)name, (void)sysid, (void)pubid, (void)has_internal_subset;
    stop(ud, S3L_ECORRUPT, "XML with a DOCTYPE is refused");
}

int s3l__xml_parse(struct s3l__xml_doc *doc, const void *data, size_t len, struct s3l_error *err)
{
    memset(doc, 0, sizeof(*doc));
    s3l_arena_init(&doc->arena, 16384);
    if (len > (size_t)INT32_MAX)
        return s3l_error_set(err, S3L_ETOO_LARGE, "XML answer of %zu bytes is too large", len);
    struct parser p = {0};
    p.doc = doc;
    s3l_buf_init(&p.text, len + 1);
    p.xp = XML_ParserCreateNS(NULL, '|');
    if (!p.xp)
        return s3l_error_set(err, S3L_ENOMEM, "out of memory creating the XML parser");
    XML_SetUserData(p.xp, &p);
    XML_SetElementHandler(p.xp, on_start, on_end);
    XML_SetCharacterDataHandler(p.xp, on_text);
    XML_SetStartDoctypeDeclHandler(p.xp, on_doctype);
    enum XML_Status st = XML_Parse(p.xp, data, (int)len, XML_TRUE);
    int rc = p.rc;
    if (rc == 0 && st != XML_STATUS_OK)
        rc = s3l_error_set(err, S3L_ECORRUPT, "answer is not XML: %s at line %lu, column %lu",
                           XML_ErrorString(XML_GetErrorCode(p.xp)),
                           (unsigned long)XML_GetCurrentLineNumber(p.xp),
                           (unsigned long)XML_GetCurrentColumnNumber(p.xp));
    else if (rc != 0)
        s3l_error_set(err, rc, "%s", p.why);
    else if (!doc->root)
        rc = s3l_error_set(err, S3L_ECORRUPT, "answer is an empty XML document");
    XML_ParserFree(p.xp);
    OPENSSL_cleanse(p.text.ptr, p.text.cap); /* an STS answer's text holds secrets */
    s3l_buf_free(&p.text);
    return rc;
}

void s3l__xml_doc_wipe(struct s3l__xml_doc *doc)
{
    s3l_arena_wipe(&doc->arena);
}

void s3l__xml_doc_free(struct s3l__xml_doc *doc)
{
    s3l_arena_free(&doc->arena);
    doc->root = NULL;
}

const struct s3l__xml_node *s3l__xml_child(const struct s3l__xml_node *n, const char *name)
{
    for (const struct s3l__xml_node *c = n ? n->child : NULL; c; c = c->next)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

const char *s3l__xml_text(const struct s3l__xml_node *n, const char *name)
{
    const struct s3l__xml_node *c = s3l__xml_child(n, name);
    return c ? c->text : NULL;
}

