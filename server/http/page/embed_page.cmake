# Writes OUTPUT: a C++ source defining fanyi::WebPage() over the bytes of
# INPUT, so that the page is built into fanyi-server (no files to ship, no
# CDN). Run by server/CMakeLists.txt whenever INPUT changes.
file(READ "${INPUT}" content HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${content}")
file(WRITE "${OUTPUT}"
  "// Generated from server/http/page/index.html by embed_page.cmake.\n"
  "#include \"server/http/web_page.h\"\n\n"
  "namespace fanyi {\nnamespace {\n\n"
  "constexpr unsigned char kPage[] = {${bytes}};\n\n"
  "}  // namespace\n\n"
  "std::string_view WebPage() {\n"
  "  return {reinterpret_cast<const char*>(kPage), sizeof(kPage)};\n"
  "}\n\n"
  "}  // namespace fanyi\n")
