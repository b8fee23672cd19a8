// `accel tokenize`, run in-process: the token file it writes is what the executor reads.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/progress_bar.h"
#include "cli/tokenize_command.h"
#include "common/exit_codes.h"
#include "common/remove_tree.h"
#include "data/token_file.h"
#include "tokenizers/tokenizer.h"

namespace accel::cli {
namespace {

namespace fs = std::filesystem;

std::string Data(const std::string& name) { return std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/" + name; }

struct Run {
  int code;
  std::string out;
  std::string err;
};

Run Tokenize(TokenizeOptions options) {
  std::ostringstream out, err;
  int code = RunTokenizeCommand(options, out, err);
  return {code, out.str(), err.str()};
}

TEST_CASE("accel tokenize writes the executor's token file") {
  fs::path dir = fs::temp_directory_path() / ("accel-tokenize-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  TokenizeOptions options;
  options.tokenizer = Data("tiny_bpe.json");
  options.input = Data("fortunes");
  options.output = (dir / "data.bin").string();
  options.threads = 3;
  Run run = Tokenize(options);
  INFO(run.err);
  REQUIRE(run.code == kExitOk);
  CHECK(run.out.rfind("tokenized 3 files (47522 bytes) into ", 0) == 0);
  CHECK(run.out.find(" tokens (uint16) in ") != std::string::npos);
  CHECK(run.out.find("on 3 threads): " + options.output) != std::string::npos);

  // Files in sorted order (debian, fortunes, goedel), each wrapped in <s> ... </s>.
  absl::StatusOr<std::unique_ptr<tok::Tokenizer>> t = tok::Tokenizer::Load(options.tokenizer);
  REQUIRE(t.ok());
  std::vector<uint32_t> expected;
  for (const char* name : {"debian", "fortunes", "goedel"}) {
    std::ifstream in(Data(std::string("fortunes/") + name), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::vector<uint32_t> ids = (*t)->Encode(text.str());
    expected.insert(expected.end(), ids.begin(), ids.end());
  }
  absl::StatusOr<std::vector<uint32_t>> written = exec::ReadTokenFile(options.output, exec::TokenWidth::kUint16);
  REQUIRE(written.ok());
  CHECK(*written == expected);

  options.dtype = "uint32";
  options.threads = 1;
  REQUIRE(Tokenize(options).code == kExitOk);
  written = exec::ReadTokenFile(options.output, exec::TokenWidth::kUint32);
  REQUIRE(written.ok());
  CHECK(*written == expected);
  std::error_code ec;
  RemoveTree(dir.string(), ec);
}

TEST_CASE("progress bar") {
  std::ostringstream out;
  ProgressBar bar(out, "tokenize", true);
  bar.Update(50, 200);
  bar.Update(200, 200);
  bar.Finish();
  std::string text = out.str();
  CHECK(text.rfind("\rtokenize [#######-----------------------]  25% ", 0) == 0);
  CHECK(text.find("\rtokenize [##############################] 100% ") != std::string::npos);
  CHECK(text.back() == '\n');
  std::ostringstream quiet;
  ProgressBar off(quiet, "tokenize", false);
  off.Update(1, 2);
  off.Finish();
  CHECK(quiet.str().empty());
}

TEST_CASE("accel tokenize errors") {
  TokenizeOptions options;
  options.tokenizer = Data("tiny_bpe.json");
  options.input = Data("fortunes");
  options.output = "/nonexistent-dir/data.bin";
  options.dtype = "int8";
  Run run = Tokenize(options);
  CHECK(run.code == kExitUsage);
  CHECK(run.err == "accel tokenize: --dtype must be auto, uint16 or uint32, got 'int8'\n");

  options.dtype = "auto";
  run = Tokenize(options);
  CHECK(run.code == kExitRuntime);
  CHECK(run.err == "accel tokenize: cannot write token file: /nonexistent-dir/data.bin\n");

  options.input = "/nonexistent-input";
  run = Tokenize(options);
  CHECK(run.code == kExitInvalid);
  CHECK(run.err == "accel tokenize: data path does not exist: /nonexistent-input\n");

  options.tokenizer = "/nonexistent/tokenizer.json";
  run = Tokenize(options);
  CHECK(run.code == kExitInvalid);
  CHECK(run.err == "accel tokenize: tokenizer file does not exist: /nonexistent/tokenizer.json\n");
}

}  // namespace
}  // namespace accel::cli
