#include "checkpoint/expert_names.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace accel::exec {
namespace {

constexpr char kGrouped[] = ".mlp.experts.";
constexpr char kRouter[] = ".mlp.gate.weight";

}  // namespace

ExpertNaming ExpertNamingOf(const std::string& model_type) {
  return model_type == "mixtral" ? ExpertNaming::kMixtral : ExpertNaming::kQwen;
}

std::optional<GroupedExpertName> ParseGroupedExpert(const std::string& name) {
  const size_t at = name.rfind(kGrouped);
  if (at == std::string::npos) return std::nullopt;
  const std::string projection = name.substr(at + sizeof(kGrouped) - 1);
  if (projection != "gate_proj" && projection != "up_proj" && projection != "down_proj") return std::nullopt;
  return GroupedExpertName{name.substr(0, at), projection};
}

std::string PerExpertName(const GroupedExpertName& grouped, int64_t expert, ExpertNaming naming) {
  if (naming == ExpertNaming::kQwen) {
    return absl::StrCat(grouped.block, ".mlp.experts.", expert, ".", grouped.projection, ".weight");
  }
  const char* w = grouped.projection == "gate_proj" ? "w1" : grouped.projection == "up_proj" ? "w3" : "w2";
  return absl::StrCat(grouped.block, ".block_sparse_moe.experts.", expert, ".", w, ".weight");
}

std::string HuggingFaceName(const std::string& name, ExpertNaming naming) {
  if (naming != ExpertNaming::kMixtral || !absl::EndsWith(name, kRouter)) return name;
  return absl::StrCat(name.substr(0, name.size() - (sizeof(kRouter) - 1)), ".block_sparse_moe.gate.weight");
}

}  // namespace accel::exec
