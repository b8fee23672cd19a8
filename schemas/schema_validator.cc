#define VALIJSON_USE_EXCEPTIONS 1

#include "schemas/schema_validator.h"

#include <exception>
#include <memory>
#include <set>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "absl/status/status.h"

namespace accel::schemas {

// Defined in the build-generated job_schema_text.cc.
extern const char kJobSchemaText[];
extern const size_t kJobSchemaTextSize;

namespace {

struct ParsedSchema {
  nlohmann::json json;
  valijson::Schema schema;
  absl::Status status;
};

// Parsed once per process; valijson's Schema is immutable after population.
const ParsedSchema& GetParsedSchema() {
  static const ParsedSchema* parsed = [] {
    auto* p = new ParsedSchema();
    try {
      p->json = nlohmann::json::parse(JobSchemaText());
      valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
      valijson::adapters::NlohmannJsonAdapter adapter(p->json);
      parser.populateSchema(adapter, p->schema);
    } catch (const std::exception& e) {
      p->status = absl::InternalError(std::string("embedded job schema is invalid: ") + e.what());
    }
    return p;
  }();
  return *parsed;
}

}  // namespace

std::string_view JobSchemaText() { return std::string_view(kJobSchemaText, kJobSchemaTextSize); }

absl::StatusOr<const nlohmann::json*> JobSchemaJson() {
  const ParsedSchema& parsed = GetParsedSchema();
  if (!parsed.status.ok()) return parsed.status;
  return &parsed.json;
}

absl::StatusOr<std::vector<SchemaViolation>> ValidateJobDocument(const nlohmann::json& document) {
  const ParsedSchema& parsed = GetParsedSchema();
  if (!parsed.status.ok()) return parsed.status;
  std::vector<SchemaViolation> violations;
  try {
    // The validator caches compiled `pattern` regexes; keep one per thread.
    thread_local valijson::Validator validator(valijson::Validator::kStrongTypes);
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter adapter(document);
    if (validator.validate(parsed.schema, adapter, &results)) return violations;
    std::set<std::vector<std::string>> seen;
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
      SchemaViolation violation;
      for (const std::string& part : error.context) {
        if (part == "<root>") continue;
        // valijson writes "[key]" and "[3]".
        if (part.size() >= 2 && part.front() == '[' && part.back() == ']') {
          violation.path.push_back(part.substr(1, part.size() - 2));
        } else {
          violation.path.push_back(part);
        }
      }
      if (!seen.insert(violation.path).second) continue;
      violation.message = error.description;
      violations.push_back(std::move(violation));
    }
  } catch (const std::exception& e) {
    return absl::InternalError(std::string("schema validation failed: ") + e.what());
  }
  return violations;
}

}  // namespace accel::schemas
