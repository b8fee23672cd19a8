// Parity of accel's own SentencePiece BPE with the reference implementation, Debian's spm_encode
// (package sentencepiece, which scripts/install-deps.sh installs), on the fortunes, line by line (spm_encode encodes each input
// line as one text), then decoding: each line's ids through accel's Decode and through
// spm_decode (--input_format=id) give the same text, which is the line itself (this model keeps
// whitespace as it is). Exits 77, which CTest reports as skipped, when spm_encode or the fortunes
// are missing. Prints the number of tokens and lines compared.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "common/utf8.h"
#include "tokenizers/tokenizer.h"

namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The standard output of a shell command; exits the test (1) when it fails.
std::string Run(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) std::exit(1);
  std::string out;
  char buffer[65536];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  if (::pclose(pipe) != 0) {
    std::cerr << "failed: " << command << "\n";
    std::exit(1);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string model = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/fortunes_bpe.model";
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

  std::string reference = Run("/usr/bin/spm_encode --model=" + model + " --output_format=id < " + corpus);
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
  // Decoding: spm_decode reads the ids spm_encode wrote, one line of ids per line of text.
  const std::string ids_file = std::filesystem::temp_directory_path() / ("accel-spm-ids-" + std::to_string(::getpid()));
  std::ofstream(ids_file, std::ios::binary) << reference;
  std::string decoded = Run("/usr/bin/spm_decode --model=" + model + " --input_format=id < " + ids_file);
  std::filesystem::remove(ids_file);
  std::vector<std::string> reference_text = Lines(decoded);
  if (reference_text.size() != lines.size()) {
    std::cerr << "spm_decode gave " << reference_text.size() << " lines for " << lines.size() << "\n";
    return 1;
  }
  size_t identical_to_input = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string ours = (*t)->Decode((*t)->Encode(lines[i], false));
    if (ours != reference_text[i]) {
      std::cerr << "line " << i + 1 << " decodes differently:\n  text:       " << lines[i] << "\n  accel:      " << ours
                << "\n  spm_decode: " << reference_text[i] << "\n";
      return 1;
    }
    identical_to_input += ours == accel::ReplaceInvalidUtf8(lines[i]);
  }
  if (identical_to_input != lines.size()) {
    std::cerr << "decode(encode(line)) differs from the line on " << lines.size() - identical_to_input << " lines\n";
    return 1;
  }
  std::cout << "sentencepiece decode parity: " << lines.size() << " lines decoded identically to spm_decode, each "
            << "equal to its line\n";
  std::cout << "sentencepiece parity: " << tokens << " tokens identical to spm_encode on " << lines.size()
            << " lines (" << text.str().size() << " bytes) of " << corpus << "\n";
  return 0;
}
