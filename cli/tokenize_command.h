#ifndef ACCEL_CLI_TOKENIZE_COMMAND_H_
#define ACCEL_CLI_TOKENIZE_COMMAND_H_

#include <ostream>
#include <string>

#include "cli/app.h"

namespace accel::cli {

// `accel tokenize --tokenizer FILE --input PATH -o OUT [--dtype auto|uint16|uint32] [--threads N]`.
struct TokenizeOptions {
  std::string tokenizer;      // tokenizer.json or a SentencePiece tokenizer.model
  std::string input;          // a text file, or a directory walked for text files (exec::ListTextFiles)
  std::string output;         // the token file (nanoGPT .bin layout, exec::WriteTokenFile)
  std::string dtype = "auto"; // auto: uint16 when every id fits, else uint32
  int threads = 0;            // 0: one per hardware thread
  bool special_tokens = true; // BOS/EOS (as the tokenizer defines them) around each file
  bool progress = false;      // draw a progress bar on err
};

// Encodes every input file as one document (tok::EncodeCorpus) and writes the ids, then prints
// "tokenized N files (B bytes) into T tokens (DTYPE) in S s (tokenizer load L s, encoding R MB/s on
// K threads): OUT" to out. Errors, on err
// as "accel tokenize: MESSAGE": kExitInvalid for an unreadable or malformed tokenizer or input,
// kExitUsage for an unknown dtype or a vocabulary that does not fit uint16 when asked for,
// kExitRuntime when the output cannot be written.
int RunTokenizeCommand(const TokenizeOptions& options, std::ostream& out, std::ostream& err);

// Registers `tokenize` on the app (a CommandRegistrar).
void RegisterTokenizeCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_TOKENIZE_COMMAND_H_
