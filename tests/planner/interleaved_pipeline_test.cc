// Interleaved 1F1B (Narayanan et al. 2021 §2.2.2): the schedule's op lists, the closed forms the
// memory estimator and the step-time model read, the planner's rules and the plan it writes.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ir/enum_names.h"
#include "ir/pipeline_simulation.h"
#include "ir/plan_verifier.h"
#include "ir/plan_writer.h"
#include "planner/memory_estimator.h"
#include "planner/pipeline_schedules.h"
#include "planner_test_util.h"

namespace accel::planner {
namespace {

using testing::kBaseSpec;
using testing::PlanYaml;

ir::Pipeline Scheduled(const ScheduleShape& shape) {
  ir::Pipeline pipeline;
  pipeline.set_schedule(shape.schedule);
  pipeline.set_microbatches(shape.microbatches);
  if (shape.virtual_stages > 1) pipeline.set_virtual_stages(shape.virtual_stages);
  for (int32_t s = 0; s < shape.stages; ++s) {
    ir::PipelineStage* stage = pipeline.add_stages();
    stage->set_index(s);
    for (int32_t c = 0; shape.virtual_stages > 1 && c < shape.virtual_stages; ++c) {
      stage->add_chunks()->set_virtual_stage(c * shape.stages + s);
    }
    WriteStageOps(shape, s, *stage);
  }
  return pipeline;
}

// "F0c0 F1c0 B0c1 …": the compute ops of one stage in list order.
std::string ComputeOps(const ir::PipelineStage& stage) {
  std::string out;
  for (const ir::PipelineOp& op : stage.ops()) {
    if (op.kind() != ir::FORWARD && op.kind() != ir::BACKWARD) continue;
    if (!out.empty()) out += " ";
    out += ir::PipelineOpName(op.kind(), op.microbatch(), op.chunk());
  }
  return out;
}

TEST_CASE("interleaved 1F1B op lists follow Megatron-LM's order for p 2, v 2, m 4") {
  const ir::Pipeline p = Scheduled({ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B, 2, 2, 4});
  // Stage 0 warms up with (p - 1) * 2 + (v - 1) * p = 4 forwards, stage 1 with 2.
  CHECK(ComputeOps(p.stages(0)) ==
        "F0c0 F1c0 F0c1 F1c1 F2c0 B0c1 F3c0 B1c1 F2c1 B0c0 F3c1 B1c0 B2c1 B3c1 B2c0 B3c0");
  CHECK(ComputeOps(p.stages(1)) ==
        "F0c0 F1c0 F0c1 B0c1 F1c1 B1c1 F2c0 B0c0 F3c0 B1c0 F2c1 B2c1 F3c1 B3c1 B2c0 B3c0");
  // Stage 1's chunk 0 sends to stage 0's chunk 1 (the wrap-around); stage 0's chunk 1 receives
  // from stage 1.
  const auto& ops1 = p.stages(1).ops();
  CHECK(ops1[1].kind() == ir::FORWARD);
  CHECK(ops1[2].kind() == ir::SEND_ACTIVATION);
  CHECK(ops1[2].peer_stage() == 0);
  CHECK(ops1[2].chunk() == 0);
}

TEST_CASE("every schedule's closed-form activations in flight are its op lists' peak") {
  for (ir::PipelineSchedule schedule : {ir::PIPELINE_SCHEDULE_GPIPE, ir::PIPELINE_SCHEDULE_1F1B,
                                         ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B}) {
    for (int32_t p = 1; p <= 5; ++p) {
      for (int32_t v : {1, 2, 3, 4}) {
        if ((schedule == ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B) != (v > 1) || (v > 1 && p == 1)) continue;
        for (int32_t m = p; m <= 4 * p; m += p) {
          const ScheduleShape shape{schedule, p, v, m};
          const ir::Pipeline pipeline = Scheduled(shape);
          for (int32_t s = 0; s < p; ++s) {
            INFO(ir::Name(schedule) << " p " << p << " v " << v << " m " << m << " stage " << s);
            CHECK(InflightMicrobatches(shape, s) == PeakInflight(pipeline.stages(s)));
            CHECK(pipeline.stages(s).max_inflight_microbatches() == PeakInflight(pipeline.stages(s)));
          }
        }
      }
    }
  }
}

TEST_CASE("the simulated bubble of every schedule is (p-1)/(v*m+p-1) and it runs without deadlock") {
  for (ir::PipelineSchedule schedule : {ir::PIPELINE_SCHEDULE_GPIPE, ir::PIPELINE_SCHEDULE_1F1B,
                                         ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B}) {
    for (int32_t p = 2; p <= 6; ++p) {
      for (int32_t v : {1, 2, 3, 4}) {
        if ((schedule == ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B) != (v > 1)) continue;
        for (int32_t m = p; m <= 3 * p; m += p) {
          const ScheduleShape shape{schedule, p, v, m};
          const ir::PipelineTimeline t = ir::SimulatePipeline(Scheduled(shape));
          INFO(ir::Name(schedule) << " p " << p << " v " << v << " m " << m);
          CHECK(t.stall.empty());
          CHECK(t.transport.empty());
          CHECK(t.busy_slots == 2LL * p * v * m);
          CHECK(t.bubble_fraction == Approx(ScheduleBubbleFraction(shape)).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("interleaving v chunks divides 1F1B's bubble by about v and keeps more activations") {
  const ScheduleShape plain{ir::PIPELINE_SCHEDULE_1F1B, 4, 1, 8},
      interleaved{ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B, 4, 2, 8};
  CHECK(ScheduleBubbleFraction(plain) == Approx(3.0 / 11.0));
  CHECK(ScheduleBubbleFraction(interleaved) == Approx(3.0 / 19.0));
  // Korthikanti et al. 2022: the first stage keeps p(1 + (p-1)/(pv)) stage activations, that
  // is p*v + p - 1 chunk activations.
  CHECK(InflightMicrobatches(interleaved, 0) == 4 * 2 + 4 - 1);
  CHECK(InflightMicrobatches(plain, 0) == 4);
}

TEST_CASE("an interleaved plan splits the blocks over p*v virtual stages") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "parallel.pipeline_schedule=interleaved_1f1b",
                                      "data.grad_accum_steps=4"});
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  CHECK(planned.result.verifier_violations.empty());
  const ir::Pipeline& pipe = planned.result.plan.pipeline();
  CHECK(pipe.virtual_stages() == 2);
  CHECK(pipe.bubble_fraction() == Approx(1.0 / 9.0));
  REQUIRE(pipe.stages(0).chunks_size() == 2);
  CHECK(pipe.stages(0).chunks(0).layer_begin() == 0);
  CHECK(pipe.stages(0).chunks(0).layer_end() == 2);
  CHECK(pipe.stages(0).chunks(1).virtual_stage() == 2);
  CHECK(pipe.stages(0).chunks(1).layer_begin() == 4);
  CHECK(pipe.stages(0).chunks(1).layer_end() == 6);
  CHECK(pipe.stages(1).chunks(0).layer_begin() == 2);
  CHECK(pipe.stages(1).chunks(1).layer_end() == 8);
  CHECK(pipe.stages(0).layer_begin() == 0);
  CHECK(pipe.stages(0).layer_end() == 2);
  // Shard units follow the stage: layers 0, 1, 4, 5 on stage 0.
  std::vector<std::string> stage0;
  for (const ir::ShardUnit& u : planned.result.plan.sharding().units()) {
    if (u.stage() == 0) stage0.push_back(u.name());
  }
  CHECK(stage0 == std::vector<std::string>{"embeddings", "layers.0", "layers.1", "layers.4", "layers.5"});
  const std::string text = ir::PlanSummary(planned.result.plan);
  CHECK(text.find("interleaved_1f1b with 2 model chunks per stage, 4 microbatches, bubble 11.1%") != std::string::npos);
  CHECK(text.find("stage 0: layers 0-1, 4-5") != std::string::npos);
  CHECK(text.find("5 chunk activation(s) in flight") != std::string::npos);
}

TEST_CASE("virtual_stages auto is 2 with interleaved_1f1b, and says why") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "parallel.pipeline_schedule=interleaved_1f1b"});
  REQUIRE(planned.result.ok);
  bool found = false;
  for (const ir::ResolvedValue& r : planned.result.plan.resolved()) {
    if (r.field() != "parallel.virtual_stages") continue;
    found = true;
    CHECK(r.value() == "2");
    CHECK(r.reason() == "interleaved_1f1b: 2 model chunks per stage halve the bubble of 1f1b (Narayanan et al. 2021)");
  }
  CHECK(found);
  // The default of 4 microbatches per stage, with the interleaved bubble as reason.
  CHECK(planned.result.plan.pipeline().microbatches() == 8);
  CHECK(planned.result.plan.pipeline().bubble_fraction() == Approx(1.0 / 17.0));
}

TEST_CASE("interleaved_1f1b rules have exact messages") {
  auto one_stage = PlanYaml(kBaseSpec, {"parallel.pipeline_schedule=interleaved_1f1b"});
  CHECK(one_stage.diagnostics.find("error[E0422]: interleaved_1f1b interleaves the chunks of several pipeline "
                                   "stages, but pipeline is 1") != std::string::npos);
  auto one_chunk = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "parallel.pipeline_schedule=interleaved_1f1b",
                                        "parallel.virtual_stages=1"});
  CHECK(one_chunk.diagnostics.find("error[E0422]: interleaved_1f1b needs at least 2 virtual_stages (model "
                                   "chunks per stage), got 1") != std::string::npos);
  auto too_many = PlanYaml(kBaseSpec, {"parallel.pipeline=4", "parallel.pipeline_schedule=interleaved_1f1b",
                                       "parallel.virtual_stages=3"});
  CHECK(too_many.diagnostics.find("error[E0422]: pipeline(4) * virtual_stages(3) = 12 model chunks exceed "
                                  "num_layers 8: every chunk needs at least one layer") != std::string::npos);
  auto ragged = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "parallel.pipeline_schedule=interleaved_1f1b",
                                     "data.grad_accum_steps=5"});
  CHECK(ragged.diagnostics.find("error[E0407]: the interleaved_1f1b schedule runs microbatches in groups of "
                                "pp(2): 5 microbatches is not a multiple of it") != std::string::npos);
  CHECK(ragged.diagnostics.find("use 6 microbatches, or pipeline_schedule: 1f1b") != std::string::npos);
  auto unused = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "parallel.virtual_stages=2"});
  CHECK(unused.result.ok);
  CHECK(unused.diagnostics.find("warning[W0408]: virtual_stages 2 has no effect: pipeline_schedule is 1f1b, "
                                "not interleaved_1f1b") != std::string::npos);
}

TEST_CASE("the verifier rejects interleaved plans whose chunks or ops are wrong") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "parallel.pipeline_schedule=interleaved_1f1b",
                                      "data.grad_accum_steps=4"});
  REQUIRE(planned.result.ok);
  auto violations = [](const ir::Plan& plan) {
    std::string all;
    for (const std::string& v : ir::VerifyPlan(plan)) all += v + "\n";
    return all;
  };
  ir::Plan swapped = planned.result.plan;
  swapped.mutable_pipeline()->mutable_stages(0)->mutable_chunks(1)->set_virtual_stage(3);
  CHECK(violations(swapped).find("stage 0 chunk 1 is virtual stage 3, expected 2") != std::string::npos);
  ir::Plan bad_chunk = planned.result.plan;
  bad_chunk.mutable_pipeline()->mutable_stages(1)->mutable_ops(0)->set_chunk(2);
  CHECK(violations(bad_chunk).find("stage 1 op 0 has chunk 2") != std::string::npos);
  ir::Plan inflight = planned.result.plan;
  inflight.mutable_pipeline()->mutable_stages(0)->set_max_inflight_microbatches(4);
  CHECK(violations(inflight).find("stage 0 max_inflight_microbatches 4 != 5 activations alive at once in its ops") !=
        std::string::npos);
  ir::Plan flat = planned.result.plan;
  flat.mutable_pipeline()->set_virtual_stages(1);
  CHECK(violations(flat).find("stage 0 has chunks but virtual_stages is 1") != std::string::npos);
}

TEST_CASE("the memory estimate of an interleaved stage counts chunk activations of its largest chunk") {
  const std::vector<StageLayout> layouts = EvenStageLayouts(10, 2, ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B, 4, 2);
  REQUIRE(layouts.size() == 2);
  // 10 blocks over 4 virtual stages: 3, 3, 2, 2.
  CHECK(layouts[0].chunks == std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {6, 8}});
  CHECK(layouts[1].chunks == std::vector<std::pair<int64_t, int64_t>>{{3, 6}, {8, 10}});
  CHECK(layouts[0].Layers() == 5);
  CHECK(layouts[0].LargestChunkLayers() == 3);
  CHECK(layouts[0].inflight_microbatches == 5);
  CHECK(layouts[1].inflight_microbatches == 3);
}

}  // namespace
}  // namespace accel::planner
