#include "executor/memory/memory_report.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace accel::exec {

namespace {

constexpr const char* kRuntimeOverhead = "runtime_overhead";

double MiB(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

nlohmann::json EstimateJson(const ir::MemoryEstimate& estimate) {
  nlohmann::json terms = nlohmann::json::object();
  // A category may have several terms (e.g. activations kept and the block recomputed): summed.
  auto add = [&terms](const std::string& key, int64_t bytes) {
    terms[key] = (terms.contains(key) ? terms[key].get<int64_t>() : 0) + bytes;
  };
  for (const ir::MemoryTerm& term : estimate.device()) {
    if (term.category() != kRuntimeOverhead) add(term.category(), term.bytes());
  }
  for (const ir::MemoryTerm& term : estimate.host()) add("host_" + term.category(), term.bytes());
  return {{"stage", estimate.stage()},
          {"tensor_bytes", EstimatedTensorBytes(estimate)},
          {"terms", terms}};
}

}  // namespace

const ir::MemoryEstimate* EstimateForStage(const ir::Plan& plan, int stage) {
  for (const ir::MemoryEstimate& estimate : plan.memory()) {
    if (estimate.stage() == stage) return &estimate;
  }
  return nullptr;
}

int64_t EstimatedTensorBytes(const ir::MemoryEstimate& estimate, bool count_host) {
  int64_t total = 0;
  for (const ir::MemoryTerm& term : estimate.device()) {
    if (term.category() != kRuntimeOverhead) total += term.bytes();
  }
  // The counting allocator sees the CPU's memory, where offloaded (host) tensors live too.
  if (count_host) {
    for (const ir::MemoryTerm& term : estimate.host()) total += term.bytes();
  }
  return total;
}

std::string MemoryReportJson(const ir::Plan& plan, const std::vector<RankMemory>& ranks) {
  nlohmann::json estimates = nlohmann::json::array();
  for (const ir::MemoryEstimate& estimate : plan.memory()) estimates.push_back(EstimateJson(estimate));
  nlohmann::json rows = nlohmann::json::array();
  for (const RankMemory& r : ranks) {
    const ir::MemoryEstimate* estimate = EstimateForStage(plan, r.stage);
    const int64_t estimated = estimate != nullptr ? EstimatedTensorBytes(*estimate, !r.cuda) : 0;
    nlohmann::json row = {{"rank", r.rank},
                          {"stage", r.stage},
                          {"peak_tensor_bytes", r.peak_tensor_bytes},
                          {"peak_resident_bytes", r.peak_resident_bytes},
                          {"estimate_tensor_bytes", estimated},
                          {"measured_over_estimate", nullptr}};
    if (estimated > 0) {
      row["measured_over_estimate"] =
          static_cast<double>(r.peak_tensor_bytes) / static_cast<double>(estimated);
    }
    if (r.cuda) {
      row["peak_reserved_bytes"] = r.peak_reserved_bytes;
      row["reserved_over_estimate"] = nullptr;
      if (estimated > 0) {
        row["reserved_over_estimate"] =
            static_cast<double>(r.peak_reserved_bytes) / static_cast<double>(estimated);
      }
    }
    rows.push_back(row);
  }
  return nlohmann::json{{"estimate", estimates}, {"ranks", rows}}.dump();
}

std::string MemorySummaryLine(const ir::Plan& plan, const std::vector<RankMemory>& ranks) {
  if (ranks.empty()) return "memory: not measured";
  const RankMemory& top = *std::max_element(
      ranks.begin(), ranks.end(), [](const RankMemory& a, const RankMemory& b) {
        return a.peak_tensor_bytes < b.peak_tensor_bytes;
      });
  std::string line = absl::StrFormat("memory: peak tensor bytes %.2f MiB (rank %d; max over %d "
                                     "ranks)",
                                     MiB(top.peak_tensor_bytes), top.rank, ranks.size());
  const ir::MemoryEstimate* estimate = EstimateForStage(plan, top.stage);
  if (estimate == nullptr || EstimatedTensorBytes(*estimate, !top.cuda) == 0) {
    return line + "; the plan has no estimate for its stage";
  }
  const int64_t estimated = EstimatedTensorBytes(*estimate, !top.cuda);
  line += absl::StrFormat(
      " vs estimate %.2f MiB for stage %d without runtime overhead: measured/estimate %.3f",
      MiB(estimated), top.stage,
      static_cast<double>(top.peak_tensor_bytes) / static_cast<double>(estimated));
  if (top.cuda) {
    line += absl::StrFormat("; CUDA reserved %.2f MiB (reserved/estimate %.3f)",
                            MiB(top.peak_reserved_bytes),
                            static_cast<double>(top.peak_reserved_bytes) /
                                static_cast<double>(estimated));
  }
  return line;
}

}  // namespace accel::exec
