// What the worker's text sample (training.sample_tokens, printed after training) starts from and
// how its sampled ids are shown, for each kind of plan tokenizer. Torch-free: the worker draws the
// ids (executor/worker.cc SampleText); these functions only choose the context and render text.
#ifndef ACCEL_DATA_SAMPLE_TEXT_H_
#define ACCEL_DATA_SAMPLE_TEXT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tokenizers/tokenizer.h"

namespace accel::exec {

// The ids sampling starts from: for bytes (tokenizer nullptr) a newline byte, {'\n'}; for a
// tokenizer file, its prefix tokens (BOS, how every training document starts), or the ids of
// "\n" when it has none (Qwen3).
std::vector<int64_t> SampleContext(const tok::Tokenizer* tokenizer);

// The text shown for sampled ids. Bytes (tokenizer nullptr): each id one byte, printable ASCII
// and newlines kept, anything else '?'. A tokenizer file: tokenizer->Decode(ids) with special
// tokens shown as their text ("<|endoftext|>", where documents end), ids past the tokenizer's
// id_limit() (a model vocabulary padded beyond it) left out, and control characters other than
// newline and tab shown as '?' so the log stays one readable text.
std::string SampleTextOf(const std::vector<int64_t>& ids, const tok::Tokenizer* tokenizer);

}  // namespace accel::exec

#endif  // ACCEL_DATA_SAMPLE_TEXT_H_
