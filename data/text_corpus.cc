#include "data/text_corpus.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>

#include "data/text_source.h"
#include "tokenizers/corpus_encoder.h"

namespace accel::tok {

absl::StatusOr<std::vector<std::string>> ReadTextDocuments(const std::string& path) {
  absl::StatusOr<std::vector<std::string>> files = exec::ListTextFiles(path);
  if (!files.ok()) return files.status();
  std::vector<std::string> documents;
  for (const std::string& file : *files) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (!in) return absl::InternalError("cannot read data file: " + file);
    documents.push_back(std::move(buffer).str());
  }
  return documents;
}

absl::StatusOr<std::vector<uint32_t>> EncodeTextPath(const Tokenizer& tokenizer, const std::string& path,
                                                     int threads, bool add_special_tokens) {
  absl::StatusOr<std::vector<std::string>> documents = ReadTextDocuments(path);
  if (!documents.ok()) return documents.status();
  std::vector<std::string_view> views(documents->begin(), documents->end());
  size_t bytes = 0;
  for (std::string_view d : views) bytes += d.size();
  EncodeCorpusOptions options;
  options.threads = std::max(1, threads);
  options.add_special_tokens = add_special_tokens;
  // About 8 chunks per thread (at most 1 MiB, at least 64 KiB), so threads finish together.
  options.chunk_bytes = std::clamp<size_t>(bytes / (static_cast<size_t>(options.threads) * 8), size_t{64} << 10,
                                           size_t{1} << 20);
  std::vector<uint32_t> ids = EncodeCorpus(tokenizer, views, options);
  if (ids.empty()) return absl::InvalidArgumentError("the input encodes to no tokens: " + path);
  return ids;
}

}  // namespace accel::tok
