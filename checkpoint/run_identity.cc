#include "checkpoint/run_identity.h"

#include <sys/random.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checkpoint/crc32c.h"
#include "checkpoint/resume_layout.h"

namespace accel::exec {
namespace {

// json[key] when it is a string, else "".
std::string StringMember(const nlohmann::json& json, const char* key) {
  if (!json.is_object()) return "";
  auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

uint32_t PlanHash(const ir::Plan& plan) {
  ir::Plan content = plan;
  content.mutable_job()->clear_spec_file();
  content.mutable_job()->clear_overrides();
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    content.SerializeToCodedStream(&coded);
  }
  return Crc32c(bytes);
}

std::string PlanHashHex(const ir::Plan& plan) { return absl::StrFormat("0x%08x", PlanHash(plan)); }

absl::StatusOr<std::string> NewRunId() {
  uint8_t bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat("getrandom: ", std::strerror(errno)));
    got += static_cast<size_t>(n);
  }
  std::string id;
  for (uint8_t b : bytes) absl::StrAppendFormat(&id, "%02x", b);
  return id;
}

CheckpointIdentity IdentityOfPlan(const ir::Plan& plan, std::string run_id) {
  return {plan.job().name(), PlanHashHex(plan), std::move(run_id), ResumeLayoutOf(plan)};
}

std::string RunLabel(const std::string& run_id) {
  return run_id.empty() ? std::string("an unrecorded run") : absl::StrCat("run ", run_id.substr(0, 8));
}

nlohmann::json IdentityToJson(const CheckpointIdentity& identity) {
  return {{"job", identity.job}, {"plan_hash", identity.plan_hash}, {"run_id", identity.run_id}};
}

CheckpointIdentity IdentityFromManifest(const nlohmann::json& manifest) {
  CheckpointIdentity identity;
  if (!manifest.is_object()) return identity;
  if (auto run = manifest.find("run"); run != manifest.end()) {
    identity.job = StringMember(*run, "job");
    identity.plan_hash = StringMember(*run, "plan_hash");
    identity.run_id = StringMember(*run, "run_id");
  }
  if (auto layout = manifest.find("layout"); layout != manifest.end() && layout->is_object()) {
    identity.layout = *layout;
  }
  return identity;
}

}  // namespace accel::exec
