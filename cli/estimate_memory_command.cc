#include "cli/estimate_memory_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/compile_job.h"
#include "common/diag_codes.h"
#include "common/exit_codes.h"
#include "common/terminal_text.h"
#include "common/units.h"
#include "ir/enum_names.h"
#include "ir/plan_access.h"
#include "planner/hf_architectures.h"
#include "planner/memory_estimator.h"
#include "planner/memory_model.h"
#include "planner/model_params.h"
#include "planner/planner.h"
#include "spec/limits.h"
#include "spec/loader.h"
#include "spec/json_object.h"
#include "spec/model_config.h"

namespace accel::cli {
namespace {

bool IsSpecPath(const std::string& path) {
  auto ends_with = [&path](const std::string& suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".yaml") || ends_with(".yml");
}

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

// Prints rows as columns separated by " | ", each as wide as its widest cell.
void PrintTable(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line = "  ";
    for (size_t i = 0; i < row.size(); ++i) {
      line += i + 1 < row.size() ? Pad(row[i], widths[i]) + " | " : row[i];
    }
    out << line << "\n";
  }
}

std::string Millions(int64_t count) { return std::to_string(count / 1'000'000) + "M"; }

void PrintDeepSpeed(const EstimateMemoryOptions& o, int64_t total, int64_t largest_module,
                    std::ostream& out) {
  const int64_t per_node = o.gpus, nodes = o.nodes;
  out << "\nDeepSpeed ZeRO-" << o.zero_stage << " model states (" << nodes
      << (nodes == 1 ? " node, " : " nodes, ") << per_node
      << (per_node == 1 ? " GPU" : " GPUs") << " per node; " << Millions(total)
      << " total params" << (o.zero_stage == 3 ? ", " + Millions(largest_module) + " largest layer params" : "")
      << "; estimate_zero" << o.zero_stage << "_model_states_mem_needs, GiB):\n";
  std::vector<std::vector<std::string>> rows = {{"per CPU", "per GPU", "options"}};
  if (o.zero_stage == 2) {
    for (bool offload : {true, false}) {
      planner::DeepSpeedEstimate e = planner::DeepSpeedZero2Estimate(total, per_node, nodes, offload);
      rows.push_back({planner::FormatGiB2(e.cpu_bytes) + " GiB", planner::FormatGiB2(e.gpu_bytes) + " GiB",
                      std::string("offload_optimizer=") + (offload ? "cpu" : "none")});
    }
  } else {
    struct Row {
      bool optimizer, params;
    };
    for (Row r : {Row{true, true}, Row{true, false}, Row{false, false}}) {
      for (bool zero_init : {true, false}) {
        planner::DeepSpeedEstimate e = planner::DeepSpeedZero3Estimate(
            total, largest_module, per_node, nodes, r.optimizer, r.params, zero_init);
        rows.push_back({planner::FormatGiB2(e.cpu_bytes) + " GiB", planner::FormatGiB2(e.gpu_bytes) + " GiB",
                        std::string("offload_param=") + (r.params ? "cpu " : "none") +
                            ", offload_optimizer=" + (r.optimizer ? "cpu " : "none") +
                            ", zero_init=" + (zero_init ? "1" : "0")});
      }
    }
  }
  PrintTable(out, rows);
  out << "  (model states only: activations, buffers and the CUDA context come on top)\n";
}

// Accelerate's table for `fp32_total` bytes and a largest layer of `fp32_largest` bytes,
// printed under `heading`. Returns false (after the message) for a bad --dtypes.
bool PrintAccelerateTable(const EstimateMemoryOptions& o, int64_t fp32_total, int64_t fp32_largest,
                          const std::string& heading, std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::vector<planner::AccelerateRow>> rows =
      planner::AccelerateEstimateTable(fp32_total, fp32_largest, o.dtypes);
  if (!rows.ok()) {
    err << "error: --dtypes: " << rows.status().message() << "\n";
    return false;
  }
  out << "\n" << heading << "\n";
  std::vector<std::vector<std::string>> table = {{"dtype", "Largest Layer", "Total Size", "Training using Adam"}};
  for (const planner::AccelerateRow& r : *rows) {
    table.push_back({r.dtype, planner::AccelerateFormatBytes(r.largest_layer_bytes),
                     planner::AccelerateFormatBytes(r.total_bytes),
                     r.training_bytes ? planner::AccelerateFormatBytes(*r.training_bytes) : "N/A"});
  }
  PrintTable(out, table);
  return true;
}

// A family accel counts but does not plan (planner/hf_architectures.h): the exact count of the
// model the checkpoint holds and Accelerate's table over the model Accelerate builds.
int EstimateCountedConfig(const EstimateMemoryOptions& o, const std::string& text, std::ostream& out,
                          std::ostream& err) {
  DiagnosticSink sink;
  SourceManager sources;
  sources.Add(o.model, text);
  spec::JsonObjectProblem problem;
  std::optional<nlohmann::json> json = spec::ParseJsonObject(text, "model config", problem);
  planner::HfCountResult counted;
  if (json) counted = planner::CountHuggingFaceModel(*json, text);
  for (const planner::HfConfigIssue& issue : counted.issues) {
    sink.Error(issue.code, o.model, issue.location, "", "model config " + issue.message);
  }
  if (!counted.count) {
    err << RenderText(sink.diagnostics(), sources);
    return kExitInvalid;
  }
  const planner::HfModelCount& c = *counted.count;
  out << "model: " << o.model << " (model_type " << c.model_type << "; counted, not planned)\n";
  out << "parameters: " << FormatCount(c.parameters) << " (" << c.counted_class
      << "; every weight and bias, tied weights once)\n";
  std::vector<std::vector<std::string>> parts;
  for (const auto& [name, count] : c.parts) {
    if (count > 0) parts.push_back({name, FormatCount(count)});
  }
  PrintTable(out, parts);
  const planner::AccelerateSizes sizes = planner::AccelerateModelSizes(c.accelerate_model, c.no_split_modules);
  const std::string largest = sizes.largest_layer_names.empty() ? "" : sizes.largest_layer_names.front();
  if (!PrintAccelerateTable(o, sizes.total_bytes, sizes.largest_layer_bytes,
                            "Accelerate estimate-memory (" + c.accelerate_class +
                                " in float32, parameters and buffers; largest layer " + largest +
                                "; sizes in MiB/GiB, labelled MB/GB as Accelerate prints them):",
                            out, err)) {
    return kExitUsage;
  }
  if (!c.note.empty()) out << "  (" << c.note << ")\n";
  if (o.zero_stage != 0) {
    PrintDeepSpeed(o, c.parameters, planner::LargestModuleOwnParameters(c.accelerate_model), out);
  }
  return kExitOk;
}

int EstimateConfig(const EstimateMemoryOptions& o, std::ostream& out, std::ostream& err) {
  spec::ModelConfigResult read = spec::ReadModelConfig(o.model);
  if (!read.issues.empty() && read.issues.front().code == std::string(codes::kModelTypeUnsupported)) {
    return EstimateCountedConfig(o, read.text, out, err);
  }
  DiagnosticSink sink;
  SourceManager sources;
  std::optional<spec::ModelSpec> spec_model = spec::LoadModelConfig(o.model, sink, sources);
  if (!spec_model) {
    err << RenderText(sink.diagnostics(), sources);
    return kExitInvalid;
  }
  const ir::Model model = planner::ModelFromSpec(*spec_model);
  const planner::ModelParams params = planner::BuildModelParams(model, 1);
  const ir::ParameterCount& c = params.counts;

  out << "model: " << o.model << " (" << ir::Name(model.arch())
      << (model.model_type().empty() ? "" : ", model_type " + model.model_type()) << ")\n";
  out << "  hidden_size " << model.hidden_size() << ", num_layers " << model.num_layers()
      << ", num_heads " << model.num_heads() << ", num_kv_heads " << model.num_kv_heads()
      << ", ffn_hidden_size " << model.ffn_hidden_size() << ", vocab_size " << model.vocab_size()
      << ", tie_word_embeddings " << (model.tie_word_embeddings() ? "true" : "false")
      << ", qkv_bias " << (model.qkv_bias() ? "true" : "false") << "\n";
  out << "parameters: " << FormatCount(c.total_count())
      << " (every weight and bias; tied embeddings counted once)\n";
  const ir::MixtureOfExperts& moe = model.moe();
  if (moe.num_experts() > 0) {
    // docs/planner-facts.md §9: the parameters one token uses.
    out << "  mixture of experts: " << moe.num_experts() << " routed experts of ffn "
        << moe.expert_ffn_size() << ", top-" << moe.experts_per_token() << ", "
        << model.num_layers() - moe.dense_layers_size() << " of " << model.num_layers()
        << " blocks MoE; routed experts " << FormatCount(c.routed_expert_count())
        << "; active per token " << FormatCount(c.active_count()) << "\n";
  }
  std::vector<std::vector<std::string>> parts = {{"token embedding", FormatCount(c.embedding_count())}};
  if (c.position_embedding_count() > 0) {
    parts.push_back({"position embedding", FormatCount(c.position_embedding_count())});
  }
  const int64_t dense_blocks = moe.num_experts() > 0 ? moe.dense_layers_size() : 0;
  parts.push_back({"layers", dense_blocks > 0
                                 ? FormatCount(model.num_layers() - dense_blocks) + " MoE x " +
                                       FormatCount(c.per_layer_count()) + " + " +
                                       FormatCount(dense_blocks) + " dense x " +
                                       FormatCount(c.dense_per_layer_count()) + " = " +
                                       FormatCount(c.layers_count())
                                 : FormatCount(model.num_layers()) + " x " +
                                       FormatCount(c.per_layer_count()) + " = " +
                                       FormatCount(c.layers_count())});
  parts.push_back({"final norm", FormatCount(c.final_norm_count())});
  parts.push_back({"lm_head", c.lm_head_count() > 0 ? FormatCount(c.lm_head_count()) : "0 (tied)"});
  PrintTable(out, parts);

  const int64_t largest_layer = planner::LargestLayerParameterCount(params);
  const int64_t largest_module = planner::LargestModuleParameterCount(params);
  if (!PrintAccelerateTable(o, 4 * c.total_count(), 4 * largest_layer,
                            "Accelerate estimate-memory (loading; parameters x dtype size, largest layer " +
                                FormatCount(largest_layer) + " params):",
                            out, err)) {
    return kExitUsage;
  }
  out << "  (counts the causal LM's parameters; Accelerate itself loads AutoModel, which has no "
         "lm_head, and adds buffers)\n";

  if (o.zero_stage != 0) PrintDeepSpeed(o, c.total_count(), largest_module, out);
  return kExitOk;
}

std::string StageWhat(const ir::PipelineStage* stage) {
  if (stage == nullptr) return "";
  std::string what = "layers " + ir::StageLayersText(*stage);
  if (stage->has_embedding()) what += ", embedding";
  if (stage->has_lm_head()) what += ", head";
  return " (" + what + ")";
}

void PrintTerms(std::ostream& out, const google::protobuf::RepeatedPtrField<ir::MemoryTerm>& terms) {
  std::vector<std::vector<std::string>> rows;
  for (const ir::MemoryTerm& t : terms) {
    rows.push_back({t.category(), FormatBytes(t.bytes()), t.formula() + "  [" + t.source() + "]"});
  }
  PrintTable(out, rows);
}

int EstimateSpec(const EstimateMemoryOptions& o, std::ostream& out, std::ostream& err) {
  DiagnosticSink sink;
  SourceManager sources;
  planner::PlanOptions plan_options;
  plan_options.allow_not_fitting = true;
  CompiledJob compiled = CompileJob(o.model, o.overrides, plan_options, sink, sources);
  if (!compiled.job) {
    err << RenderText(sink.diagnostics(), sources);
    return kExitInvalid;
  }
  const std::optional<spec::JobSpec>& job = compiled.job;
  planner::PlanResult& result = compiled.planned;
  if (o.werror) sink.PromoteWarningsToErrors();
  if (!sink.empty()) err << RenderText(sink.diagnostics(), sources);
  if (!result.ok || sink.HasErrors() || result.plan.memory_size() == 0) return kExitInvalid;

  const ir::Plan& plan = result.plan;
  out << "job: " << o.model << " (" << plan.topology().world_size() << " ranks, "
      << ir::Name(plan.topology().device_type())
      << (plan.topology().device_model().empty() ? "" : " " + plan.topology().device_model())
      << ")\n";
  bool all_fit = true;
  const auto& stages = plan.pipeline().stages();
  for (const ir::MemoryEstimate& e : plan.memory()) {
    // Stages are stored in index order (assign-stages), so a lookup is O(1), not O(pp).
    const ir::PipelineStage* stage = nullptr;
    if (e.stage() >= 0 && e.stage() < stages.size() && stages[e.stage()].index() == e.stage()) {
      stage = &stages[e.stage()];
    }
    all_fit = all_fit && e.fits();
    out << "\nstage " << e.stage() << StageWhat(stage) << ": " << FormatBytes(e.device_total_bytes())
        << " per device of " << FormatBytes(e.device_limit_bytes()) << ": "
        << (e.fits() ? "fits" : "does not fit") << "\n";
    PrintTerms(out, e.device());
    if (e.host_size() > 0) {
      out << "  host (offloaded): " << FormatBytes(e.host_total_bytes()) << "\n";
      PrintTerms(out, e.host());
    }
  }
  if (!all_fit) {
    absl::StatusOr<planner::MemoryInputs> inputs =
        planner::MemoryInputsFromPlan(plan, job->parallel.sequence_parallel);
    if (inputs.ok()) {
      const std::vector<planner::FitSuggestion> suggestions = planner::SuggestChangesThatFit(*inputs);
      out << "\n";
      if (suggestions.empty()) out << "no single change makes every stage fit\n";
      for (const planner::FitSuggestion& s : suggestions) out << s.text << "\n";
    }
  }
  return all_fit ? kExitOk : kExitInvalid;
}

}  // namespace

int RunEstimateMemory(const EstimateMemoryOptions& options, std::ostream& out, std::ostream& err) {
  if (options.zero_stage != 0 && options.zero_stage != 2 && options.zero_stage != 3) {
    err << "error: --zero-stage must be 2 or 3 (DeepSpeed's estimators)\n";
    return kExitUsage;
  }
  if (options.zero_stage != 0 && options.gpus < 1) {
    err << "error: --zero-stage needs --gpus (GPUs per node, at least 1)\n";
    return kExitUsage;
  }
  if (options.nodes < 1 || options.nodes > spec::kMaxNodes) {
    err << "error: --nodes must be between 1 and " << spec::kMaxNodes << "\n";
    return kExitUsage;
  }
  // DeepSpeed's figures divide by gpus x nodes; the limits keep that product in range.
  if (options.gpus > spec::kMaxDevicesPerNode) {
    err << "error: --gpus must be at most " << spec::kMaxDevicesPerNode << " (GPUs per node)\n";
    return kExitUsage;
  }
  if (IsSpecPath(options.model)) {
    if (options.zero_stage != 0) {
      err << "error: --zero-stage/--gpus apply to a config.json; a spec has its own layout\n";
      return kExitUsage;
    }
    return EstimateSpec(options, out, err);
  }
  if (!options.overrides.empty()) {
    err << "error: --set applies to a job spec (.yaml), not to a config.json\n";
    return kExitUsage;
  }
  return EstimateConfig(options, out, err);
}

void RegisterEstimateMemoryCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<EstimateMemoryOptions>();
  CLI::App* sub = app.add_subcommand(
      "estimate-memory",
      "Will this model and layout fit? Parameter count, Accelerate and DeepSpeed estimates for a "
      "config.json; the per-stage breakdown and fit for a job spec");
  sub->add_option("--model", options->model,
                  "Hugging Face config.json, or a job spec (.yaml/.yml)")
      ->required();
  sub->add_option("--dtypes", options->dtypes, "Accelerate dtype columns (comma-separated)")
      ->delimiter(',')
      ->check(CLI::IsMember({"float32", "float16", "int8", "int4"}))
      ->capture_default_str();
  sub->add_option("--zero-stage", options->zero_stage, "DeepSpeed ZeRO estimator: 2 or 3")
      ->check(CLI::IsMember({2, 3}));
  sub->add_option("--gpus", options->gpus, "GPUs per node for the DeepSpeed figures");
  sub->add_option("--nodes", options->nodes, "Nodes for the DeepSpeed figures")
      ->capture_default_str();
  sub->add_option("--set", options->overrides,
                  "Override a spec key, e.g. --set parallel.tensor=2 (repeatable; spec only)")
      ->allow_extra_args(false);
  sub->add_flag("--werror", options->werror,
                "Treat the planner's warnings as errors: they print as error[W...], no estimate "
                "is printed, exit 1 (spec only)");
  sub->callback([options, &context] {
    // The report quotes the spec's paths and device model: a terminal must not act on them.
    std::ostringstream report;
    context.exit_code = RunEstimateMemory(*options, report, *context.err);
    *context.out << EscapeTerminalControlsKeepingLines(report.str());
  });
}

}  // namespace accel::cli
