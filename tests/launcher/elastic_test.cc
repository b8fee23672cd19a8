// Elastic restarts (#42): the launchers' rendezvous in a shared directory, the restart records,
// and the shrink policy's overrides. The end-to-end drill is tests/multinode/shrink_test.sh.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/elastic_replan.h"
#include "launcher/elastic_rendezvous.h"
#include "launcher/peer_loss_report.h"
#include "launcher/restart_record.h"
#include "tests/common/files.h"
#include "tests/common/temp_dir.h"

namespace accel::exec {
namespace {

using std::chrono::milliseconds;

ElasticRoundRequest RoundRequest(const std::string& dir, int node, std::vector<int> expected, int min_nodes,
                                 milliseconds timeout) {
  ElasticRoundRequest r;
  r.dir = dir;
  r.round = 1;
  r.expected = std::move(expected);
  r.min_nodes = min_nodes;
  r.timeout = timeout;
  r.poll = milliseconds(5);
  r.self.node_id = node;
  r.self.address = "10.0.0." + std::to_string(node + 1);
  r.self.host = "node" + std::to_string(node);
  r.self.pid = 100 + node;
  return r;
}

std::vector<int> Ids(const ElasticRound& round) {
  std::vector<int> ids;
  for (const ElasticMember& m : round.members) ids.push_back(m.node_id);
  return ids;
}

TEST_CASE("elastic rendezvous: every node back closes the round at once, in node order", "[launcher][elastic]") {
  accel::testing::TempDir dir("accel_elastic_test");
  std::vector<std::future<absl::StatusOr<ElasticRound>>> nodes;
  const auto start = std::chrono::steady_clock::now();
  for (int k : {2, 0, 1}) {
    nodes.push_back(std::async(std::launch::async, [&dir, k] {
      return JoinElasticRound(RoundRequest(dir.path(), k, {0, 1, 2}, 2, milliseconds(60000)));
    }));
  }
  std::vector<int> self_index;
  for (auto& n : nodes) {
    absl::StatusOr<ElasticRound> round = n.get();
    REQUIRE(round.ok());
    CHECK(Ids(*round) == std::vector<int>{0, 1, 2});
    CHECK(round->members[0].address == "10.0.0.1");
    self_index.push_back(round->self_index);
  }
  CHECK(self_index == std::vector<int>{2, 0, 1});
  // Not the 60 s timeout: the round closed when the last expected node arrived.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}

TEST_CASE("elastic rendezvous: after the timeout the nodes present go on and renumber", "[launcher][elastic]") {
  accel::testing::TempDir dir("accel_elastic_test");
  auto a = std::async(std::launch::async,
                      [&] { return JoinElasticRound(RoundRequest(dir.path(), 0, {0, 1, 2}, 2, milliseconds(300))); });
  auto b = std::async(std::launch::async,
                      [&] { return JoinElasticRound(RoundRequest(dir.path(), 2, {0, 1, 2}, 2, milliseconds(300))); });
  absl::StatusOr<ElasticRound> ra = a.get();
  absl::StatusOr<ElasticRound> rb = b.get();
  REQUIRE(ra.ok());
  REQUIRE(rb.ok());
  CHECK(Ids(*ra) == std::vector<int>{0, 2});
  CHECK(Ids(*rb) == std::vector<int>{0, 2});
  CHECK(ra->self_index == 0);
  CHECK(rb->self_index == 1);

  // Node 1 comes back after the others went on: it is told so and does not join.
  absl::StatusOr<ElasticRound> late = JoinElasticRound(RoundRequest(dir.path(), 1, {0, 1, 2}, 2, milliseconds(300)));
  REQUIRE_FALSE(late.ok());
  CHECK(late.status().message() ==
        "restart 1 went on without node 1: the other nodes had stopped waiting for it (members: node ids 0, 2)");
}

TEST_CASE("elastic rendezvous: fewer nodes than --min-nodes is an error for everyone", "[launcher][elastic]") {
  accel::testing::TempDir dir("accel_elastic_test");
  absl::StatusOr<ElasticRound> alone = JoinElasticRound(RoundRequest(dir.path(), 1, {0, 1, 2}, 2, milliseconds(200)));
  REQUIRE_FALSE(alone.ok());
  CHECK(alone.status().message() == "only 1 of the 3 nodes rejoined within 0.2 s (node ids 1); --min-nodes is 2");
  // A node arriving later finds the failed round and fails with the same account.
  absl::StatusOr<ElasticRound> later = JoinElasticRound(RoundRequest(dir.path(), 2, {0, 1, 2}, 2, milliseconds(200)));
  REQUIRE_FALSE(later.ok());
  CHECK(later.status().message() == "only 1 of the 3 nodes rejoined within 0.2 s (node ids 1); --min-nodes is 2");
}

TEST_CASE("elastic rendezvous: rounds are separate and member records round-trip", "[launcher][elastic]") {
  accel::testing::TempDir dir("accel_elastic_test");
  ElasticRoundRequest first = RoundRequest(dir.path(), 0, {0}, 1, milliseconds(1000));
  REQUIRE(JoinElasticRound(first).ok());
  ElasticRoundRequest second = first;
  second.round = 2;
  second.self.address = "10.9.9.9";
  absl::StatusOr<ElasticRound> round = JoinElasticRound(second);
  REQUIRE(round.ok());
  CHECK(round->members.front().address == "10.9.9.9");

  ElasticMember m{3, "fd00::3", "h3", 4242};
  absl::StatusOr<ElasticMember> back = ElasticMemberFromJson(ElasticMemberJson(m));
  REQUIRE(back.ok());
  CHECK(back->node_id == 3);
  CHECK(back->address == "fd00::3");
  CHECK(back->host == "h3");
  CHECK(back->pid == 4242);
  CHECK(ElasticMemberFromJson("{\"node_id\": \"x\"}").status().message() ==
        "not a member record (needs node_id and address)");
  CHECK_FALSE(ElasticMemberFromJson("not json").ok());
}

TEST_CASE("restart records: restarts.jsonl, and the time each restart cost in summary.json", "[launcher][elastic]") {
  accel::testing::TempDir dir("accel_restart_record_test");
  RestartRecord r;
  r.restart = 1;
  r.nodes_before = 3;
  r.nodes_after = 2;
  r.world_before = 6;
  r.world_after = 4;
  r.nodes_kept = {1, 2};
  r.resumed_step = 20;
  r.last_step_before = 26;
  r.last_step_unix = 1000.5;
  r.failed_unix = 1003;
  r.relaunch_unix = 1008;
  CHECK(RestartRecordJson(r) ==
        "{\"restart\":1,\"nodes_before\":3,\"nodes_after\":2,\"world_before\":6,\"world_after\":4,"
        "\"nodes_kept\":[1,2],\"resumed_step\":20,\"last_step_before\":26,\"last_step_unix\":1000.5,"
        "\"failed_unix\":1003.0,\"relaunch_unix\":1008.0}");
  REQUIRE(WriteRestartRecords(dir.path(), {r, r}).ok());
  CHECK(accel::testing::ReadAll(dir.File("restarts.jsonl")) == RestartRecordJson(r) + "\n" + RestartRecordJson(r) + "\n");

  // No summary.json (this node did not run rank 0): nothing is written.
  REQUIRE(AddRestartsToSummary(dir.path(), {r}).ok());
  CHECK_FALSE(std::filesystem::exists(dir.File("summary.json")));

  // The redone step 26 ended at 1020.25 in the final metrics: 19.75 s later than the first time.
  std::ofstream(dir.File("metrics.jsonl")) << "{\"step\":25,\"loss\":3.1,\"unix_time\":1019.0}\n"
                                           << "{\"step\":26,\"loss\":3.0,\"unix_time\":1020.25}\n";
  std::ofstream(dir.File("summary.json")) << "{\"steps_done\":80,\"final_loss\":2.5}\n";
  const std::optional<LastStep> last = LastMetricsStep(dir.path());
  REQUIRE(last.has_value());
  CHECK(last->step == 26);
  CHECK(last->unix_time == 1020.25);
  REQUIRE(AddRestartsToSummary(dir.path(), {r}).ok());
  const nlohmann::json summary = nlohmann::json::parse(accel::testing::ReadAll(dir.File("summary.json")));
  CHECK(summary["steps_done"] == 80);
  REQUIRE(summary["restarts"].size() == 1);
  CHECK(summary["restarts"][0]["time_lost_seconds"].get<double>() == Approx(19.75));
  CHECK(summary["restarts"][0]["nodes_kept"] == nlohmann::json::array({1, 2}));
  // The worker's keys keep their order; restarts come last.
  CHECK(accel::testing::ReadAll(dir.File("summary.json")).rfind("{\"steps_done\":80,\"final_loss\":2.5,\"restarts\":", 0) == 0);
}

TEST_CASE("a rank that lost a peer names the nodes that did not report", "[launcher][elastic]") {
  const std::vector<int> nodes = {0, 0, 1, 1, 2, 2};  // rank -> node
  RollCall call;
  call.silent_ranks = {2, 3};
  CHECK(PeerLossReport(nodes, 0, "10.0.0.1:29500", call) ==
        "; after the failure no word within 1 s from node 1 (ranks 2, 3): it is likely down or cut off");
  call.silent_ranks = {2, 3, 5};
  CHECK(PeerLossReport(nodes, 0, "10.0.0.1:29500", call) ==
        "; after the failure no word within 1 s from node 1 (ranks 2, 3) and node 2 (rank 5): they are "
        "likely down or cut off");
  call.silent_ranks = {};
  CHECK(PeerLossReport(nodes, 0, "10.0.0.1:29500", call).empty());
  call.store_answered = false;
  call.wait_seconds = 2;
  CHECK(PeerLossReport(nodes, 3, "10.0.0.1:29500", call) ==
        "; the rendezvous store at 10.0.0.1:29500 (node 0) did not answer within 2 s either: this node "
        "(node 1) is likely cut off from it");
}

// A plan as ShrinkOverrides reads it: mesh sizes, batch and topology.
ir::Plan MeshPlan(int nodes, int devices, int replicate, int shard, int tp, int pp) {
  ir::Plan plan;
  plan.mutable_topology()->set_nodes(nodes);
  plan.mutable_topology()->set_devices_per_node(devices);
  plan.mutable_topology()->set_world_size(nodes * devices);
  for (auto [name, size] : std::vector<std::pair<std::string, int>>{
           {"pp", pp}, {"dp_replicate", replicate}, {"dp_shard", shard}, {"cp", 1}, {"tp", tp}}) {
    ir::MeshAxis* axis = plan.mutable_mesh()->add_axes();
    axis->set_name(name);
    axis->set_size(size);
  }
  plan.mutable_batch()->set_micro_batch_size(2);
  plan.mutable_batch()->set_global_batch_size(48);
  return plan;
}

TEST_CASE("shrink policy: data parallelism takes the lost ranks, the global batch stays", "[launcher][elastic]") {
  using accel::cli::ShrinkOverrides;
  // Plain data parallel, 4 nodes x 2 ranks with tp 2: dp 4 -> 3 on 3 nodes.
  CHECK(ShrinkOverrides(MeshPlan(4, 2, 4, 1, 2, 1), 3).value() ==
        std::vector<std::string>{"cluster.nodes=3", "parallel.data_replicate=3", "parallel.data_shard=1",
                                 "data.micro_batch_size=2", "data.global_batch_size=48", "data.grad_accum_steps=auto"});
  // Pure sharding (ZeRO / FSDP): the shard axis shrinks.
  CHECK(ShrinkOverrides(MeshPlan(4, 2, 1, 8, 1, 1), 2).value()[1] == "parallel.data_replicate=1");
  CHECK(ShrinkOverrides(MeshPlan(4, 2, 1, 8, 1, 1), 2).value()[2] == "parallel.data_shard=4");
  // Hybrid sharding keeps its shard degree; the replicas shrink.
  CHECK(ShrinkOverrides(MeshPlan(4, 2, 4, 2, 1, 1), 3).value()[1] == "parallel.data_replicate=3");
  CHECK(ShrinkOverrides(MeshPlan(4, 2, 4, 2, 1, 1), 3).value()[2] == "parallel.data_shard=2");
  // Pipelines: the microbatches follow the accumulation.
  CHECK(ShrinkOverrides(MeshPlan(4, 2, 4, 1, 1, 2), 3).value().back() == "parallel.pipeline_microbatches=auto");

  CHECK(ShrinkOverrides(MeshPlan(2, 2, 1, 1, 4, 1), 1).status().message() ==
        "1 node holds 2 ranks, not a multiple of the 4 ranks of one data-parallel replica (tensor x "
        "pipeline x context)");
  CHECK(ShrinkOverrides(MeshPlan(4, 1, 2, 2, 1, 1), 3).status().message() ==
        "3 nodes give a data-parallel degree of 3, not a multiple of the shard degree 2 that hybrid "
        "sharding keeps");
}

}  // namespace
}  // namespace accel::exec
