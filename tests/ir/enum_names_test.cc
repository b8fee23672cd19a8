// Every accel.ir enum value has the spec's word, distinct within its enum, and only
// *_UNSPECIFIED reads "unspecified": a value added to plan.proto without a name fails here.
#include "ir/enum_names.h"

#include <google/protobuf/descriptor.h>

#include <set>
#include <string>

#include <catch2/catch.hpp>

namespace accel::ir {
namespace {

// Checks every value of the enum E that `descriptor` describes.
template <typename E>
void CheckNames(const google::protobuf::EnumDescriptor* descriptor) {
  INFO(descriptor->name());
  std::set<std::string> seen;
  for (int i = 0; i < descriptor->value_count(); ++i) {
    const google::protobuf::EnumValueDescriptor* value = descriptor->value(i);
    const std::string name(Name(static_cast<E>(value->number())));
    INFO(value->name() << " -> " << name);
    if (value->number() == 0) {
      CHECK(name == "unspecified");
    } else {
      CHECK(name != "unspecified");
      CHECK(seen.insert(name).second);
    }
  }
  // A number the enum does not define (a newer writer) still has a printable name.
  CHECK(Name(static_cast<E>(descriptor->value_count() + 100)) == "unspecified");
}

TEST_CASE("every enum value has its spec name", "[ir][enum]") {
  CheckNames<Backend>(Backend_descriptor());
  CheckNames<Architecture>(Architecture_descriptor());
  CheckNames<DataFormat>(DataFormat_descriptor());
  CheckNames<TokenizerKind>(TokenizerKind_descriptor());
  CheckNames<TokenDtype>(TokenDtype_descriptor());
  CheckNames<Recompute>(Recompute_descriptor());
  CheckNames<OptimizerKind>(OptimizerKind_descriptor());
  CheckNames<LrScheduleKind>(LrScheduleKind_descriptor());
  CheckNames<Dtype>(Dtype_descriptor());
  CheckNames<LossScaling>(LossScaling_descriptor());
  CheckNames<ResumePolicy>(ResumePolicy_descriptor());
  CheckNames<RouterScoring>(RouterScoring_descriptor());
  CheckNames<DeviceType>(DeviceType_descriptor());
  CheckNames<PipelineSchedule>(PipelineSchedule_descriptor());
  CheckNames<Offload>(Offload_descriptor());
  CheckNames<Severity>(Severity_descriptor());
  CheckNames<Collective>(Collective_descriptor());
  CheckNames<LinkClass>(LinkClass_descriptor());
  CheckNames<MatmulLayout>(MatmulLayout_descriptor());
}

TEST_CASE("spec words of the values the plan text shows", "[ir][enum]") {
  CHECK(Name(DTYPE_BF16) == "bf16");
  CHECK(Name(PIPELINE_SCHEDULE_1F1B) == "1f1b");
  CHECK(Name(PIPELINE_SCHEDULE_INTERLEAVED_1F1B) == "interleaved_1f1b");
  CHECK(Name(OFFLOAD_OPTIMIZER) == "optimizer");
  CHECK(Name(COLLECTIVE_REDUCE_SCATTER) == "reduce_scatter");
  CHECK(Name(LINK_CLASS_INTER_NODE) == "inter_node");
  CHECK(Name(TOKENIZER_KIND_SENTENCEPIECE) == "sentencepiece");
  CHECK(Name(MATMUL_LAYOUT_NT) == "nt");
}

TEST_CASE("dtype names parse back and have their sizes", "[ir][enum]") {
  for (Dtype d : {DTYPE_FP32, DTYPE_BF16, DTYPE_FP16}) {
    REQUIRE(ParseDtype(Name(d)).has_value());
    CHECK(*ParseDtype(Name(d)) == d);
  }
  CHECK_FALSE(ParseDtype("fp8").has_value());
  CHECK_FALSE(ParseDtype("unspecified").has_value());
  CHECK_FALSE(ParseDtype("").has_value());
  CHECK(DtypeBytes(DTYPE_FP32) == 4);
  CHECK(DtypeBytes(DTYPE_BF16) == 2);
  CHECK(DtypeBytes(DTYPE_FP16) == 2);
  CHECK(DtypeBytes(DTYPE_UNSPECIFIED) == 0);
}

TEST_CASE("matmul layout names parse back", "[ir][enum]") {
  for (MatmulLayout l : {MATMUL_LAYOUT_NN, MATMUL_LAYOUT_NT, MATMUL_LAYOUT_TN}) {
    REQUIRE(ParseMatmulLayout(Name(l)).has_value());
    CHECK(*ParseMatmulLayout(Name(l)) == l);
  }
  CHECK_FALSE(ParseMatmulLayout("tt").has_value());
  CHECK_FALSE(ParseMatmulLayout("unspecified").has_value());
}

}  // namespace
}  // namespace accel::ir
