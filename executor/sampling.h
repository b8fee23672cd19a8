// The sample `accel worker` prints at the end of a run (training.sample_tokens): ids drawn from
// the trained model, for a look at what it learned.
#ifndef ACCEL_EXECUTOR_SAMPLING_H_
#define ACCEL_EXECUTOR_SAMPLING_H_

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

#include "executor/models/causal_lm.h"
#include "tokenizers/tokenizer.h"

namespace accel::exec {

// `count` ids sampled from `model` (on `device`) with temperature 0.8, seeded with `seed`, each
// from the logits of the last position of at most max_seq_len preceding ids, shown as text
// (data/sample_text.h: decoded with `tokenizer`, or as bytes when it is null, starting after BOS
// or a newline). Under tensor parallelism every rank of the tp group must call it (the forward
// communicates); the gathered logits and the seed are the same on each, so they draw the same
// ids. Sequence parallelism is off while sampling: contexts of every length are fed, not only
// multiples of tp. The model is in eval mode meanwhile and back in train mode after. Throws
// what LibTorch throws.
std::string SampleText(CausalLm& model, int64_t count, uint64_t seed, const c10::Device& device,
                       const tok::Tokenizer* tokenizer);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_SAMPLING_H_
