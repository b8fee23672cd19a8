#include "data/window_dataset.h"

#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"

namespace accel::exec {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a tiny generator with a fixed, documented output sequence,
// unlike std::shuffle whose distribution is implementation-defined.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) by rejection, so no value is favoured.
  uint64_t Below(uint64_t bound) {
    const uint64_t limit = ~uint64_t{0} - (~uint64_t{0} % bound);
    uint64_t v;
    do {
      v = Next();
    } while (v >= limit);
    return v % bound;
  }

 private:
  uint64_t state_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<WindowDataset>> WindowDataset::Create(std::vector<uint32_t> tokens,
                                                                     const WindowDatasetOptions& options,
                                                                     const std::string& source) {
  if (options.seq_len < 1) {
    return absl::InvalidArgumentError(absl::StrCat("seq_len must be >= 1, got ", options.seq_len));
  }
  if (options.dp_size < 1 || options.dp_rank < 0 || options.dp_rank >= options.dp_size) {
    return absl::InvalidArgumentError(absl::StrCat("data-parallel rank ", options.dp_rank,
                                                   " outside ", options.dp_size, " ranks"));
  }
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t needed = options.seq_len * options.dp_size + 1;
  if (n < needed) {
    return absl::InvalidArgumentError(absl::StrCat(source, " has ", n, " tokens; needs at least ",
                                                   needed, " for seq_len ", options.seq_len, " and ",
                                                   options.dp_size, " data-parallel ranks"));
  }
  return std::unique_ptr<WindowDataset>(new WindowDataset(std::move(tokens), options));
}

WindowDataset::WindowDataset(std::vector<uint32_t> tokens, const WindowDatasetOptions& options)
    : tokens_(std::move(tokens)),
      options_(options),
      num_windows_((static_cast<int64_t>(tokens_.size()) - 1) / options.seq_len) {}

void WindowDataset::BuildEpochOrder() {
  order_.resize(num_windows_);
  std::iota(order_.begin(), order_.end(), 0);
  if (options_.shuffle) {
    // Mix the epoch into the seed so epochs are independent permutations.
    SplitMix64 rng(options_.seed ^ (0xD1B54A32D192ED03ULL * static_cast<uint64_t>(position_.epoch + 1)));
    for (int64_t i = num_windows_ - 1; i > 0; --i) {
      const auto j = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(i + 1)));
      std::swap(order_[i], order_[j]);
    }
  }
  order_epoch_ = position_.epoch;
}

void WindowDataset::NextBatch(int64_t count, std::vector<int64_t>& out) {
  const int64_t width = options_.seq_len + 1;
  out.reserve(out.size() + count * width);
  for (int64_t c = 0; c < count; ++c) {
    if (position_.index >= WindowsPerRank()) {
      ++position_.epoch;
      position_.index = 0;
    }
    if (order_epoch_ != position_.epoch) BuildEpochOrder();
    const int64_t window = order_[position_.index * options_.dp_size + options_.dp_rank];
    const int64_t start = window * options_.seq_len;
    for (int64_t k = 0; k < width; ++k) out.push_back(tokens_[start + k]);
    // Normalize so a finished epoch reads as (epoch + 1, 0) in checkpoints.
    if (++position_.index == WindowsPerRank()) {
      ++position_.epoch;
      position_.index = 0;
    }
  }
}

absl::Status WindowDataset::Seek(const DataPosition& position) {
  if (position.epoch < 0 || position.index < 0 || position.index > WindowsPerRank()) {
    return absl::InvalidArgumentError(absl::StrCat("data position (epoch ", position.epoch, ", index ",
                                                   position.index, ") outside a shard of ",
                                                   WindowsPerRank(), " windows"));
  }
  position_ = position;
  return absl::OkStatus();
}

GlobalDataPosition WindowDataset::GlobalPosition() const {
  return {position_.epoch, position_.index * options_.dp_size};
}

absl::Status WindowDataset::SeekGlobal(const GlobalDataPosition& position) {
  if (position.epoch < 0 || position.samples < 0) {
    return absl::InvalidArgumentError(absl::StrCat("data position (epoch ", position.epoch,
                                                   ", samples ", position.samples, ") is negative"));
  }
  if (position.samples % options_.dp_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data position: ", position.samples, " windows read in epoch ", position.epoch,
        " do not split evenly over ", options_.dp_size, " data-parallel ranks"));
  }
  const int64_t index = position.samples / options_.dp_size;
  if (index >= WindowsPerRank()) return Seek({position.epoch + 1, 0});
  return Seek({position.epoch, index});
}

}  // namespace accel::exec
