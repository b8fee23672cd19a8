#include "launcher/resume_check.h"

#include <filesystem>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/resume_layout.h"
#include "common/diag_codes.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Written by the executor's Trainer::SaveState next to the tensors.
constexpr char kTrainerStateFile[] = "trainer_state.json";

// An E0604 error, or with warning a W0601 warning, at field.
PlanIssue ResumeIssue(const char* code, const char* field, std::string message, bool warning) {
  PlanIssue issue;
  issue.code = code;
  issue.field = field;
  issue.message = std::move(message);
  issue.warning = warning;
  return issue;
}

// The recorded value of field, as text ("?" when the checkpoint lacks it).
std::string ValueOf(const json& layout, const char* field) {
  auto it = layout.find(field);
  return it == layout.end() ? std::string("?") : LayoutValueText(*it);
}

// The step directory to check: checkpoint_dir itself when it holds a manifest, else the newest
// checkpoint under it that verifies.
absl::StatusOr<CheckpointInfo> ResolveCheckpoint(const std::string& checkpoint_dir) {
  std::error_code ec;
  if (!fs::exists(fs::path(checkpoint_dir) / "manifest.json", ec)) {
    return CheckpointStore(checkpoint_dir, 1).LatestGood();
  }
  // The step from the directory's name (step_NNNNNNNN); trainer_state.json's, read later, wins.
  const std::string name = fs::path(checkpoint_dir).lexically_normal().filename().string();
  int64_t step = 0;
  if (name.rfind("step_", 0) != 0 || !absl::SimpleAtoi(name.substr(5), &step)) step = 0;
  return CheckpointInfo{step, checkpoint_dir};
}

// The first field, in the order they are checked, that makes plan write shard files; nullptr when
// it writes the single-file format (the layout's "format").
const char* FirstShardingField(const json& now) {
  if (now.value("sharding.stage", 0) != 0) return "sharding.stage";
  for (const char* field : {"parallel.tensor", "parallel.pipeline", "parallel.expert"}) {
    if (now.value(field, 1) != 1) return field;
  }
  return "precision.params";
}

struct Comparison {
  const json& then;  // the checkpoint's layout
  const json& now;   // this plan's
  ResumeReport& report;

  bool Differs(const char* field) const { return then.contains(field) && then[field] != now[field]; }
  std::string Change(const char* field) const {
    return absl::StrCat(field, " ", ValueOf(then, field), " -> ", ValueOf(now, field));
  }
  void Error(const char* field, std::string message) const {
    report.errors.push_back(ResumeIssue(codes::kResumeMismatch, field, std::move(message), false));
  }
};

void CompareModel(const Comparison& c) {
  bool named = false;
  for (const LayoutField& f : ResumeLayoutFields()) {
    if (f.kind != LayoutFieldKind::kModel || !c.Differs(f.field)) continue;
    const std::string field = f.field;
    if (field == "model") {
      if (named) continue;  // the parameter count only when no named field explains it
      c.Error(f.field, absl::StrCat("the checkpoint ", c.report.checkpoint_dir, " holds a model of ",
                                    ValueOf(c.then, f.field), " parameters; this plan's has ",
                                    ValueOf(c.now, f.field), ", so its tensors cannot load"));
      continue;
    }
    named = true;
    c.Error(f.field, absl::StrCat("the checkpoint ", c.report.checkpoint_dir, " was trained with ", field, " ",
                                  ValueOf(c.then, f.field), "; this plan has ", ValueOf(c.now, f.field),
                                  ", so its tensors cannot load"));
  }
}

// Degrees, sharding stage, precision and optimizer: what the file format allows.
void CompareLayout(const Comparison& c) {
  const bool single = c.then.value("format", "") == "single";
  if (single && c.now.value("format", "") == "sharded") {
    c.Error(FirstShardingField(c.now),
            absl::StrCat("the checkpoint ", c.report.checkpoint_dir,
                         " is unsharded (model.safetensors, optimizer.pt): it resumes only at sharding.stage 0 "
                         "with fp32 parameters and no tensor, pipeline or expert parallelism; `accel export` "
                         "turns its weights into a model.init_from"));
    return;
  }
  if (c.Differs("padded_vocab_size")) {
    // The padded rows take part in the softmax, so the executor refuses to reshard them.
    c.Error("parallel.tensor", absl::StrCat("the checkpoint ", c.report.checkpoint_dir, " pads the vocabulary to ",
                                            ValueOf(c.then, "padded_vocab_size"), " rows (parallel.tensor ",
                                            ValueOf(c.then, "parallel.tensor"), "); this plan pads it to ",
                                            ValueOf(c.now, "padded_vocab_size"), ", so the embedding cannot load"));
    return;
  }
  for (const LayoutField& f : ResumeLayoutFields()) {
    if (!c.Differs(f.field)) continue;
    if (f.kind == LayoutFieldKind::kReshard || f.kind == LayoutFieldKind::kPrecision) {
      c.report.resharded.push_back(c.Change(f.field));
    }
  }
  const char* optimizer = "training.optimizer.name";
  const std::string kind = ValueOf(c.then, optimizer);
  if (!c.Differs(optimizer)) {
    c.report.carried.push_back(absl::StrCat("optimizer state (", kind, ")"));
  } else if (single) {
    c.Error(optimizer, absl::StrCat("the checkpoint ", c.report.checkpoint_dir, " is unsharded and holds ", kind,
                                    " state (optimizer.pt), which ", optimizer, " ", ValueOf(c.now, optimizer),
                                    " cannot load"));
  } else {
    c.report.lost.push_back(absl::StrCat("optimizer state: the checkpoint's is ", kind, "'s; ",
                                         ValueOf(c.now, optimizer), " starts from zero state"));
  }
}

// Another global batch: an `auto` that resolved differently is an error (the user did not ask for
// it), an explicit one a warning (the user did).
void CompareBatch(const Comparison& c) {
  const char* field = "data.global_batch_size";
  if (!c.Differs(field)) return;
  const std::string then = ValueOf(c.then, field), now = ValueOf(c.now, field);
  if (c.now.value("data.global_batch_size_auto", false)) {
    c.Error(field, absl::StrCat("data.global_batch_size auto resolves to ", now, " under this layout, but the "
                                "checkpoint ", c.report.checkpoint_dir, " was trained with ", then,
                                ": set data.global_batch_size: ", then, " to continue with the same batch, or ",
                                now, " to change it"));
    return;
  }
  c.report.warnings.push_back(ResumeIssue(codes::kResumeBatchChanged, field,
                                          absl::StrCat("data.global_batch_size ", now, " differs from the checkpoint's ",
                                                       then, ": the rest of the run trains with another batch"),
                                          true));
}

// The data position trainer_state.json records, and whether it still means the same place.
void CompareData(const Comparison& c, const std::string& dir) {
  std::string position = "data position";
  if (absl::StatusOr<std::string> bytes = CheckpointStore::ReadFile(dir, kTrainerStateFile); bytes.ok()) {
    const json state = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
    if (state.is_object() && state.contains("data_epoch") && state.contains("data_samples")) {
      position = absl::StrCat("data position (epoch ", state["data_epoch"].dump(), " after ",
                              state["data_samples"].dump(), " windows)");
      if (state.contains("step") && state["step"].is_number_integer()) c.report.step = state["step"].get<int64_t>();
    }
  }
  std::vector<std::string> moved;
  for (const char* field : {"data.seq_len", "data.train.path"}) {
    if (c.Differs(field)) moved.push_back(c.Change(field));
  }
  if (moved.empty()) {
    c.report.carried.push_back(position);
  } else {
    c.report.lost.push_back(absl::StrCat(position, ": it counts windows of the checkpoint's data (",
                                         absl::StrJoin(moved, "; "), "), so training continues elsewhere in "
                                         "the data"));
  }
}

}  // namespace

absl::StatusOr<ResumeReport> CheckResume(const ir::Plan& plan, const std::string& checkpoint_dir) {
  absl::StatusOr<CheckpointInfo> picked = ResolveCheckpoint(checkpoint_dir);
  if (!picked.ok()) return picked.status();
  if (absl::Status s = CheckpointStore::Verify(picked->path); !s.ok()) return s;
  absl::StatusOr<CheckpointIdentity> identity = CheckpointStore::ReadIdentity(picked->path);
  if (!identity.ok()) return identity.status();
  ResumeReport report;
  report.checkpoint_dir = picked->path;
  report.step = picked->step;
  report.identity = *identity;
  if (identity->layout.is_null()) {
    report.lost.push_back("nothing known: the checkpoint records no layout (written before accel recorded one); "
                          "the workers check it when they load it");
    return report;
  }
  const json now = ResumeLayoutOf(plan);
  const Comparison c{identity->layout, now, report};
  CompareModel(c);
  // Another model cannot load at all: what would be resharded or lost does not matter.
  if (!report.errors.empty()) return report;
  report.carried.push_back("parameters");
  CompareLayout(c);
  CompareBatch(c);
  CompareData(c, picked->path);
  return report;
}

std::string ResumeReportText(const ResumeReport& r) {
  const CheckpointIdentity& id = r.identity;
  std::string text = absl::StrCat("resume from ", r.checkpoint_dir, " (step ", r.step);
  if (!id.job.empty()) absl::StrAppend(&text, "; job '", id.job, "', ", RunLabel(id.run_id), ", plan ", id.plan_hash);
  absl::StrAppend(&text, "): ", r.errors.empty() ? "loads under this layout"
                                                 : "does not load under this layout (see the errors above)",
                  "\n");
  if (!r.errors.empty()) return text;
  auto line = [&text](const char* what, const std::vector<std::string>& items, const char* none) {
    absl::StrAppend(&text, "  ", what, ": ", items.empty() ? none : absl::StrJoin(items, "; "), "\n");
  };
  line("resharded", r.resharded, "nothing (same layout)");
  line("carried over", r.carried, "nothing");
  line("lost", r.lost, "nothing");
  return text;
}

}  // namespace accel::exec
