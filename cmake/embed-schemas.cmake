# Writes OUT, a C file holding the JSON Schemas of DIR (destination, pipeline, sink) byte for byte
# as NUL-terminated arrays, so `s3land config-schema` and the validator work from any directory.
# Run by the build (CMakeLists.txt) whenever a schema changes: cmake -DDIR=... -DOUT=... -P this.
set(body "/* Generated from the schemas/ folder by cmake/embed-schemas.cmake: do not edit. */\n")
string(APPEND body "#include <stddef.h>\n\n")
foreach(kind destination pipeline sink)
  file(READ ${DIR}/${kind}.schema.json hex HEX)
  string(LENGTH "${hex}" hexlen)
  math(EXPR len "${hexlen} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n    " bytes "${bytes}")
  string(APPEND body "extern const char s3l__config_schema_${kind}[];\n")
  string(APPEND body "extern const size_t s3l__config_schema_${kind}_len;\n")
  string(APPEND body "const char s3l__config_schema_${kind}[] = {\n    ${bytes}0x00};\n")
  string(APPEND body "const size_t s3l__config_schema_${kind}_len = ${len};\n\n")
endforeach()
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
