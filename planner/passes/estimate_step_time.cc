// estimate-step-time: the seconds of one optimizer step on the slowest stage, with compute per
// stage, communication per group and the pipeline bubble (planner/step_time_estimator.h),
// written to plan.step_time. The device profile is cluster.device_profile (a built-in name or
// a file the loader read), else the built-in profile of the device, recorded as resolved.
// An unknown profile name is error E0801 on cluster.device_profile.
#include <string>

#include "common/diag_codes.h"
#include "common/spellcheck.h"
#include "ir/enum_names.h"
#include "planner/device_profiles.h"
#include "planner/pass.h"
#include "planner/step_time_estimator.h"

namespace accel::planner {
namespace {

std::string NameList() {
  std::string list;
  for (const std::string& n : BuiltinDeviceProfileNames()) list += (list.empty() ? "" : ", ") + n;
  return list;
}

class EstimateStepTimePass : public Pass {
 public:
  std::string_view name() const override { return "estimate-step-time"; }

  void Run(PlanContext& context) override {
    std::optional<ir::DeviceProfile> profile = Profile(context);
    if (!profile) return;
    if (context.step_time_only_if_fits()) {
      for (const ir::MemoryEstimate& m : context.plan().memory()) {
        if (!m.fits()) return;
      }
    }
    // Summary mode wrote no shard units or buckets: their totals are in the context.
    const ShardTotals* totals = context.shard_totals();
    const bool summary = totals != nullptr;
    ShardTotals from_plan;
    if (!summary) {
      from_plan = ShardTotalsFromPlan(context.plan());
      totals = &from_plan;
    }
    const absl::Status status = EstimateStepTimeInto(context.plan(), *profile, *totals, !summary,
                                                     *context.plan().mutable_step_time());
    if (!status.ok()) {
      context.plan().clear_step_time();
      context.Error(nullptr, "", "internal error: " + std::string(status.message()));
    }
  }

 private:
  static std::optional<ir::DeviceProfile> Profile(PlanContext& context) {
    const spec::ClusterSpec& cluster = context.spec().cluster;
    if (cluster.device_profile_values) {
      return DeviceProfileFromValues(*cluster.device_profile_values, cluster.device_profile);
    }
    if (!cluster.device_profile.empty()) {
      std::optional<ir::DeviceProfile> builtin = BuiltinDeviceProfile(cluster.device_profile);
      if (builtin) return builtin;
      Diagnostic& d = context.Error(
          codes::kUnknownDeviceProfile, "cluster.device_profile",
          "unknown device profile '" + cluster.device_profile + "'; the built-in profiles are " +
              NameList() + ", or name a device-profile .json file (accel calibrate writes one)");
      if (std::optional<std::string> close =
              ClosestMatch(cluster.device_profile, BuiltinDeviceProfileNames())) {
        d.Note("did you mean '" + *close + "'?");
      }
      return std::nullopt;
    }
    const ir::Topology& topo = context.plan().topology();
    const std::string name = DefaultDeviceProfileName(topo.device_type(), topo.device_model());
    context.Resolve("cluster.device_profile", name,
                    "built-in profile for device " + std::string(ir::Name(topo.device_type())) +
                        (topo.device_model().empty() ? "" : " " + topo.device_model()) +
                        " (cpu -> cpu; cuda -> the h200/h100/a100 its device_model names, "
                        "else h100)");
    return BuiltinDeviceProfile(name);
  }
};

}  // namespace

std::unique_ptr<Pass> MakeEstimateStepTimePass() {
  return std::make_unique<EstimateStepTimePass>();
}

}  // namespace accel::planner
