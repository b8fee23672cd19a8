// Warnings for jobs that are valid but likely to waste the run: each is located at the field
// that causes it, with its exact message, and never stops planning.
#include <catch2/catch.hpp>

#include "planner_test_util.h"

namespace accel::planner {
namespace {

using testing::kBaseSpec;
using testing::PlanYaml;

// kBaseSpec (a small llama on 2 x 8 devices, lines 1-25) with `lines` appended from line 26.
std::string WithLines(const std::string& lines) { return std::string(kBaseSpec) + lines; }

TEST_CASE("fp16 compute without loss scaling warns at precision.compute", "[warnings]") {
  auto planned = PlanYaml(WithLines("precision: {params: bf16, compute: fp16}\n"));
  INFO(planned.diagnostics);
  CHECK(planned.result.ok);
  CHECK(planned.diagnostics ==
        "job.yaml:26:36: warning[W0404]: precision.compute is fp16 but precision.loss_scaling is "
        "none: gradients below 2^-24 (the smallest fp16 value) flush to zero and training stalls "
        "silently [validate-spec]\n"
        " precision: {params: bf16, compute: fp16}\n"
        "                                    ^\n"
        "note: set precision.loss_scaling: dynamic, or use bf16 (the exponent range of fp32)\n");
  REQUIRE(planned.result.plan.notes_size() == 1);
  CHECK(planned.result.plan.notes(0).code() == "W0404");
}

TEST_CASE("fp16 parameters without loss scaling warn at precision.params, with the "
          "loss_scaling that was set", "[warnings]") {
  auto planned = PlanYaml(WithLines("precision:\n"
                                    "  params: fp16\n"
                                    "  loss_scaling: none\n"));
  CHECK(planned.result.ok);
  CHECK(planned.diagnostics ==
        "job.yaml:27:11: warning[W0404]: precision.params is fp16 but precision.loss_scaling is "
        "none: gradients below 2^-24 (the smallest fp16 value) flush to zero and training stalls "
        "silently [validate-spec]\n"
        "   params: fp16\n"
        "           ^\n"
        "job.yaml:28:17: note: loss_scaling set here\n"
        "note: set precision.loss_scaling: dynamic, or use bf16 (the exponent range of fp32)\n");
  auto scaled = PlanYaml(WithLines("precision: {compute: fp16, loss_scaling: dynamic}\n"));
  CHECK(scaled.result.ok);
  CHECK(scaled.diagnostics.find("W0404") == std::string::npos);
}

// warmup_steps above training.steps got no warning (#42): the run ends on the warmup ramp.
TEST_CASE("warmup longer than training warns at warmup_steps", "[warnings]") {
  std::string yaml = kBaseSpec;
  yaml.replace(yaml.find("  steps: 10\n"), 12,
               "  steps: 10\n  lr_schedule: {name: cosine, warmup_steps: 40}\n");
  auto planned = PlanYaml(yaml);
  INFO(planned.diagnostics);
  CHECK(planned.result.ok);
  CHECK(planned.diagnostics ==
        "job.yaml:18:45: warning[W0409]: warmup_steps 40 exceeds training.steps 10: training ends "
        "during the warmup, at 25% of the peak learning rate, and the schedule's decay never "
        "starts [validate-spec]\n"
        "   lr_schedule: {name: cosine, warmup_steps: 40}\n" +
            std::string(45, ' ') + "^\n"
        "job.yaml:17:10: note: steps set here\n"
        "note: set warmup_steps below training.steps (a few percent of it is common)\n");
  REQUIRE(planned.result.plan.notes_size() == 1);
  CHECK(planned.result.plan.notes(0).code() == "W0409");
  yaml.replace(yaml.find("warmup_steps: 40"), 16, "warmup_steps: 10");
  CHECK(PlanYaml(yaml).diagnostics.find("W0409") == std::string::npos);
}

TEST_CASE("a pipeline bubble over 25% warns at the field that set the microbatches",
          "[warnings]") {
  // pp 4, 4 microbatches: (4-1)/(4+4-1) = 42.9% of every step idle.
  std::string yaml = kBaseSpec;
  yaml.replace(yaml.find("  tensor: 2\n"), 12, "  tensor: 2\n  pipeline: 4\n");
  yaml.replace(yaml.find("  micro_batch_size: 2\n"), 22,
               "  micro_batch_size: 2\n  grad_accum_steps: 4\n");
  auto planned = PlanYaml(yaml);
  INFO(planned.diagnostics);
  CHECK(planned.result.ok);
  CHECK(planned.diagnostics ==
        "job.yaml:16:21: warning[W0405]: the pipeline idles 42.9% of every step: bubble "
        "(p-1)/(m+p-1) with pp(4) and 4 microbatches is over 25.0% [resolve-auto]\n"
        "   grad_accum_steps: 4\n"
        "                     ^\n"
        "job.yaml:22:13: note: pipeline set here\n"
        "note: 16 microbatches (4 * pp) would idle 15.8%; raise global_batch_size or "
        "grad_accum_steps\n");
  // The planner's own choice (4 microbatches per stage) stays under the threshold.
  std::string automatic = kBaseSpec;
  automatic.replace(automatic.find("  tensor: 2\n"), 12, "  tensor: 2\n  pipeline: 4\n");
  auto quiet = PlanYaml(automatic);
  CHECK(quiet.result.ok);
  CHECK(quiet.diagnostics.find("W0405") == std::string::npos);
}

TEST_CASE("fp16 gradient reduction without fp16 compute or parameters warns", "[warnings]") {
  auto planned = PlanYaml(WithLines("precision: {params: fp32, compute: bf16, reduce: fp16}\n"));
  CHECK(planned.result.ok);
  CHECK(planned.diagnostics ==
        "job.yaml:26:50: warning[W0406]: precision.reduce is fp16 without loss scaling (compute "
        "bf16, params fp32): gradients summed over dp(8) in fp16 flush to zero below 2^-24 and "
        "overflow above 65504 [resolve-auto]\n"
        " precision: {params: fp32, compute: bf16, reduce: fp16}\n"
        "                                                  ^\n"
        "note: reduce in fp32, or in bf16 (the exponent range of fp32)\n");
  // Nothing is reduced on one data-parallel rank.
  auto single = PlanYaml(WithLines("precision: {reduce: fp16}\n"),
                         {"parallel.data_replicate=1", "parallel.pipeline=8"});
  INFO(single.diagnostics);
  CHECK(single.result.ok);
  CHECK(single.diagnostics.find("W0406") == std::string::npos);
}

}  // namespace
}  // namespace accel::planner
