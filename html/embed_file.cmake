# cmake -DINPUT=file -DOUTPUT=file.cc -DSYMBOL=Name -P embed_file.cmake
# Writes a C++ source defining `std::string_view accel::html::SYMBOL()` that returns INPUT's bytes,
# as one raw string literal (the compiler copies the bytes; no hex dump to parse). Run at build
# time, so editing INPUT rebuilds only this source.
file(READ "${INPUT}" content)
set(delimiter "accel_embed")
string(FIND "${content}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delimiter}\"; pick another")
endif()
file(WRITE "${OUTPUT}.tmp"
     "// Generated from ${INPUT} by html/embed_file.cmake. Do not edit.\n"
     "#include <string_view>\n"
     "namespace accel::html {\n"
     "std::string_view ${SYMBOL}() {\n"
     "  static constexpr char kBytes[] = R\"${delimiter}(")
file(APPEND "${OUTPUT}.tmp" "${content}")
file(APPEND "${OUTPUT}.tmp" ")${delimiter}\";\n  return {kBytes, sizeof kBytes - 1};\n}\n}  // namespace accel::html\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
