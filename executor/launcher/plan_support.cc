#include "executor/launcher/plan_support.h"

#include <filesystem>
#include <initializer_list>
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

void Unsupported(const std::string& field, const std::string& value, const std::string& supported,
                 std::vector<SupportIssue>& out) {
  out.push_back({field, absl::StrCat(field, " ", value,
                                     " is not supported by the executor yet (supported: ",
                                     supported, ")")});
}

// "" (a hand-built plan) counts as the default.
bool OneOf(const std::string& value, std::initializer_list<const char*> allowed) {
  if (value.empty()) return true;
  for (const char* a : allowed) {
    if (value == a) return true;
  }
  return false;
}

}  // namespace

std::vector<SupportIssue> ExecutorSupportIssues(const ir::Plan& plan,
                                                const ExecutorCapabilities& capabilities) {
  std::vector<SupportIssue> out;
  const struct {
    ir::Axis axis;
    const char* field;
  } kAxes[] = {{ir::Axis::kCp, "parallel.context"}};
  for (const auto& a : kAxes) {
    const int64_t size = ir::AxisSize(plan, a.axis);
    if (size > 1) Unsupported(a.field, absl::StrCat(size), "1", out);
  }
  if (plan.topology().device_type() == "cuda" && !capabilities.cuda) {
    out.push_back({"cluster.device",
                   "cluster.device cuda is not supported by this build of the executor (LibTorch "
                   "without CUDA; supported: cpu)"});
  }
  const ir::AttentionKernel kernel = plan.model().attention_kernel();
  if (kernel == ir::ATTENTION_KERNEL_SDPA && !capabilities.sdpa) {
    out.push_back({"cluster.device",
                   absl::StrCat("the plan's attention kernel (sdpa, chosen for cluster.device ",
                                plan.topology().device_type(),
                                ") needs LibTorch's scaled_dot_product_attention (2.0 and later), "
                                "which this build of the executor lacks")});
  } else if (kernel != ir::ATTENTION_KERNEL_SDPA && kernel != ir::ATTENTION_KERNEL_MATH) {
    out.push_back({"cluster.device", "the plan names no attention kernel (model.attention_kernel)"});
  }
  const ir::Precision& precision = plan.precision();
  if (!OneOf(precision.param_dtype(), {"fp32", "bf16"})) {
    Unsupported("precision.params", precision.param_dtype(), "fp32, bf16", out);
  }
  const bool cuda = plan.topology().device_type() == "cuda";
  if (precision.compute_dtype() == "fp16" && !cuda) {
    out.push_back({"precision.compute",
                   "precision.compute fp16 needs a CUDA device: LibTorch's CPU kernels have no "
                   "fp16 matrix multiply (supported on cpu: fp32, bf16)"});
  } else if (!OneOf(precision.compute_dtype(), {"fp32", "bf16", "fp16"})) {
    Unsupported("precision.compute", precision.compute_dtype(), "fp32, bf16, fp16", out);
  }
  if (!OneOf(precision.reduce_dtype(), {"fp32", "bf16"})) {
    Unsupported("precision.reduce", precision.reduce_dtype(), "fp32, bf16", out);
  }
  return out;
}

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
