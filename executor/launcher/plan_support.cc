#include "executor/launcher/plan_support.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/diag_codes.h"
#include "executor/checkpoint/pretrained.h"
#include "executor/data/plan_tokens.h"
#include "ir/plan_access.h"

namespace accel::exec {

namespace {

// Reports `field` at the location of its value (or of its nearest located ancestor).
void ReportAt(const spec::JobSpec& spec, const std::string& field, const char* code,
              const std::string& message, DiagnosticSink& sink) {
  spec::FieldSource source = spec.Locate(field);
  std::string file = source.file.empty() ? spec.file : source.file;
  SourceLocation location = source.value.known() ? source.value : source.key;
  sink.Error(code, file, location, field, message);
}

}  // namespace

void CheckExecutorSupport(const ir::Plan& plan, const spec::JobSpec& spec,
                          const ExecutorCapabilities& capabilities, DiagnosticSink& sink) {
  for (const SupportIssue& issue : ExecutorSupportIssues(plan, capabilities)) {
    ReportAt(spec, issue.field, codes::kExecutorUnsupported, issue.message, sink);
  }
}

void CheckTrainingData(const ir::Plan& plan, const spec::JobSpec& spec, DiagnosticSink& sink) {
  namespace fs = std::filesystem;
  const std::string& path = plan.data().path();
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (path.empty() || ec || !fs::exists(status)) {
    ReportAt(spec, "data.train.path", codes::kFileUnreadable,
             absl::StrCat("training data does not exist: ", path), sink);
    return;
  }
  if (fs::is_directory(status)) {
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code entry_ec;
      if (it->is_regular_file(entry_ec) && it->file_size(entry_ec) > 0 && !entry_ec) return;
    }
    ReportAt(spec, "data.train.path", codes::kFileUnreadable,
             absl::StrCat("training data directory has no non-empty files: ", path), sink);
    return;
  }
  if (fs::file_size(path, ec) == 0 || ec) {
    ReportAt(spec, "data.train.path", codes::kFileUnreadable,
             absl::StrCat("training data is empty: ", path), sink);
  }
}

void CheckTokenizer(const ir::Plan& plan, const spec::JobSpec& spec, DiagnosticSink& sink) {
  const std::string& path = plan.data().tokenizer_path();
  if (path.empty()) return;
  absl::StatusOr<std::unique_ptr<tok::Tokenizer>> tokenizer = LoadPlanTokenizer(plan.data());
  if (!tokenizer.ok()) {
    ReportAt(spec, "data.train.tokenizer", codes::kTokenizerMismatch,
             absl::StrCat("cannot load tokenizer: ", tokenizer.status().message()), sink);
    return;
  }
  const int64_t ids = (*tokenizer)->id_limit();
  const int64_t vocab = plan.model().vocab_size();
  if (ids <= vocab) return;
  spec::FieldSource source = spec.Locate("data.train.tokenizer");
  Diagnostic& d = sink.Error(codes::kTokenizerMismatch, source.file.empty() ? spec.file : source.file,
                             source.value.known() ? source.value : source.key, "data.train.tokenizer",
                             absl::StrCat(path, " has ", ids, " token ids (added and special tokens "
                                          "included) but model.vocab_size is ", vocab));
  spec::FieldSource vocab_source = spec.Locate("model.vocab_size");
  if (vocab_source.origin == spec::Origin::kModelConfig) {
    d.Note(vocab_source.file, vocab_source.value, "vocab_size set here");
    d.Note(absl::StrCat("the tokenizer does not belong to the model of ", vocab_source.file,
                        ": use that model's own tokenizer file"));
  } else {
    if (vocab_source.origin != spec::Origin::kDefault) {
      d.Note(vocab_source.file, vocab_source.value, "vocab_size set here");
    }
    d.Note(absl::StrCat("set model.vocab_size to at least ", ids, ", or use a tokenizer with at most ",
                        vocab, " ids"));
  }
}

void CheckPretrainedWeights(const ir::Plan& plan, const spec::JobSpec& spec, DiagnosticSink& sink) {
  const std::string& path = plan.model().init_from();
  if (path.empty()) return;
  absl::StatusOr<PretrainedIndex> index = OpenPretrained(path);
  if (!index.ok()) {
    ReportAt(spec, "model.init_from", codes::kPretrainedMismatch,
             absl::StrCat("cannot start from ", path, ": ", index.status().message()), sink);
    return;
  }
  constexpr size_t kShown = 10;
  const std::vector<std::string> problems = CheckPretrainedAgainstPlan(plan, *index);
  for (size_t i = 0; i < problems.size() && i < kShown; ++i) {
    ReportAt(spec, "model.init_from", codes::kPretrainedMismatch,
             absl::StrCat(path, ": ", problems[i]), sink);
  }
  if (problems.size() > kShown) {
    ReportAt(spec, "model.init_from", codes::kPretrainedMismatch,
             absl::StrCat(path, ": ", problems.size() - kShown, " more tensors do not fit"), sink);
  }
}

}  // namespace accel::exec
