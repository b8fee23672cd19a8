// What an exported config says of the job: for each aspect of the plan, whether the target
// expresses it exactly, approximately, or not at all. The round-trip tests compare the plan
// re-imported from the export with the original aspect by aspect: a difference is allowed only
// where the report has a non-exact entry for that aspect.
#ifndef ACCEL_EXPORTERS_EXPORT_REPORT_H_
#define ACCEL_EXPORTERS_EXPORT_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

namespace accel::exporters {

// How faithfully the target holds one aspect.
enum class Fidelity {
  kExact,        // the target's key means the same as accel's value
  kApproximate,  // written, but the target's meaning differs (the detail says how)
  kMissing,      // the target's config cannot express it (it lives in code or a launcher)
};

// The aspects the report speaks of; the round-trip tests compare exactly these.
namespace aspect {
inline constexpr std::string_view kDataReplicate = "mesh.dp_replicate";
inline constexpr std::string_view kDataShard = "mesh.dp_shard";
inline constexpr std::string_view kContext = "mesh.cp";
inline constexpr std::string_view kTensor = "mesh.tp";
inline constexpr std::string_view kPipeline = "mesh.pp";
inline constexpr std::string_view kExpert = "mesh.ep";
inline constexpr std::string_view kGlobalBatch = "batch.global";
inline constexpr std::string_view kMicroBatch = "batch.micro";
inline constexpr std::string_view kGradAccum = "batch.grad_accum";
inline constexpr std::string_view kSeqLen = "batch.seq_len";
inline constexpr std::string_view kStage = "sharding.stage";
inline constexpr std::string_view kHybrid = "sharding.hybrid";
inline constexpr std::string_view kOffload = "sharding.offload";
inline constexpr std::string_view kParamDtype = "precision.params";
inline constexpr std::string_view kComputeDtype = "precision.compute";
inline constexpr std::string_view kReduceDtype = "precision.reduce";
inline constexpr std::string_view kLossScaling = "precision.loss_scaling";
inline constexpr std::string_view kSchedule = "pipeline.schedule";
inline constexpr std::string_view kVirtualStages = "pipeline.virtual_stages";
inline constexpr std::string_view kRecompute = "training.recompute";
inline constexpr std::string_view kOptimizer = "training.optimizer";
inline constexpr std::string_view kLrSchedule = "training.lr_schedule";
inline constexpr std::string_view kGradClip = "training.grad_clip";
inline constexpr std::string_view kSteps = "training.steps";
inline constexpr std::string_view kModel = "model";
inline constexpr std::string_view kData = "data";
inline constexpr std::string_view kWorld = "cluster.world";
}  // namespace aspect

struct ExportNote {
  Fidelity fidelity = Fidelity::kExact;
  std::string aspect;  // one of the aspect:: names
  std::string detail;  // the target's key(s) and, when not exact, how it differs
};

// The report of one export, in the order the writer noted it.
class ExportReport {
 public:
  // Notes `aspect` (an aspect:: name) with `detail`: the target's key(s), and for approximated
  // and missing aspects how the target differs.
  void Exact(std::string_view aspect, std::string detail) { Add(Fidelity::kExact, aspect, std::move(detail)); }
  void Approximate(std::string_view aspect, std::string detail) {
    Add(Fidelity::kApproximate, aspect, std::move(detail));
  }
  void Missing(std::string_view aspect, std::string detail) { Add(Fidelity::kMissing, aspect, std::move(detail)); }

  const std::vector<ExportNote>& notes() const { return notes_; }

  // True when some note on `aspect` is approximate or missing: a round trip may change it.
  bool Names(std::string_view aspect) const;

  // The report as text, three groups ("exact:", "approximated:", "not expressible:"), one
  // "  ASPECT: DETAIL" line per note; every line starts with `prefix` ("# " for a trailing
  // comment, "" for standard error).
  std::string Render(std::string_view prefix) const;

 private:
  void Add(Fidelity fidelity, std::string_view aspect, std::string detail) {
    notes_.push_back({fidelity, std::string(aspect), std::move(detail)});
  }
  std::vector<ExportNote> notes_;
};

}  // namespace accel::exporters

#endif  // ACCEL_EXPORTERS_EXPORT_REPORT_H_
