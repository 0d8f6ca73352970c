/*
 * The rule for a CSV field delimiter as a user writes it (`s3land write --csv-delimiter`, a
 * Pipeline document's spec.sources[].csvDelimiter): one place, so that the command line and the
 * config documents accept and refuse the same texts (issue 10, item 11).
 */
#include "util/util.h"

int s3l__csv_delimiter_parse(const char *text, char *out, const char **why)
{
    *out = 0;
    *why = NULL;
    if (!text || !text[0]) {
        *why = "expected one character (such as ';', '|' or tab), got nothing";
        return S3L_EINVALID_CONFIG;
    }
    /* A tab is hard to type on a command line and in YAML: "tab" and the escape "\t" name it. */
    if (strcmp(text, "tab") == 0 || strcmp(text, "\\t") == 0) {
        *out = '\t';
        return 0;
    }
    if (text[1]) {
        *why = "expected one character (such as ';', '|', or tab written as \\t or tab), got "
               "more than one";
        return S3L_EINVALID_CONFIG;
    }
    unsigned char c = (unsigned char)text[0];
    /* RFC 4180 section 2 rules 6 and 7: the quote and the line breaks have their own meaning. */
    if (c == '"' || c == '\r' || c == '\n') {
        *why = c == '"' ? "the quote '\"' cannot separate fields (it quotes them)"
                        : "a line break cannot separate fields (it ends the row)";
        return S3L_EINVALID_CONFIG;
    }
    if (c >= 0x80) {
        *why = "expected one ASCII character, got a byte of a multi-byte character";
        return S3L_EINVALID_CONFIG;
    }
    if (c != '\t' && (c < 0x20 || c == 0x7f)) {
        *why = "expected a printable character or tab, got a control character";
        return S3L_EINVALID_CONFIG;
    }
    *out = (char)c;
    return 0;
}
