/*
 * Fuzz target for the S3 XML answers: every parser of src/lib/s3/xml.c gets the same bytes, as
 * a hostile or broken store could send them. They must never crash, leak or read out of bounds;
 * whatever they return must be freeable. Built with libFuzzer under clang (S3L_FUZZ), otherwise
 * replayed over tests/fuzz/corpus/s3_xml/ by CTest.
 */
#include <stddef.h>
#include <stdint.h>

#include "s3/s3_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct s3l_error err = {0};
    struct s3l__s3_error_body e;
    (void)s3l__xml_error(data, size, &e);

    struct s3l_s3_list_page lp;
    if (s3l__xml_list_objects(data, size, &lp, &err) == 0)
        s3l_s3_list_page_free(&lp);
    char *id = NULL;
    s3l_error_clear(&err);
    if (s3l__xml_initiate(data, size, &id, &err) == 0)
        s3l_free(id);
    char etag[S3L_S3_ETAG_MAX];
    int64_t mt;
    s3l_error_clear(&err);
    (void)s3l__xml_complete(data, size, etag, &err);
    s3l_error_clear(&err);
    (void)s3l__xml_copy_result(data, size, etag, &mt, &err);
    struct s3l_s3_parts_page pp;
    s3l_error_clear(&err);
    if (s3l__xml_list_parts(data, size, &pp, &err) == 0)
        s3l_s3_parts_page_free(&pp);
    struct s3l_s3_uploads_page up;
    s3l_error_clear(&err);
    if (s3l__xml_list_uploads(data, size, &up, &err) == 0)
        s3l_s3_uploads_page_free(&up);
    size_t n;
    s3l_error_clear(&err);
    (void)s3l__xml_delete_result(data, size, &n, &e, &err);
    return 0;
}
