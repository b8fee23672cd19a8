// Zero-bubble schedules (Qi et al. 2023, arXiv:2401.10241): ZB-H1 and ZBV op lists, their
// peaks (activations in flight, pending weight gradients), the simulated bubble, the V mapping,
// the verifier's order check, the planner's rules and the pending-W memory term.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ir/enum_names.h"
#include "ir/pipeline_simulation.h"
#include "ir/plan_access.h"
#include "ir/plan_verifier.h"
#include "planner/executor_activations.h"
#include "planner/pipeline_schedules.h"
#include "planner_test_util.h"

namespace accel::planner {
namespace {

using testing::kBaseSpec;
using testing::PlanYaml;

// "F0c0 I0c1 W0c1 …": the compute ops of one stage in list order (chunks when `chunks`).
std::string ZbComputeOps(const ir::PipelineStage& stage, bool chunks) {
  std::string out;
  for (const ir::PipelineOp& op : stage.ops()) {
    if (op.kind() != ir::FORWARD && op.kind() != ir::BACKWARD_INPUT && op.kind() != ir::BACKWARD_WEIGHT) continue;
    if (!out.empty()) out += " ";
    out += ir::PipelineOpName(op.kind(), op.microbatch(), chunks ? op.chunk() : -1);
  }
  return out;
}

ScheduleShape ZbShape(ir::PipelineSchedule schedule, int32_t p, int32_t m) {
  return {schedule, p, schedule == ir::PIPELINE_SCHEDULE_ZBV ? 2 : 1, m};
}

TEST_CASE("ZB-H1 p 2 m 2: 1F1B with W after I, stage 1 holding one W back") {
  const ir::Pipeline p = ScheduledPipeline(ZbShape(ir::PIPELINE_SCHEDULE_ZB_H1, 2, 2));
  CHECK(ZbComputeOps(p.stages(0), false) == "F0 F1 I0 W0 I1 W1");
  CHECK(ZbComputeOps(p.stages(1), false) == "F0 I0 F1 I1 W0 W1");
  // Activations F to I: min(p - s, m); pending W: min(s + 1, m).
  CHECK(p.stages(0).max_inflight_microbatches() == 2);
  CHECK(p.stages(1).max_inflight_microbatches() == 1);
  CHECK(p.stages(0).max_pending_weight_grads() == 1);
  CHECK(p.stages(1).max_pending_weight_grads() == 2);
  // Slots: stage 0 F0 F1 . I0 W0 I1 W1, stage 1 . F0 I0 F1 I1 W0 W1: 2 idle of 14.
  const ir::PipelineTimeline t = ir::SimulatePipeline(p);
  CHECK(t.makespan_slots == 7);
  CHECK(t.bubble_fraction == Approx(2.0 / 14.0));
  // Stage 1's I sends the input gradient back; W sends nothing.
  const auto& ops = p.stages(1).ops();
  CHECK(ops[2].kind() == ir::BACKWARD_INPUT);
  CHECK(ops[3].kind() == ir::SEND_GRAD);
  CHECK(ops[3].peer_stage() == 0);
}

TEST_CASE("ZBV p 2 m 4 follows PyTorch's ScheduleZBVZeroBubble order in a V") {
  const ir::Pipeline p = ScheduledPipeline(ZbShape(ir::PIPELINE_SCHEDULE_ZBV, 2, 4));
  CHECK(ZbComputeOps(p.stages(0), true) ==
        "F0c0 F1c0 F2c0 F0c1 I0c1 W0c1 F1c1 I1c1 W1c1 F3c0 I0c0 W0c0 F2c1 I2c1 W2c1 I1c0 W1c0 "
        "F3c1 I3c1 W3c1 I2c0 W2c0 I3c0 W3c0");
  CHECK(ZbComputeOps(p.stages(1), true) ==
        "F0c0 F0c1 F1c0 F1c1 I0c1 W0c1 F2c0 I0c0 W0c0 F2c1 I1c1 W1c1 F3c0 I1c0 W1c0 F3c1 I2c1 "
        "W2c1 I2c0 I3c1 I3c0 W2c0 W3c1 W3c0");
  // The V: stage 0 holds virtual stages 0 and 3, stage 1 holds 1 and 2.
  CHECK(p.stages(0).chunks(1).virtual_stage() == 3);
  CHECK(p.stages(1).chunks(0).virtual_stage() == 1);
  CHECK(p.stages(1).chunks(1).virtual_stage() == 2);
  // Hand-counted peaks: F minus I reaches 4 chunk activations on both stages; stage 1 defers
  // W2c0, W3c1 and W3c0 to its end (3 pending), stage 0 at most 1.
  CHECK(p.stages(0).max_inflight_microbatches() == 4);
  CHECK(p.stages(1).max_inflight_microbatches() == 4);
  CHECK(p.stages(0).max_pending_weight_grads() == 1);
  CHECK(p.stages(1).max_pending_weight_grads() == 3);
  // Stage 1 turns chunk 0's output into chunk 1's input locally: no send to itself, and its
  // chunk 0 receives from stage 0, its chunk 1 sends to stage 0.
  for (const ir::PipelineOp& op : p.stages(1).ops()) {
    if (op.kind() == ir::SEND_ACTIVATION || op.kind() == ir::RECV_GRAD) {
      CHECK(op.chunk() == 1);
      CHECK(op.peer_stage() == 0);
    }
    if (op.kind() == ir::RECV_ACTIVATION || op.kind() == ir::SEND_GRAD) CHECK(op.chunk() == 0);
  }
}

TEST_CASE("zero-bubble op lists: F, I, W once each in order, deadlock-free, peaks as recorded") {
  for (ir::PipelineSchedule schedule : {ir::PIPELINE_SCHEDULE_ZB_H1, ir::PIPELINE_SCHEDULE_ZBV}) {
    for (int32_t p : {2, 3, 4}) {
      for (int32_t m = p; m <= 3 * p + 1; ++m) {
        const ScheduleShape shape = ZbShape(schedule, p, m);
        const ir::Pipeline pipeline = ScheduledPipeline(shape);
        INFO(ir::Name(schedule) << " p " << p << " m " << m);
        for (int32_t s = 0; s < p; ++s) {
          const ir::PipelineStage& stage = pipeline.stages(s);
          // [kind][chunk][microbatch]: position in the list.
          std::vector<std::vector<std::vector<int>>> at(3, std::vector<std::vector<int>>(2, std::vector<int>(m, -1)));
          for (int i = 0; i < stage.ops_size(); ++i) {
            const ir::PipelineOp& op = stage.ops(i);
            CHECK(op.kind() != ir::BACKWARD);
            const int k = op.kind() == ir::FORWARD ? 0 : op.kind() == ir::BACKWARD_INPUT ? 1 : op.kind() == ir::BACKWARD_WEIGHT ? 2 : -1;
            if (k < 0) continue;
            CHECK(at[k][op.chunk()][op.microbatch()] == -1);
            at[k][op.chunk()][op.microbatch()] = i;
          }
          for (int32_t c = 0; c < shape.virtual_stages; ++c) {
            for (int32_t mb = 0; mb < m; ++mb) {
              CHECK(at[0][c][mb] >= 0);
              CHECK(at[1][c][mb] > at[0][c][mb]);
              CHECK(at[2][c][mb] > at[1][c][mb]);
            }
          }
          CHECK(stage.max_inflight_microbatches() == PeakInflight(stage));
          CHECK(stage.max_pending_weight_grads() == PeakPendingWeight(stage));
          CHECK(InflightMicrobatches(shape, s) == PeakInflight(stage));
          CHECK(PendingWeightGrads(shape, s) == PeakPendingWeight(stage));
        }
        const ir::PipelineTimeline t = ir::SimulatePipeline(pipeline);
        CHECK(t.stall.empty());
        CHECK(t.transport.empty());
        CHECK(t.busy_slots == 3LL * p * shape.virtual_stages * m);
        CHECK(t.bubble_fraction == Approx(ScheduleBubbleFraction(shape)).epsilon(1e-12));
        // ZB-H1 keeps 1F1B's activations; its bubble is below 1F1B's.
        const ScheduleShape one_f_one_b{ir::PIPELINE_SCHEDULE_1F1B, p, 1, m};
        CHECK(ScheduleBubbleFraction(shape) < ScheduleBubbleFraction(one_f_one_b));
        if (schedule == ir::PIPELINE_SCHEDULE_ZB_H1) {
          CHECK(t.bubble_fraction == Approx(double(p - 1) / (3 * m + p - 1)));
          for (int32_t s = 0; s < p; ++s) CHECK(InflightMicrobatches(shape, s) == InflightMicrobatches(one_f_one_b, s));
        }
      }
    }
  }
}

TEST_CASE("bubbles at p 4 m 8: 1F1B 3/11, ZB-H1 3/27, ZBV below both") {
  CHECK(ScheduleBubbleFraction({ir::PIPELINE_SCHEDULE_1F1B, 4, 1, 8}) == Approx(3.0 / 11.0));
  CHECK(ScheduleBubbleFraction({ir::PIPELINE_SCHEDULE_ZB_H1, 4, 1, 8}) == Approx(3.0 / 27.0));
  CHECK(ScheduleBubbleFraction({ir::PIPELINE_SCHEDULE_ZBV, 4, 2, 8}) < 3.0 / 27.0);
}

TEST_CASE("the verifier rejects a W before its I with an exact message") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "parallel.pipeline_schedule=zb_h1",
                                      "data.grad_accum_steps=4"});
  INFO(planned.diagnostics << planned.result.last_pass);
  for (const std::string& v : planned.result.verifier_violations) UNSCOPED_INFO(v);
  REQUIRE(planned.result.ok);
  CHECK(planned.result.verifier_violations.empty());
  ir::Plan plan = planned.result.plan;
  // Stage 1 runs F0 I0 F1 I1 W0 …: move W0 to the front.
  auto* ops = plan.mutable_pipeline()->mutable_stages(1)->mutable_ops();
  int w0 = 0;
  while (!(ops->Get(w0).kind() == ir::BACKWARD_WEIGHT && ops->Get(w0).microbatch() == 0)) ++w0;
  for (int i = w0; i > 0; --i) ops->SwapElements(i, i - 1);
  const std::vector<std::string> violations = ir::VerifyPlan(plan);
  REQUIRE(!violations.empty());
  CHECK(violations[0] == "stage 1 runs W of 0 before its I");
}

TEST_CASE("a zb_h1 plan: bubble simulated, pending W recorded, memory counts them") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "parallel.pipeline_schedule=zb_h1",
                                      "data.grad_accum_steps=4"});
  INFO(planned.diagnostics << planned.result.last_pass);
  for (const std::string& v : planned.result.verifier_violations) UNSCOPED_INFO(v);
  REQUIRE(planned.result.ok);
  CHECK(planned.result.verifier_violations.empty());
  const ir::Plan& plan = planned.result.plan;
  CHECK(plan.pipeline().bubble_fraction() == Approx(1.0 / 13.0));
  CHECK(plan.pipeline().stages(0).max_pending_weight_grads() == 1);
  CHECK(plan.pipeline().stages(1).max_pending_weight_grads() == 2);
  // Llama, h 512, ffn 1376, 8 heads (4 kv), tp 2, s 512, b 2, fp32 (the default precision):
  // c·(4x + 2q + 2k + 3f) with x = 1024·512, q = 1024·256, k = 1024·128, f = 1024·688.
  const int64_t x = 1024 * 512, q = 1024 * 256, k = 1024 * 128, f = 1024 * 688;
  const int64_t per_block = 4 * (4 * x + 2 * q + 2 * k + 3 * f);
  // The peak is priced where the op list reaches it (PeakLiveCandidates): stage 0's is its two
  // activations in flight before its first I (no W pending then); stage 1's is one activation in
  // flight beside one pending W (an activation outweighs a pending W), not its separate peak of 2.
  const int64_t pending_at_peak[2] = {0, 1};
  for (int s = 0; s < 2; ++s) {
    int64_t bytes = 0;
    for (const ir::MemoryTerm& t : plan.memory(s).device()) {
      if (t.source().find("zero-bubble weight-gradient deferral") == std::string::npos) continue;
      bytes += t.bytes();
      CHECK(t.category() == "activations");
    }
    CHECK(bytes == 4 * pending_at_peak[s] * per_block);  // 4 blocks per stage
  }
}

TEST_CASE("zero-bubble peak candidates: what each stage holds at once, op by op") {
  using Counts = std::vector<std::vector<int64_t>>;
  auto candidates = [](const ScheduleShape& shape, int32_t s) {
    const ir::Pipeline p = ScheduledPipeline(shape);
    Counts out;
    for (const LiveCounts& c : PeakLiveCandidates(shape, s, p.stages(s))) {
      out.push_back({c.inflight, c.pending_weight, c.awaiting_output});
    }
    return out;
  };
  // ZB-H1 p 2 m 4: stage 0 runs F0 F1 I0 W0 F2 I1 W1 …: two in flight (both outputs awaiting
  // their gradient) or one beside one pending W. Stage 1 (the head: its output is the loss) runs
  // F0 I0 F1 I1 W0 …, holding one W back.
  const ScheduleShape h1 = ZbShape(ir::PIPELINE_SCHEDULE_ZB_H1, 2, 4);
  CHECK(candidates(h1, 0) == Counts{{2, 0, 2}, {1, 1, 1}});
  CHECK(candidates(h1, 1) == Counts{{1, 1, 0}, {0, 2, 0}});
  // ZBV p 2 m 4, stage 1 holds virtual stages 1 and 2: chunk 0's output goes to its own chunk 1
  // (a view, nothing awaits), chunk 1's to stage 0.
  const ScheduleShape zbv = ZbShape(ir::PIPELINE_SCHEDULE_ZBV, 2, 4);
  for (const std::vector<int64_t>& c : candidates(zbv, 1)) {
    INFO(c[0] << " in flight, " << c[1] << " pending, " << c[2] << " awaiting");
    CHECK(c[2] <= c[0]);
  }
  // A fused backward has one candidate, InflightMicrobatches (what the estimator uses for it).
  const ScheduleShape one_f_one_b = {ir::PIPELINE_SCHEDULE_1F1B, 2, 1, 4};
  CHECK(candidates(one_f_one_b, 0) == Counts{{2, 0, 2}});
  CHECK(candidates(one_f_one_b, 1) == Counts{{1, 0, 0}});
}

TEST_CASE("step time: the bubble term is the simulated zb_h1 bubble's f/(1-f) of the stage time") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "parallel.pipeline_schedule=zb_h1",
                                      "data.grad_accum_steps=4"});
  REQUIRE(planned.result.ok);
  const ir::StepTimeEstimate& t = planned.result.plan.step_time();
  const double f = 1.0 / 13.0;  // (p-1)/(3m+p-1), p 2, m 4
  REQUIRE(t.bubble_seconds() > 0);
  CHECK(t.bubble_seconds() == Approx((t.step_seconds() - t.bubble_seconds()) * f / (1 - f)));
}

TEST_CASE("ExecutorPendingWeightGradBytesPerBlock: each linear's input and output gradient") {
  ExecutorActivationShape shape;
  shape.gpt2 = false;
  shape.seq_len = 4;
  shape.micro_batch = 1;
  shape.hidden = 8;
  shape.heads = 2;
  shape.kv_heads = 1;
  shape.ffn = 16;
  // fp32: x = 32, q = 32, k = 16, f = 64: inputs x + q + x + f = 160, gradients q + 2k + x + 2f + x
  // = 256; 4 B each.
  CHECK(ExecutorPendingWeightGradBytesPerBlock(shape) == 4 * (160 + 256));
  shape.gpt2 = true;
  shape.kv_heads = 2;
  shape.bf16_compute = true;
  // GPT-2, bf16: c·(4x + 4q + 2f) = 2·(128 + 128 + 128).
  CHECK(ExecutorPendingWeightGradBytesPerBlock(shape) == 2 * (128 + 128 + 128));
}

TEST_CASE("a zbv plan puts the head on stage 0 and verifies") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "parallel.pipeline_schedule=zbv",
                                      "data.grad_accum_steps=4"});
  INFO(planned.diagnostics << planned.result.last_pass);
  for (const std::string& v : planned.result.verifier_violations) UNSCOPED_INFO(v);
  REQUIRE(planned.result.ok);
  CHECK(planned.result.verifier_violations.empty());
  const ir::Pipeline& pipe = planned.result.plan.pipeline();
  CHECK(pipe.virtual_stages() == 2);
  CHECK(pipe.stages(0).has_embedding());
  CHECK(pipe.stages(0).has_lm_head());
  CHECK_FALSE(pipe.stages(1).has_lm_head());
  // 8 layers in 4 virtual stages of 2: stage 0 holds 0-1 and 6-7, stage 1 2-3 and 4-5.
  CHECK(pipe.stages(0).chunks(1).virtual_stage() == 3);
  CHECK(pipe.stages(0).chunks(1).layer_begin() == 6);
  CHECK(pipe.stages(1).chunks(1).layer_begin() == 4);
  CHECK(pipe.bubble_fraction() == Approx(ScheduleBubbleFraction({ir::PIPELINE_SCHEDULE_ZBV, 2, 2, 4})));
  bool auto_reason = false;
  for (const ir::ResolvedValue& r : planned.result.plan.resolved()) {
    if (r.field() == "parallel.virtual_stages") {
      auto_reason = true;
      CHECK(r.value() == "2");
      CHECK(r.reason() == "zbv: each stage runs 2 model chunks, down the pipeline and back (Qi et al. 2023 §6)");
    }
  }
  CHECK(auto_reason);
}

TEST_CASE("zero-bubble rules have exact messages") {
  auto one_stage = PlanYaml(kBaseSpec, {"parallel.pipeline_schedule=zbv"});
  CHECK(one_stage.diagnostics.find("error[E0422]: zbv runs 2 model chunks per stage in a V over several "
                                   "pipeline stages, but pipeline is 1") != std::string::npos);
  auto three = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "parallel.pipeline_schedule=zbv",
                                    "parallel.virtual_stages=3"});
  CHECK(three.diagnostics.find("error[E0422]: zbv runs exactly 2 virtual_stages (model chunks per stage), "
                               "got 3") != std::string::npos);
  auto deep = PlanYaml(kBaseSpec, {"parallel.pipeline=8", "parallel.tensor=1", "parallel.pipeline_schedule=zbv"});
  CHECK(deep.diagnostics.find("error[E0422]: zbv splits the model into pipeline(8) * 2 = 16 model chunks, "
                              "more than num_layers 8: every chunk needs at least one layer") != std::string::npos);
  auto few = PlanYaml(kBaseSpec, {"parallel.pipeline=4", "parallel.pipeline_schedule=zb_h1",
                                  "data.grad_accum_steps=2"});
  CHECK(few.diagnostics.find("error[E0407]: the zb_h1 schedule needs at least as many microbatches as "
                             "pipeline stages: 2 microbatches < pp(4)") != std::string::npos);
  auto near = PlanYaml(kBaseSpec, {"parallel.pipeline_schedule=zb_h2"});
  CHECK(near.diagnostics.find("--set parallel.pipeline_schedule=zb_h2: error[E0106]: invalid value \"zb_h2\" for "
                              "parallel.pipeline_schedule; did you mean 'zb_h1'?") != std::string::npos);
  auto far = PlanYaml(kBaseSpec, {"parallel.pipeline_schedule=pipedream"});
  INFO(far.diagnostics);
  CHECK(far.diagnostics.find("invalid value \"pipedream\" for parallel.pipeline_schedule; expected one of "
                             "gpipe, 1f1b, interleaved_1f1b, zb_h1, zbv") != std::string::npos);
}

}  // namespace
}  // namespace accel::planner
