#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

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
  CheckEnum<Recompute>("training.recompute", 4);
  CheckEnum<DType>("precision.params", 3);
  CheckEnum<DType>("precision.compute", 3);
  CheckEnum<DType>("precision.reduce", 3);
  CheckEnum<LossScaling>("precision.loss_scaling", 3);
  CheckEnum<PipelineSchedule>("parallel.pipeline_schedule", 5);
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

// The registry carries the documentation the schema and docs/job-spec-reference.md are generated
// from: every key and section has a description, and a stated default is a valid value.
TEST_CASE("every field is documented and its default is valid", "[registry]") {
  CHECK_FALSE(JobDocument().title.empty());
  CHECK(JobDocument().description.size() > 20);
  for (const FieldInfo& field : JobFields()) {
    INFO(field.path);
    CHECK(field.description.size() > 20);
    CHECK(field.description.back() == '.');
    if (field.kind == FieldKind::kSection) CHECK(field.default_json.empty());
    if (field.required) CHECK(field.default_json.empty());
    CHECK((field.required_if_key.empty() == field.required_if_value.empty()));
    if (!field.required_if_key.empty()) {
      const FieldInfo* condition = FindField(JoinPath(field.parent, field.required_if_key));
      REQUIRE(condition != nullptr);
      CHECK(std::find(condition->enum_values.begin(), condition->enum_values.end(),
                      field.required_if_value) != condition->enum_values.end());
    }
    if (!field.required_unless.empty()) {
      CHECK(FindField(JoinPath(field.parent, field.required_unless)) != nullptr);
    }
    if (field.default_json.empty()) continue;
    nlohmann::json value = nlohmann::json::parse(field.default_json, nullptr, false);
    REQUIRE_FALSE(value.is_discarded());
    auto in_range = [&](double x) {
      if (field.minimum && (field.exclusive_minimum ? x <= *field.minimum : x < *field.minimum)) {
        return false;
      }
      if (field.maximum && (field.exclusive_maximum ? x >= *field.maximum : x > *field.maximum)) {
        return false;
      }
      return true;
    };
    // `auto` (the word) unless it is one of the enum's values (checkpoint.resume).
    if (value == "auto" && field.kind != FieldKind::kEnum) {
      CHECK(field.allows_auto);
      continue;
    }
    switch (field.kind) {
      case FieldKind::kInteger:
      case FieldKind::kSize:
        REQUIRE(value.is_number_integer());
        CHECK(in_range(value.get<double>()));
        break;
      case FieldKind::kNumber:
        REQUIRE(value.is_number());
        CHECK(in_range(value.get<double>()));
        break;
      case FieldKind::kBoolean:
        CHECK(value.is_boolean());
        break;
      case FieldKind::kString:
        REQUIRE(value.is_string());
        CHECK(MatchesPattern(field, value.get<std::string>()));
        break;
      case FieldKind::kEnum:
        REQUIRE(value.is_string());
        CHECK(std::find(field.enum_values.begin(), field.enum_values.end(),
                        value.get<std::string>()) != field.enum_values.end());
        break;
      case FieldKind::kNumberPair:
        REQUIRE(value.is_array());
        REQUIRE(value.size() == 2);
        for (const nlohmann::json& item : value) CHECK(in_range(item.get<double>()));
        break;
      case FieldKind::kSection:
        break;
    }
  }
}
