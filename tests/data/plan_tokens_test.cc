#include "data/plan_tokens.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <unistd.h>

#include "cli/tokenize_command.h"
#include "data/token_file.h"

namespace accel::exec {
namespace {
namespace fs = std::filesystem;

const std::string kData = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/";

ir::Data TextData(ir::TokenizerKind kind, const std::string& tokenizer) {
  ir::Data data;
  data.set_path(kData + "fortunes");
  data.set_format(ir::DATA_FORMAT_TEXT);
  data.set_tokenizer(kind);
  data.set_tokenizer_path(tokenizer);
  return data;
}

// What `accel tokenize --tokenizer TOKENIZER --input PATH -o OUT --dtype uint32` writes.
std::vector<uint32_t> AccelTokenize(const std::string& tokenizer, const std::string& input) {
  const fs::path out = fs::temp_directory_path() / ("accel_plan_tokens_" + std::to_string(::getpid()) + ".bin");
  cli::TokenizeOptions options;
  options.tokenizer = tokenizer;
  options.input = input;
  options.output = out.string();
  options.dtype = "uint32";
  options.threads = 2;
  std::ostringstream log;
  REQUIRE(cli::RunTokenizeCommand(options, log, log) == 0);
  absl::StatusOr<std::vector<uint32_t>> ids = ReadTokenFile(out.string(), TokenWidth::kUint32);
  fs::remove(out);
  REQUIRE(ids.ok());
  return *ids;
}

TEST_CASE("text with a tokenizer file gives the ids accel tokenize writes", "[data][tokenizer]") {
  struct Case {
    ir::TokenizerKind kind;
    std::string file;
    uint32_t bos;
  };
  // tiny_bpe.json: TemplateProcessing <s> A </s> (274, 275); fortunes_bpe.model: BOS 1, no EOS.
  for (const Case& c : {Case{ir::TOKENIZER_KIND_HUGGINGFACE, kData + "tiny_bpe.json", 274},
                        Case{ir::TOKENIZER_KIND_SENTENCEPIECE, kData + "fortunes_bpe.model", 1}}) {
    INFO(c.file);
    const std::vector<uint32_t> expected = AccelTokenize(c.file, kData + "fortunes");
    for (int threads : {1, 3}) {
      absl::StatusOr<std::vector<uint32_t>> ids = LoadPlanTokens(TextData(c.kind, c.file), 1000, threads);
      REQUIRE(ids.ok());
      CHECK(*ids == expected);
    }
    // One BOS per text file (debian, fortunes, goedel), the first one at the start.
    REQUIRE(!expected.empty());
    CHECK(expected.front() == c.bos);
    CHECK(std::count(expected.begin(), expected.end(), c.bos) == 3);
  }
}

TEST_CASE("ids beyond the vocabulary and an unloadable tokenizer are errors", "[data][tokenizer]") {
  absl::StatusOr<std::vector<uint32_t>> small =
      LoadPlanTokens(TextData(ir::TOKENIZER_KIND_HUGGINGFACE, kData + "tiny_bpe.json"), 274, 1);
  CHECK(small.status().message() == kData + "fortunes: token 274 at position 0 is outside the model's vocabulary of 274");
  absl::StatusOr<std::vector<uint32_t>> missing =
      LoadPlanTokens(TextData(ir::TOKENIZER_KIND_SENTENCEPIECE, kData + "missing.model"), 1000, 1);
  CHECK(missing.status().message() == "tokenizer file does not exist: " + kData + "missing.model");
  // A kind this executor does not know (a newer plan writer's).
  CHECK(LoadPlanTokens(TextData(static_cast<ir::TokenizerKind>(9), ""), 1000, 1).status().message() ==
        "tokenizer kind is unspecified: expected bytes, huggingface or sentencepiece");
}

TEST_CASE("bytes and an unspecified tokenizer kind encode each byte", "[data][tokenizer]") {
  for (ir::TokenizerKind kind : {ir::TOKENIZER_KIND_BYTES, ir::TOKENIZER_KIND_UNSPECIFIED}) {
    ir::Data data = TextData(kind, "");
    data.set_path(kData + "fortunes/goedel");
    absl::StatusOr<std::vector<uint32_t>> ids = LoadPlanTokens(data, 256, 1);
    REQUIRE(ids.ok());
    CHECK(static_cast<int64_t>(ids->size()) == static_cast<int64_t>(fs::file_size(data.path())));
  }
}

}  // namespace
}  // namespace accel::exec
