// The pipeline CSV (ir/pipeline_csv.h, torch.distributed.pipelining's schedule format): every
// schedule accel plans round-trips, PyTorch's own ZBV order reads back as accel's, and parse
// errors are exact.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/pipeline_csv.h"
#include "ir/pipeline_simulation.h"
#include "planner/pipeline_schedules.h"
#include "planner_test_util.h"

namespace accel::planner {
namespace {

using testing::kBaseSpec;
using testing::PlanYaml;

std::string CsvOpsText(const ir::PipelineStage& stage, bool compute_only) {
  std::string out;
  for (const ir::PipelineOp& op : stage.ops()) {
    const bool compute = op.kind() == ir::FORWARD || op.kind() == ir::BACKWARD ||
                         op.kind() == ir::BACKWARD_INPUT || op.kind() == ir::BACKWARD_WEIGHT;
    if (compute_only && !compute) continue;
    out += std::to_string(op.kind()) + ":" + std::to_string(op.microbatch()) + ":" +
           std::to_string(op.peer_stage()) + ":" + std::to_string(op.chunk()) + " ";
  }
  return out;
}

TEST_CASE("every planned schedule round-trips through the pipeline CSV") {
  for (const char* schedule : {"gpipe", "1f1b", "interleaved_1f1b", "zb_h1", "zbv"}) {
    for (const char* pp : {"2", "4"}) {
      auto planned = PlanYaml(kBaseSpec, {std::string("parallel.pipeline=") + pp, "parallel.tensor=1",
                                          std::string("parallel.pipeline_schedule=") + schedule,
                                          "data.grad_accum_steps=8"});
      INFO(schedule << " pp " << pp << "\n" << planned.diagnostics);
      REQUIRE(planned.result.ok);
      const ir::Pipeline& pipe = planned.result.plan.pipeline();
      const std::string csv = ir::PipelineToCsv(pipe);
      absl::StatusOr<std::vector<ir::PipelineStage>> parsed = ir::ParsePipelineCsv(csv);
      REQUIRE(parsed.ok());
      REQUIRE(static_cast<int>(parsed->size()) == pipe.stages_size());
      for (int s = 0; s < pipe.stages_size(); ++s) {
        const ir::PipelineStage& back = (*parsed)[static_cast<size_t>(s)];
        CHECK(back.index() == s);
        CHECK(CsvOpsText(back, false) == CsvOpsText(pipe.stages(s), false));
        REQUIRE(back.chunks_size() == pipe.stages(s).chunks_size());
        for (int c = 0; c < back.chunks_size(); ++c) {
          CHECK(back.chunks(c).virtual_stage() == pipe.stages(s).chunks(c).virtual_stage());
        }
      }
    }
  }
}

TEST_CASE("pipeline CSV cells are PyTorch's action strings") {
  const ir::Pipeline one_f_one_b = ScheduledPipeline({ir::PIPELINE_SCHEDULE_1F1B, 2, 1, 2});
  CHECK(ir::PipelineToCsv(one_f_one_b) ==
        "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
        "1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n");
  const ir::Pipeline zbv = ScheduledPipeline({ir::PIPELINE_SCHEDULE_ZBV, 2, 2, 4});
  const std::string csv = ir::PipelineToCsv(zbv);
  CHECK(csv.substr(0, csv.find('\n')) ==
        "0F0,0SEND_F0,0F1,0SEND_F1,0F2,0SEND_F2,3RECV_F0,3F0,3I0,3SEND_B0,3W0,3RECV_F1,3F1,3I1,"
        "3SEND_B1,3W1,0F3,0SEND_F3,0RECV_B0,0I0,0W0,3RECV_F2,3F2,3I2,3SEND_B2,3W2,0RECV_B1,0I1,"
        "0W1,3RECV_F3,3F3,3I3,3SEND_B3,3W3,0RECV_B2,0I2,0W2,0RECV_B3,0I3,0W3");
}

// tests/testdata/pipeline/zbv_p2_m4_pytorch.csv: ScheduleZBVZeroBubble's compute-only
// pipeline_order for 2 ranks and 4 microbatches as PipelineScheduleMulti._dump_csv writes it
// (csv.writer: "\r\n" rows, None as an empty cell: rank 1's leading idle step), derived by
// hand from torch/distributed/pipelining/schedules.py (pytorch/pytorch at 00722e648b74).
TEST_CASE("PyTorch's ZBV CSV reads back as accel's ZBV compute order") {
  std::ifstream file(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/pipeline/zbv_p2_m4_pytorch.csv",
                     std::ios::binary);
  REQUIRE(file);
  std::stringstream text;
  text << file.rdbuf();
  absl::StatusOr<std::vector<ir::PipelineStage>> parsed = ir::ParsePipelineCsv(text.str());
  REQUIRE(parsed.ok());
  const ir::Pipeline zbv = ScheduledPipeline({ir::PIPELINE_SCHEDULE_ZBV, 2, 2, 4});
  REQUIRE(parsed->size() == 2);
  for (int s = 0; s < 2; ++s) {
    CHECK(CsvOpsText((*parsed)[static_cast<size_t>(s)], true) == CsvOpsText(zbv.stages(s), true));
    CHECK((*parsed)[static_cast<size_t>(s)].chunks(1).virtual_stage() == zbv.stages(s).chunks(1).virtual_stage());
  }
}

TEST_CASE("pipeline CSV parse errors are exact") {
  auto error = [](std::string_view csv) {
    absl::StatusOr<std::vector<ir::PipelineStage>> parsed = ir::ParsePipelineCsv(csv);
    return parsed.ok() ? std::string("ok") : std::string(parsed.status().message());
  };
  CHECK(error("0F0,1SEND_F0\n1RECV_F0,xF0\n") == "line 2 (stage 1), cell 2: 'xF0' is not an action such as 0F0");
  CHECK(error("0UNSHARD0\n") ==
        "line 1 (stage 0), cell 1: 0UNSHARD0 is not an op accel runs (F, B, I, W, SEND_F, RECV_F, SEND_B, "
        "RECV_B)");
  CHECK(error("0F0,0F\n") == "line 1 (stage 0), cell 2: 0F has no microbatch");
  CHECK(error("0F0,1F0\n1F0\n") == "virtual stage 1 is on stages 0 and 1");
  CHECK(error("0F0\n3F0\n") == "virtual stages run 0 to 3 but 1 is on no stage");
  CHECK(error("") == "no rows");
  CHECK(error("0F-1\n") == "line 1 (stage 0), cell 1: '0F-1' is not an action such as 0F0");
}

}  // namespace
}  // namespace accel::planner
