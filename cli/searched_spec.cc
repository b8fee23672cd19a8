#include "cli/searched_spec.h"

#include <filesystem>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "spec/device_profile_file.h"
#include "spec/overrides.h"

namespace accel::cli {
namespace {

// Sets the value at dotted `path` (creating maps on the way), or its item `index` when ≥ 0.
absl::Status SetPath(YAML::Node root, const std::string& path, int index, const YAML::Node& value) {
  YAML::Node cur = root;
  std::stringstream keys(path);
  std::string key;
  std::vector<std::string> parts;
  while (std::getline(keys, key, '.')) parts.push_back(key);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (cur.IsScalar()) {
      return absl::InvalidArgumentError("cannot set " + path + ": " +
                                        (i == 0 ? std::string("the file") : parts[i - 1]) +
                                        " is not a mapping");
    }
    cur.reset(cur[parts[i]]);
  }
  if (index < 0) {
    cur[parts.back()] = value;
    return absl::OkStatus();
  }
  YAML::Node list = cur[parts.back()];
  if (!list.IsSequence() || index >= static_cast<int>(list.size())) {
    return absl::InvalidArgumentError("cannot set " + path + "[" + std::to_string(index) +
                                      "]: no such list item");
  }
  list[index] = value;
  return absl::OkStatus();
}

// `path` as written relative to `base` (a directory, "" for the working directory), rewritten
// relative to `target_dir`; absolute paths stay as they are.
std::string Rebase(const std::string& path, const std::string& base, const std::string& target_dir) {
  namespace fs = std::filesystem;
  if (path.empty() || fs::path(path).is_absolute()) return path;
  const fs::path from = fs::absolute(fs::path(base.empty() ? "." : base) / path).lexically_normal();
  const fs::path to = fs::absolute(target_dir.empty() ? "." : target_dir).lexically_normal();
  const fs::path relative = from.lexically_relative(to);
  return relative.empty() ? from.generic_string() : relative.generic_string();
}

// Rewrites the paths the loader resolves against the spec's directory (model.config,
// data.train.path, a cluster.device_profile file) so they resolve from `output_path`'s
// directory; a path from a --set override was relative to the working directory.
void RebasePaths(YAML::Node root, const std::string& spec_path, const std::string& output_path,
                 const std::set<std::string>& overridden) {
  namespace fs = std::filesystem;
  const std::string spec_dir = fs::path(spec_path).parent_path().string();
  const std::string target_dir = fs::path(output_path).parent_path().string();
  const std::vector<std::vector<std::string>> keys = {
      {"model", "config"}, {"data", "train", "path"}, {"cluster", "device_profile"}};
  for (const std::vector<std::string>& key : keys) {
    YAML::Node node = root;  // reset() rebinds; `=` would overwrite what it refers to
    std::string dotted;
    bool found = true;
    for (const std::string& part : key) {
      const YAML::Node& look = node;  // const: looking a key up must not add it
      if (!look.IsMap() || !look[part]) {
        found = false;
        break;
      }
      node.reset(node[part]);
      dotted += (dotted.empty() ? "" : ".") + part;
    }
    if (!found || !node.IsScalar()) continue;
    const std::string value = node.as<std::string>();
    if (dotted == "cluster.device_profile" && !spec::IsDeviceProfilePath(value)) continue;
    const std::string base = overridden.count(dotted) ? "" : spec_dir;
    node = Rebase(value, base, target_dir);
  }
}

// The header comment: where the spec came from and what --search chose.
std::string Header(const std::string& spec_path, const planner::Layout& l, int64_t global_batch) {
  std::ostringstream s;
  s << "# Written by `accel plan " << spec_path << " --search --emit-spec`: " << spec_path
    << " with its --set overrides and\n"
    << "# the fastest fitting layout found by the search. Chosen by --search:\n"
    << "#   parallel: data_replicate " << l.data_replicate << ", data_shard " << l.data_shard
    << ", context " << l.context << ", tensor " << l.tensor << ", pipeline " << l.pipeline
    << (l.expert > 1 ? ", expert " + std::to_string(l.expert) : std::string())
    << ", pipeline_schedule " << spec::Name(l.schedule) << ", pipeline_microbatches auto\n"
    << "#   sharding.stage " << l.sharding_stage << ", offload " << spec::Name(l.offload)
    << ", hybrid " << (l.hybrid ? "true" : "false") << "; data.micro_batch_size "
    << l.micro_batch_size << ", global_batch_size " << global_batch
    << " (kept), grad_accum_steps auto; training.recompute " << spec::Name(l.recompute) << "\n"
    << "# Relative paths (model.config, data.train.path, a device profile file) are rewritten\n"
    << "# to resolve from this file's directory.\n"
    << "# The input file's comments are not carried over.\n";
  return s.str();
}

// The spec text with the overrides applied, as a YAML tree; yaml-cpp may throw.
absl::StatusOr<YAML::Node> WithOverrides(const std::string& spec_text,
                                         const std::vector<std::string>& overrides,
                                         std::set<std::string>& overridden) {
  YAML::Node root = YAML::Load(spec_text);
  for (const std::string& argument : overrides) {
    std::optional<spec::Override> o = spec::ParseOverride(argument);
    if (!o || !o->bad_index.empty()) return absl::InvalidArgumentError("not an override: " + argument);
    overridden.insert(o->path);
    absl::Status set = SetPath(root, o->path, o->index, YAML::Load(o->value));
    if (!set.ok()) return set;
  }
  return root;
}

// SearchedSpecYaml without the exception handling.
absl::StatusOr<std::string> SearchedSpecYamlOrThrow(const std::string& spec_path,
                                                    const std::string& spec_text,
                                                    const std::vector<std::string>& overrides,
                                                    const planner::Layout& layout,
                                                    int64_t global_batch,
                                                    const std::string& output_path) {
  std::set<std::string> overridden;
  absl::StatusOr<YAML::Node> tree = WithOverrides(spec_text, overrides, overridden);
  if (!tree.ok()) return tree.status();
  YAML::Node root = *tree;
  RebasePaths(root, spec_path, output_path, overridden);
  auto set = [&root](const std::string& path, const YAML::Node& value) {
    return SetPath(root, path, -1, value);
  };
  // The search kept the spec's virtual_stages only where the spec already interleaved
  // (planner::ApplyLayoutTo); everywhere else it planned with auto.
  const YAML::Node parallel = root["parallel"];
  const bool was_interleaved = parallel && parallel.IsMap() && parallel["pipeline_schedule"] &&
                               parallel["pipeline_schedule"].IsScalar() &&
                               parallel["pipeline_schedule"].Scalar() == "interleaved_1f1b";
  if (!(was_interleaved && layout.schedule == spec::PipelineSchedule::kInterleaved1F1B)) {
    absl::Status s = set("parallel.virtual_stages", YAML::Node("auto"));
    if (!s.ok()) return s;
  }
  const std::vector<std::pair<std::string, YAML::Node>> chosen = {
      {"parallel.data_replicate", YAML::Node(layout.data_replicate)},
      {"parallel.data_shard", YAML::Node(layout.data_shard)},
      {"parallel.context", YAML::Node(layout.context)},
      {"parallel.tensor", YAML::Node(layout.tensor)},
      {"parallel.pipeline", YAML::Node(layout.pipeline)},
      {"parallel.pipeline_schedule", YAML::Node(spec::Name(layout.schedule))},
      {"parallel.pipeline_microbatches", YAML::Node("auto")},
      {"sharding.stage", YAML::Node(layout.sharding_stage)},
      {"sharding.offload", YAML::Node(spec::Name(layout.offload))},
      {"sharding.hybrid", YAML::Node(layout.hybrid)},
      {"data.micro_batch_size", YAML::Node(layout.micro_batch_size)},
      {"data.global_batch_size", YAML::Node(global_batch)},
      {"data.grad_accum_steps", YAML::Node("auto")},
      {"training.recompute", YAML::Node(spec::Name(layout.recompute))},
  };
  std::vector<std::pair<std::string, YAML::Node>> with_expert = chosen;
  // The expert degree where the search chose one or the spec wrote one: a dense job's emitted
  // spec stays as it was.
  if (layout.expert > 1 || (parallel && parallel.IsMap() && parallel["expert"])) {
    with_expert.push_back({"parallel.expert", YAML::Node(layout.expert)});
  }
  for (const auto& [path, value] : with_expert) {
    absl::Status s = set(path, value);
    if (!s.ok()) return s;
  }
  const YAML::Node& read = root;  // const: looking a key up must not add it
  if (layout.tensor == 1 && read["parallel"] && read["parallel"]["sequence_parallel"]) {
    absl::Status s = set("parallel.sequence_parallel", YAML::Node(false));
    if (!s.ok()) return s;
  }
  YAML::Emitter out;
  out << root;
  return Header(spec_path, layout, global_batch) + out.c_str() + "\n";
}

}  // namespace

absl::StatusOr<std::string> SearchedSpecYaml(const std::string& spec_path,
                                             const std::string& spec_text,
                                             const std::vector<std::string>& overrides,
                                             const planner::Layout& layout, int64_t global_batch,
                                             const std::string& output_path) {
  try {
    return SearchedSpecYamlOrThrow(spec_path, spec_text, overrides, layout, global_batch,
                                   output_path);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(std::string("cannot write the searched spec: ") + e.what());
  }
}

}  // namespace accel::cli
