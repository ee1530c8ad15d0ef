# Writes a file's bytes as a C++ array, so that ddscript carries its report's
# script and style sheet without reading anything at run time.
#   cmake -DIN=file -DOUT=file.inc -DNAME=Symbol -P EmbedFile.cmake
# Defines: static const char NAME[] = {...bytes..., 0};
file(READ "${IN}" HEX HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," BYTES "${HEX}")
# One line per 32 bytes keeps the generated file readable in an editor.
string(REGEX REPLACE "(('\\\\x[0-9a-f][0-9a-f]',){32})" "\\1\n" BYTES "${BYTES}")
file(WRITE "${OUT}.tmp"
  "// Generated from ${IN} by cmake/EmbedFile.cmake; do not edit.\n"
  "static const char ${NAME}[] = {\n${BYTES}0};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
