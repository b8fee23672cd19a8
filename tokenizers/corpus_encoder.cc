#include "tokenizers/corpus_encoder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace accel::tok {
namespace {

bool IsAsciiAlnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The first cut position >= from in text (a line start whose first byte is an ASCII letter or
// digit), or text.size() when there is none.
size_t NextCut(std::string_view text, size_t from) {
  for (size_t p = std::max<size_t>(from, 1); p < text.size(); ++p) {
    p = text.find('\n', p - 1);
    if (p == std::string_view::npos) break;
    ++p;  // the line start
    if (p < text.size() && IsAsciiAlnum(text[p])) return p;
  }
  return text.size();
}

std::vector<uint32_t> EncodeChunk(const Tokenizer& tokenizer, std::string_view document, const Chunk& chunk,
                                  bool add_special_tokens) {
  std::vector<uint32_t> ids;
  if (add_special_tokens && chunk.first) ids = tokenizer.prefix_tokens();
  tokenizer.EncodeInto(document.substr(chunk.begin, chunk.end - chunk.begin), ids);
  if (add_special_tokens && chunk.last) {
    ids.insert(ids.end(), tokenizer.suffix_tokens().begin(), tokenizer.suffix_tokens().end());
  }
  return ids;
}

}  // namespace

std::vector<Chunk> PlanChunks(const std::vector<std::string_view>& documents, bool split_lines, size_t target_bytes) {
  std::vector<Chunk> chunks;
  target_bytes = std::max<size_t>(target_bytes, 1);
  for (size_t d = 0; d < documents.size(); ++d) {
    std::string_view text = documents[d];
    size_t begin = 0;
    do {
      size_t end = split_lines ? NextCut(text, begin + target_bytes) : text.size();
      chunks.push_back({d, begin, end, begin == 0, end == text.size()});
      begin = end;
    } while (begin < text.size());
  }
  return chunks;
}

std::vector<uint32_t> EncodeCorpus(const Tokenizer& tokenizer, const std::vector<std::string_view>& documents,
                                   const EncodeCorpusOptions& options) {
  std::vector<Chunk> chunks = PlanChunks(documents, tokenizer.SplitsAtLineStarts(), options.chunk_bytes);
  size_t total = 0;
  for (std::string_view d : documents) total += d.size();
  std::vector<std::vector<uint32_t>> results(chunks.size());
  std::atomic<size_t> next{0}, done_bytes{0}, done_chunks{0};
  std::mutex mutex;
  std::condition_variable all_done;
  auto work = [&] {
    for (size_t i = next++; i < chunks.size(); i = next++) {
      results[i] = EncodeChunk(tokenizer, documents[chunks[i].document], chunks[i], options.add_special_tokens);
      done_bytes += chunks[i].end - chunks[i].begin;
      if (++done_chunks == chunks.size()) {
        std::lock_guard<std::mutex> lock(mutex);
        all_done.notify_all();
      }
    }
  };
  int threads = std::clamp<int>(options.threads, 1, static_cast<int>(std::max<size_t>(chunks.size(), 1)));
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(work);
  if (threads == 1 || !options.progress) {
    work();
  } else {
    // The calling thread reports progress while the workers encode.
    workers.emplace_back(work);
    std::unique_lock<std::mutex> lock(mutex);
    while (done_chunks.load() < chunks.size()) {
      options.progress(done_bytes.load(), total);
      all_done.wait_for(lock, std::chrono::milliseconds(200), [&] { return done_chunks.load() == chunks.size(); });
    }
  }
  for (std::thread& w : workers) w.join();
  if (options.progress) options.progress(total, total);

  size_t count = 0;
  for (const auto& r : results) count += r.size();
  std::vector<uint32_t> ids;
  ids.reserve(count);
  for (auto& r : results) {
    ids.insert(ids.end(), r.begin(), r.end());
    std::vector<uint32_t>().swap(r);
  }
  return ids;
}

}  // namespace accel::tok
