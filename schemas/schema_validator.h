#ifndef ACCEL_SCHEMAS_SCHEMA_VALIDATOR_H_
#define ACCEL_SCHEMAS_SCHEMA_VALIDATOR_H_

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

// The JSON Schema of job files (draft-07), generated from the field registry
// (spec/field_registry.cc) and embedded into the binary at build time, and an in-process
// validator for it (valijson). schemas/accel-job.schema.json is the checked-in copy.
namespace accel::schemas {

// The schema's text, byte for byte as generated (and as in the up-to-date checked-in
// schemas/accel-job.schema.json).
std::string_view JobSchemaText();

// The schema parsed as JSON. Errors: Internal when the embedded text is not valid JSON (a
// build problem; a test guards against it).
absl::StatusOr<const nlohmann::json*> JobSchemaJson();

// One schema violation. `path` leads from the document root to the offending value: object
// keys as they are, array indices as decimal strings (the caller knows which is which from the
// document). `message` is valijson's description, e.g. "Missing required property 'steps'.".
struct SchemaViolation {
  std::vector<std::string> path;
  std::string message;
};

// Validates `document` against the job schema and returns every violation (empty when valid),
// one per distinct path (the first description valijson gave for it). The parsed schema is
// built once and reused. Errors: Internal when the embedded schema cannot be parsed.
absl::StatusOr<std::vector<SchemaViolation>> ValidateJobDocument(const nlohmann::json& document);

}  // namespace accel::schemas

#endif  // ACCEL_SCHEMAS_SCHEMA_VALIDATOR_H_
