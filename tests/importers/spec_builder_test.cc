#include <catch2/catch.hpp>

#include "importers/spec_builder.h"

namespace accel::importers {
namespace {

TEST_CASE("spec builder: fields in schema order with their sources", "[importers][emitter]") {
  SpecBuilder spec;
  spec.Set("sharding.stage", "3", "zero_optimization.stage");
  spec.Set("version", "1", "");
  spec.Set("data.train.path", "a.txt", "--data");
  spec.Note("", "header");
  spec.Note("training", "lr omitted");
  CHECK(spec.Render() ==
        "# header\n"
        "version: 1\n"
        "data:\n"
        "  train:\n"
        "    path: a.txt  # --data\n"
        "training: {}\n"
        "  # lr omitted\n"
        "sharding:\n"
        "  stage: 3  # zero_optimization.stage\n");
}

TEST_CASE("spec builder: comments stay one line whatever the source key holds",
          "[importers][emitter]") {
  SpecBuilder spec;
  spec.Set("version", "1", "key\nuse_cpu: false\r\x01\xff");
  spec.Note("", "a\nb: 1");
  CHECK(spec.Render() == "# a?b: 1\nversion: 1  # key?use_cpu: false???\n");
}

TEST_CASE("spec builder: scalars read back as written", "[importers][emitter]") {
  CHECK(YamlFloat(1.0) == "1.0");
  CHECK(YamlFloat(3e-5) == "3e-05");
  CHECK(YamlFloat(0.1) == "0.1");
  CHECK(YamlFloat(1e9) == "1e+09");
  CHECK(YamlInt(-1) == "-1");
  CHECK(YamlString("c4") == "c4");
  CHECK(YamlString("auto") == "\"auto\"");
  CHECK(YamlString("true") == "\"true\"");
  CHECK(YamlString("12") == "\"12\"");
  CHECK(YamlString("a b: \"c\"") == "\"a b: \\\"c\\\"\"");
}

}  // namespace
}  // namespace accel::importers
