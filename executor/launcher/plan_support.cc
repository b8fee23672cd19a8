#include "executor/launcher/plan_support.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/diag_codes.h"

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

int64_t AxisSize(const ir::Plan& plan, const std::string& name) {
  for (const ir::MeshAxis& axis : plan.mesh().axes()) {
    if (axis.name() == name) return axis.size();
  }
  return 1;
}

void Unsupported(const spec::JobSpec& spec, const std::string& field, const std::string& value,
                 const std::string& supported, DiagnosticSink& sink) {
  ReportAt(spec, field, codes::kExecutorUnsupported,
           absl::StrCat(field, " ", value, " is not supported by the executor yet (supported: ",
                        supported, ")"),
           sink);
}

}  // namespace

void CheckExecutorSupport(const ir::Plan& plan, const spec::JobSpec& spec,
                          const ExecutorCapabilities& capabilities, DiagnosticSink& sink) {
  if (plan.sharding().stage() > 0) {
    Unsupported(spec, "sharding.stage", absl::StrCat(plan.sharding().stage()), "0", sink);
  }
  // Mesh order (pp, dp_replicate, dp_shard, cp, tp) is the plan's; report in spec order.
  const struct {
    const char* axis;
    const char* field;
  } kAxes[] = {{"tp", "parallel.tensor"}, {"pp", "parallel.pipeline"}, {"cp", "parallel.context"}};
  for (const auto& a : kAxes) {
    int64_t size = AxisSize(plan, a.axis);
    if (size > 1) Unsupported(spec, a.field, absl::StrCat(size), "1", sink);
  }
  if (plan.topology().device_type() == "cuda" && !capabilities.cuda) {
    ReportAt(spec, "cluster.device", codes::kExecutorUnsupported,
             "cluster.device cuda is not supported by this build of the executor (LibTorch "
             "without CUDA; supported: cpu)",
             sink);
  }
  if (!plan.precision().param_dtype().empty() && plan.precision().param_dtype() != "fp32") {
    Unsupported(spec, "precision.params", plan.precision().param_dtype(), "fp32", sink);
  }
  if (!plan.precision().compute_dtype().empty() && plan.precision().compute_dtype() != "fp32" &&
      plan.precision().compute_dtype() != "bf16") {
    Unsupported(spec, "precision.compute", plan.precision().compute_dtype(), "fp32, bf16", sink);
  }
  if (!plan.precision().reduce_dtype().empty() && plan.precision().reduce_dtype() != "fp32") {
    Unsupported(spec, "precision.reduce", plan.precision().reduce_dtype(), "fp32", sink);
  }
  if (!plan.precision().loss_scaling().empty() && plan.precision().loss_scaling() != "none") {
    Unsupported(spec, "precision.loss_scaling", plan.precision().loss_scaling(), "none", sink);
  }
  if (!plan.training().recompute().empty() && plan.training().recompute() != "none") {
    Unsupported(spec, "training.recompute", plan.training().recompute(), "none", sink);
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

}  // namespace accel::exec
