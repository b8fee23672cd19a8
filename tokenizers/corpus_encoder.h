// Encoding a text corpus (a list of documents) into one token stream on several threads. Each
// document is encoded with special tokens (the tokenizer's BOS/EOS, if any) around it; large
// documents are cut at line starts (Tokenizer::SplitsAtLineStarts) into chunks that threads encode
// independently, so the stream is the same for every thread count.
#ifndef ACCEL_TOKENIZERS_CORPUS_ENCODER_H_
#define ACCEL_TOKENIZERS_CORPUS_ENCODER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizers/tokenizer.h"

namespace accel::tok {

// A part [begin, end) of document `document`; `first`/`last` say whether it starts/ends it.
struct Chunk {
  size_t document = 0;
  size_t begin = 0;
  size_t end = 0;
  bool first = true;
  bool last = true;
};

// Cuts every document into chunks of about `target_bytes`: with `split_lines`, at the first
// position at or after each multiple of target_bytes where a line starts with an ASCII letter or
// digit; otherwise one chunk per document. Empty documents give one empty chunk.
std::vector<Chunk> PlanChunks(const std::vector<std::string_view>& documents, bool split_lines, size_t target_bytes);

struct EncodeCorpusOptions {
  int threads = 1;                     // worker threads (at least 1)
  size_t chunk_bytes = size_t{1} << 20;
  bool add_special_tokens = true;      // prefix/suffix tokens around each document
  // Called from the calling thread with (bytes encoded so far, total bytes), a few times a second
  // and once at the end; may be empty.
  std::function<void(size_t, size_t)> progress;
};

// The concatenated ids of all documents, in order.
std::vector<uint32_t> EncodeCorpus(const Tokenizer& tokenizer, const std::vector<std::string_view>& documents,
                                   const EncodeCorpusOptions& options);

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_CORPUS_ENCODER_H_
