#include "launcher/plan_support.h"

#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "checkpoint/pretrained.h"
#include "common/diag_codes.h"
#include "data/plan_tokens.h"

namespace accel::exec {
namespace {

PlanIssue Issue(std::string code, std::string field, std::string message) {
  PlanIssue issue;
  issue.code = std::move(code);
  issue.field = std::move(field);
  issue.message = std::move(message);
  return issue;
}

}  // namespace

std::vector<PlanIssue> CheckExecutorSupport(const ir::Plan& plan, const ExecutorCapabilities& capabilities) {
  std::vector<PlanIssue> issues;
  for (const SupportIssue& issue : ExecutorSupportIssues(plan, capabilities)) {
    issues.push_back(Issue(codes::kExecutorUnsupported, issue.field, issue.message));
  }
  return issues;
}

std::vector<PlanIssue> CheckTrainingData(const ir::Plan& plan) {
  namespace fs = std::filesystem;
  const std::string& path = plan.data().path();
  auto issue = [&](std::string message) {
    return std::vector<PlanIssue>{Issue(codes::kFileUnreadable, "data.train.path", std::move(message))};
  };
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (path.empty() || ec || !fs::exists(status)) {
    return issue(absl::StrCat("training data does not exist: ", path));
  }
  if (fs::is_directory(status)) {
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code entry_ec;
      if (it->is_regular_file(entry_ec) && it->file_size(entry_ec) > 0 && !entry_ec) return {};
    }
    return issue(absl::StrCat("training data directory has no non-empty files: ", path));
  }
  if (fs::file_size(path, ec) == 0 || ec) return issue(absl::StrCat("training data is empty: ", path));
  return {};
}

std::vector<PlanIssue> CheckTokenizer(const ir::Plan& plan) {
  const std::string& path = plan.data().tokenizer_path();
  if (path.empty()) return {};
  absl::StatusOr<std::unique_ptr<tok::Tokenizer>> tokenizer = LoadPlanTokenizer(plan.data());
  if (!tokenizer.ok()) {
    return {Issue(codes::kTokenizerMismatch, "data.train.tokenizer",
                  absl::StrCat("cannot load tokenizer: ", tokenizer.status().message()))};
  }
  const int64_t ids = (*tokenizer)->id_limit();
  const int64_t vocab = plan.model().vocab_size();
  if (ids <= vocab) return {};
  PlanIssue issue = Issue(codes::kTokenizerMismatch, "data.train.tokenizer",
                          absl::StrCat(path, " has ", ids, " token ids (added and special tokens "
                                       "included) but model.vocab_size is ", vocab));
  issue.note_field = "model.vocab_size";
  issue.note = "vocab_size set here";
  issue.advice_if_from_model_config =
      "the tokenizer does not belong to the model of {file}: use that model's own tokenizer file";
  issue.advice_otherwise = absl::StrCat("set model.vocab_size to at least ", ids,
                                        ", or use a tokenizer with at most ", vocab, " ids");
  return {issue};
}

std::vector<PlanIssue> CheckPretrainedWeights(const ir::Plan& plan) {
  const std::string& path = plan.model().init_from();
  if (path.empty()) return {};
  auto issue = [](std::string message) {
    return Issue(codes::kPretrainedMismatch, "model.init_from", std::move(message));
  };
  absl::StatusOr<PretrainedIndex> index = OpenPretrained(path);
  if (!index.ok()) return {issue(absl::StrCat("cannot start from ", path, ": ", index.status().message()))};
  constexpr size_t kShown = 10;
  const std::vector<std::string> problems = CheckPretrainedAgainstPlan(plan, *index);
  std::vector<PlanIssue> issues;
  for (size_t i = 0; i < problems.size() && i < kShown; ++i) {
    issues.push_back(issue(absl::StrCat(path, ": ", problems[i])));
  }
  if (problems.size() > kShown) {
    issues.push_back(issue(absl::StrCat(path, ": ", problems.size() - kShown, " more tensors do not fit")));
  }
  return issues;
}

std::vector<PlanIssue> CheckBeforeLaunch(const ir::Plan& plan, const ExecutorCapabilities& capabilities) {
  std::vector<PlanIssue> issues = CheckExecutorSupport(plan, capabilities);
  for (auto* check : {&CheckTrainingData, &CheckTokenizer, &CheckPretrainedWeights}) {
    std::vector<PlanIssue> more = (*check)(plan);
    issues.insert(issues.end(), more.begin(), more.end());
  }
  return issues;
}

}  // namespace accel::exec
