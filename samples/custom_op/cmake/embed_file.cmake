# cmake -DINPUT=<file> -DOUTPUT=<file.c> -DSYMBOL=<name> -P embed_file.cmake
# Writes <file.c> defining `const unsigned char NAME[]` and `const size_t NAME_size`
# with the bytes of <file>, so the op library carries its kernel source and
# prebuilt images inside itself (no files to lose beside it).
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x[0-9a-f][0-9a-f],){16}" "\\0\n  " bytes "${bytes}")
file(WRITE "${OUTPUT}"
  "#include <stddef.h>\n"
  "const unsigned char ${SYMBOL}[] = {\n  ${bytes}0x00};\n"
  "const size_t ${SYMBOL}_size = ${size};\n")
