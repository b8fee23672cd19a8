#include "cli/tokenize_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/progress_bar.h"
#include "common/exit_codes.h"
#include "data/token_file.h"
#include "tokenizers/corpus_encoder.h"
#include "data/text_corpus.h"
#include "tokenizers/tokenizer.h"

namespace accel::cli {
namespace {

int Fail(std::ostream& err, const std::string& message, int code) {
  err << "accel tokenize: " << message << "\n";
  return code;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

}  // namespace

int RunTokenizeCommand(const TokenizeOptions& options, std::ostream& out, std::ostream& err) {
  if (options.dtype != "auto" && options.dtype != "uint16" && options.dtype != "uint32") {
    return Fail(err, "--dtype must be auto, uint16 or uint32, got '" + options.dtype + "'", kExitUsage);
  }
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<tok::Tokenizer>> tokenizer = tok::Tokenizer::Load(options.tokenizer);
  if (!tokenizer.ok()) return Fail(err, std::string(tokenizer.status().message()), kExitInvalid);
  const bool fits16 = (*tokenizer)->id_limit() <= 0x10000;
  if (options.dtype == "uint16" && !fits16) {
    return Fail(err, "the tokenizer has " + std::to_string((*tokenizer)->id_limit()) +
                         " ids, which do not fit uint16; use --dtype uint32 (or auto)", kExitUsage);
  }
  const exec::TokenWidth width =
      options.dtype == "uint32" || (options.dtype == "auto" && !fits16) ? exec::TokenWidth::kUint32 : exec::TokenWidth::kUint16;

  const double load_seconds = SecondsSince(start);

  absl::StatusOr<std::vector<std::string>> documents = tok::ReadTextDocuments(options.input);
  if (!documents.ok()) {
    return Fail(err, std::string(documents.status().message()),
                documents.status().code() == absl::StatusCode::kInternal ? kExitRuntime : kExitInvalid);
  }
  std::vector<std::string_view> views(documents->begin(), documents->end());
  size_t bytes = 0;
  for (std::string_view d : views) bytes += d.size();

  ProgressBar bar(err, "tokenize", options.progress);
  tok::EncodeCorpusOptions encode;
  encode.threads = options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  encode.add_special_tokens = options.special_tokens;
  // About 8 chunks per thread (at most 1 MiB, at least 64 KiB), so threads finish together.
  encode.chunk_bytes = std::clamp<size_t>(bytes / (static_cast<size_t>(encode.threads) * 8), size_t{64} << 10, size_t{1} << 20);
  encode.progress = [&bar](size_t done, size_t total) { bar.Update(done, total); };
  auto encode_start = std::chrono::steady_clock::now();
  std::vector<uint32_t> ids = tok::EncodeCorpus(**tokenizer, views, encode);
  const double encode_seconds = SecondsSince(encode_start);
  bar.Finish();
  if (ids.empty()) return Fail(err, "the input encodes to no tokens: " + options.input, kExitInvalid);

  absl::Status written = exec::WriteTokenFile(options.output, ids, width);
  if (!written.ok()) return Fail(err, std::string(written.message()), kExitRuntime);
  out << "tokenized " << documents->size() << (documents->size() == 1 ? " file (" : " files (") << bytes
      << " bytes) into " << ids.size() << " tokens (" << (width == exec::TokenWidth::kUint16 ? "uint16" : "uint32")
      << ") in " << Format("%.2f", SecondsSince(start)) << " s (tokenizer load " << Format("%.2f", load_seconds)
      << " s, encoding " << Format("%.2f", static_cast<double>(bytes) / 1e6 / encode_seconds)
      << " MB/s on " << encode.threads << (encode.threads == 1 ? " thread" : " threads") << "): " << options.output
      << "\n";
  return kExitOk;
}

void RegisterTokenizeCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* sub = app.add_subcommand(
      "tokenize", "Encode text files with a tokenizer into a token file (nanoGPT .bin layout) for training");
  sub->add_option("--tokenizer", options->tokenizer,
                  "Hugging Face tokenizer.json (BPE) or SentencePiece tokenizer.model")->required();
  sub->add_option("--input", options->input, "Text file, or directory searched for text files (one document each)")
      ->required();
  sub->add_option("-o,--output", options->output, "Token file to write")->required();
  sub->add_option("--dtype", options->dtype, "Token width on disk: auto (uint16 when the ids fit), uint16, uint32")
      ->capture_default_str();
  sub->add_option("--threads", options->threads, "Encoding threads (default: one per hardware thread)");
  sub->add_flag("!--no-special-tokens", options->special_tokens,
                "Do not put the tokenizer's BOS/EOS tokens around each document");
  sub->callback([options, &context] {
    TokenizeOptions run = *options;
    run.progress = context.err == &std::cerr && StderrIsTerminal();
    context.exit_code = RunTokenizeCommand(run, *context.out, *context.err);
  });
}

}  // namespace accel::cli
