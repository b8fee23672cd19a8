// Parity of accel's own SentencePiece BPE with the reference implementation, Debian's spm_encode
// (package sentencepiece, which scripts/install-deps.sh installs), on the fortunes, line by line (spm_encode encodes each input
// line as one text). Exits 77, which CTest reports as skipped, when spm_encode or the fortunes are
// missing. Prints the number of tokens compared.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizers/tokenizer.h"

namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string model = std::string(ACCEL_SOURCE_ROOT) + "/tests/data/tokenizers/fortunes_bpe.model";
  const std::string corpus = argc > 1 ? argv[1] : "";
  if (!std::filesystem::exists("/usr/bin/spm_encode")) {
    std::cout << "SKIP: /usr/bin/spm_encode is missing (Debian package sentencepiece; scripts/install-deps.sh)\n";
    return 77;
  }
  if (corpus.empty() || !std::filesystem::exists(corpus) || std::filesystem::file_size(corpus) == 0) {
    std::cout << "SKIP: no text to compare on (" << corpus << ")\n";
    return 77;
  }
  absl::StatusOr<std::unique_ptr<accel::tok::Tokenizer>> t = accel::tok::Tokenizer::Load(model);
  if (!t.ok()) {
    std::cerr << t.status() << "\n";
    return 1;
  }
  std::ifstream in(corpus, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::vector<std::string> lines = Lines(text.str());

  std::string command = "/usr/bin/spm_encode --model=" + model + " --output_format=id < " + corpus;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return 1;
  std::string reference;
  char buffer[65536];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) reference.append(buffer, n);
  if (::pclose(pipe) != 0) {
    std::cerr << "spm_encode failed\n";
    return 1;
  }
  std::vector<std::string> expected = Lines(reference);
  if (expected.size() != lines.size()) {
    std::cerr << "spm_encode gave " << expected.size() << " lines for " << lines.size() << "\n";
    return 1;
  }
  size_t tokens = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<uint32_t> ids = (*t)->Encode(lines[i], false);
    std::string ours;
    for (uint32_t id : ids) ours += (ours.empty() ? "" : " ") + std::to_string(id);
    if (ours != expected[i]) {
      std::cerr << "line " << i + 1 << " differs:\n  text:       " << lines[i] << "\n  accel:      " << ours
                << "\n  spm_encode: " << expected[i] << "\n";
      return 1;
    }
    tokens += ids.size();
  }
  std::cout << "sentencepiece parity: " << tokens << " tokens identical to spm_encode on " << lines.size()
            << " lines (" << text.str().size() << " bytes) of " << corpus << "\n";
  return 0;
}
