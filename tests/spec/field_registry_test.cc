#include <catch2/catch.hpp>

#include <set>

#include "spec/field_registry.h"

using namespace accel::spec;

TEST_CASE("every field has a parent section and a store", "[registry]") {
  std::set<std::string> paths;
  for (const FieldInfo& field : JobFields()) {
    INFO(field.path);
    CHECK(paths.insert(field.path).second);
    if (!field.parent.empty()) {
      const FieldInfo* parent = FindField(field.parent);
      REQUIRE(parent != nullptr);
      CHECK(parent->kind == FieldKind::kSection);
      CHECK(paths.count(field.parent) == 1);  // parents come first
    }
    CHECK((field.kind == FieldKind::kSection) == (field.store == nullptr));
    if (field.kind == FieldKind::kEnum) CHECK_FALSE(field.enum_values.empty());
  }
}

TEST_CASE("FindField and ChildKeys", "[registry]") {
  REQUIRE(FindField("parallel.tensor") != nullptr);
  CHECK(FindField("parallel.tensor")->allows_auto);
  CHECK(FindField("data.seq_len")->required);
  CHECK_FALSE(FindField("data.seq_len")->allows_auto);
  CHECK(FindField("cluster.device_memory")->kind == FieldKind::kSize);
  CHECK(FindField("parallel.tensr") == nullptr);
  CHECK(FindField("") == nullptr);
  CHECK(ChildKeys("") == std::vector<std::string>{"version", "name", "model", "data", "training",
                                                  "precision", "parallel", "sharding",
                                                  "checkpoint", "cluster"});
  CHECK(ChildKeys("data.train") ==
        std::vector<std::string>{"path", "format", "tokenizer", "dtype"});
  CHECK(ChildKeys("nothing").empty());
}

// The registry stores enum values by index, so the spellings must follow the C++ enumerators
// and agree with Name().
template <typename E>
void CheckEnum(const char* path, int count) {
  const FieldInfo* field = FindField(path);
  REQUIRE(field != nullptr);
  REQUIRE(static_cast<int>(field->enum_values.size()) == count);
  for (int i = 0; i < count; ++i) {
    INFO(path << " " << i);
    CHECK(field->enum_values[i] == Name(static_cast<E>(i)));
  }
}

TEST_CASE("enum spellings follow the enumerators", "[registry]") {
  CheckEnum<Arch>("model.arch", 2);
  CheckEnum<DataFormat>("data.train.format", 2);
  CheckEnum<TokenDtype>("data.train.dtype", 2);
  CheckEnum<OptimizerName>("training.optimizer.name", 2);
  CheckEnum<LrScheduleName>("training.lr_schedule.name", 3);
  CheckEnum<Recompute>("training.recompute", 3);
  CheckEnum<DType>("precision.params", 3);
  CheckEnum<DType>("precision.compute", 3);
  CheckEnum<DType>("precision.reduce", 3);
  CheckEnum<LossScaling>("precision.loss_scaling", 3);
  CheckEnum<PipelineSchedule>("parallel.pipeline_schedule", 3);
  CheckEnum<Offload>("sharding.offload", 3);
  CheckEnum<DeviceType>("cluster.device", 2);
  CheckEnum<ResumeMode>("checkpoint.resume", 2);
}

TEST_CASE("the name pattern has a hand-written matcher", "[registry]") {
  const FieldInfo* name = FindField("name");
  REQUIRE(name != nullptr);
  CHECK(MatchesPattern(*name, "gpt2-small_v1.2"));
  CHECK_FALSE(MatchesPattern(*name, "-leading-dash"));
  CHECK_FALSE(MatchesPattern(*name, "has space"));
  CHECK_FALSE(MatchesPattern(*name, "slash/name"));
  CHECK(MatchesPattern(*FindField("checkpoint.dir"), "anything at all"));
}
