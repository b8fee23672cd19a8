#include "launcher/elastic_rendezvous.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/durable_file.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

json MemberToJson(const ElasticMember& m) {
  return {{"node_id", m.node_id}, {"address", m.address}, {"host", m.host}, {"pid", m.pid}};
}

absl::StatusOr<ElasticMember> MemberFromJson(const json& j) {
  if (!j.is_object() || !j.contains("node_id") || !j["node_id"].is_number_integer() ||
      !j.contains("address") || !j["address"].is_string()) {
    return absl::InvalidArgumentError("not a member record (needs node_id and address)");
  }
  ElasticMember m;
  m.node_id = j["node_id"].get<int>();
  m.address = j["address"].get<std::string>();
  if (j.contains("host") && j["host"].is_string()) m.host = j["host"].get<std::string>();
  if (j.contains("pid") && j["pid"].is_number_integer()) m.pid = j["pid"].get<int64_t>();
  return m;
}

std::optional<std::string> ReadSmallFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The member records in round_dir, ascending by node id; unreadable or half-written ones (a
// writer renames complete files into place, so none should be) are skipped.
std::vector<ElasticMember> ListMembers(const fs::path& round_dir) {
  std::vector<ElasticMember> members;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(round_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("node", 0) != 0) continue;
    const std::optional<std::string> text = ReadSmallFile(e.path());
    if (!text) continue;
    absl::StatusOr<ElasticMember> m = ElasticMemberFromJson(*text);
    if (m.ok()) members.push_back(*std::move(m));
  }
  std::sort(members.begin(), members.end(),
            [](const ElasticMember& a, const ElasticMember& b) { return a.node_id < b.node_id; });
  return members;
}

std::string NodeIds(const std::vector<ElasticMember>& members) {
  std::vector<int> ids;
  for (const ElasticMember& m : members) ids.push_back(m.node_id);
  return absl::StrJoin(ids, ", ");
}

// The closing decision of a round: its members, and whether it failed (fewer than min_nodes).
struct Closing {
  std::vector<ElasticMember> members;
  bool failed = false;
};

// Publishes closing as round_dir/closed unless another launcher did first (then theirs holds:
// link(2) never replaces an existing name, so exactly one closing wins). Errors: Internal.
absl::Status Close(const fs::path& round_dir, const Closing& mine, int self_id) {
  json members = json::array();
  for (const ElasticMember& m : mine.members) members.push_back(MemberToJson(m));
  const std::string temp = absl::StrCat(".closed.", self_id, ".", ::getpid());
  if (absl::Status s = WriteFileAtomically(round_dir.string(), temp,
                                           json{{"failed", mine.failed}, {"members", members}}.dump());
      !s.ok()) {
    return s;
  }
  const fs::path temp_path = round_dir / temp;
  const fs::path closed = round_dir / "closed";
  const int linked = ::link(temp_path.c_str(), closed.c_str());
  const int link_errno = errno;
  ::unlink(temp_path.c_str());
  if (linked != 0 && link_errno != EEXIST) {
    return absl::InternalError(absl::StrCat("cannot close ", round_dir.string(), ": ", std::strerror(link_errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<Closing>> ReadClosed(const fs::path& round_dir) {
  const std::optional<std::string> text = ReadSmallFile(round_dir / "closed");
  if (!text) return std::optional<Closing>();
  const json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("members") || !j["members"].is_array()) {
    return absl::InternalError(absl::StrCat((round_dir / "closed").string(), " is not a round's member list"));
  }
  Closing c;
  c.failed = j.value("failed", false);
  for (const json& m : j["members"]) {
    absl::StatusOr<ElasticMember> member = MemberFromJson(m);
    if (!member.ok()) return absl::InternalError(absl::StrCat((round_dir / "closed").string(), ": ", member.status().message()));
    c.members.push_back(*std::move(member));
  }
  return std::optional<Closing>(std::move(c));
}

// What the caller learns from a closed round.
absl::StatusOr<ElasticRound> Outcome(const Closing& closing, const ElasticRoundRequest& request) {
  const auto self = std::find_if(closing.members.begin(), closing.members.end(),
                                 [&](const ElasticMember& m) { return m.node_id == request.self.node_id; });
  if (closing.failed) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "only %d of the %d nodes rejoined within %g s (node ids %s); --min-nodes is %d",
        closing.members.size(), request.expected.size(),
        std::chrono::duration<double>(request.timeout).count(),
        closing.members.empty() ? "none" : NodeIds(closing.members), request.min_nodes));
  }
  if (self == closing.members.end()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "restart %d went on without node %d: the other nodes had stopped waiting for it (members: "
        "node ids %s)",
        request.round, request.self.node_id, NodeIds(closing.members)));
  }
  ElasticRound round;
  round.members = closing.members;
  round.self_index = static_cast<int>(self - closing.members.begin());
  return round;
}

}  // namespace

std::string ElasticMemberJson(const ElasticMember& member) { return MemberToJson(member).dump(); }

absl::StatusOr<ElasticMember> ElasticMemberFromJson(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return MemberFromJson(j);
}

absl::StatusOr<ElasticRound> JoinElasticRound(const ElasticRoundRequest& request) {
  const fs::path round_dir = fs::path(request.dir) / absl::StrCat("round", request.round);
  std::error_code ec;
  fs::create_directories(round_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", round_dir.string(), ": ", ec.message()));
  if (absl::Status s = WriteFileAtomically(round_dir.string(), absl::StrCat("node", request.self.node_id),
                                           ElasticMemberJson(request.self));
      !s.ok()) {
    return s;
  }
  const Clock::time_point joined = Clock::now();
  for (;;) {
    absl::StatusOr<std::optional<Closing>> closed = ReadClosed(round_dir);
    if (!closed.ok()) return closed.status();
    if (closed->has_value()) return Outcome(**closed, request);
    Closing mine;
    mine.members = ListMembers(round_dir);
    const bool everyone = std::all_of(request.expected.begin(), request.expected.end(), [&](int id) {
      return std::any_of(mine.members.begin(), mine.members.end(), [id](const ElasticMember& m) { return m.node_id == id; });
    });
    if (everyone || Clock::now() - joined >= request.timeout) {
      mine.failed = static_cast<int>(mine.members.size()) < request.min_nodes;
      if (absl::Status s = Close(round_dir, mine, request.self.node_id); !s.ok()) return s;
      continue;  // read whichever closing won
    }
    std::this_thread::sleep_for(request.poll);
  }
}

}  // namespace accel::exec
