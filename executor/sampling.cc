#include "executor/sampling.h"

#include <torch/torch.h>

#include <algorithm>
#include <vector>

#include "data/sample_text.h"
#include "executor/models/tensor_parallel.h"

namespace accel::exec {

std::string SampleText(CausalLm& model, int64_t count, uint64_t seed, const c10::Device& device,
                       const tok::Tokenizer* tokenizer) {
  torch::NoGradGuard no_grad;
  model.eval();
  SequenceParallelPause pause(model);
  torch::manual_seed(seed);
  std::vector<int64_t> context = SampleContext(tokenizer);
  std::vector<int64_t> sampled;
  const int64_t window = model.config().max_seq_len;
  for (int64_t i = 0; i < count; ++i) {
    int64_t begin = std::max<int64_t>(0, static_cast<int64_t>(context.size()) - window);
    std::vector<int64_t> slice(context.begin() + begin, context.end());
    torch::Tensor input =
        torch::tensor(slice, torch::kLong).unsqueeze(0).to(device);
    torch::Tensor logits = GatherVocabParallel(model.Forward(input), model.tensor_parallel())
                               .select(0, 0).select(0, -1).to(torch::kFloat);
    torch::Tensor probs = torch::softmax(logits / 0.8, -1).cpu();
    int64_t next = torch::multinomial(probs, 1).item<int64_t>();
    context.push_back(next);
    sampled.push_back(next);
  }
  model.train();
  return SampleTextOf(sampled, tokenizer);
}

}  // namespace accel::exec
