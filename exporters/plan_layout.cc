#include "exporters/plan_layout.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace accel::exporters {

PlanLayout ReadLayout(const ir::Plan& plan) {
  PlanLayout out;
  for (const ir::MeshAxis& axis : plan.mesh().axes()) {
    const std::string& n = axis.name();
    if (n == "dp_replicate") out.dp_replicate = axis.size();
    else if (n == "dp_shard") out.dp_shard = axis.size();
    else if (n == "cp") out.cp = axis.size();
    else if (n == "tp") out.tp = axis.size();
    else if (n == "pp") out.pp = axis.size();
  }
  out.ep = std::max<int64_t>(plan.model().moe().expert_parallel(), 1);
  out.nodes = plan.topology().nodes();
  out.devices_per_node = plan.topology().devices_per_node();
  out.world = plan.topology().world_size();
  out.cpu = plan.topology().device_type() == ir::DEVICE_TYPE_CPU;
  return out;
}

const char* DtypeName(ir::Dtype dtype) {
  switch (dtype) {
    case ir::DTYPE_BF16: return "bf16";
    case ir::DTYPE_FP16: return "fp16";
    default: return "fp32";
  }
}

std::string ShortFloat(double value) {
  if (!std::isfinite(value)) return value != value ? "nan" : value > 0 ? "inf" : "-inf";
  // The fewest significant digits that read back as `value`, as d.ddde±XX.
  char buffer[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof(buffer), "%.*e", digits - 1, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string text = buffer;
  const size_t e = text.find('e');
  const int exponent = std::atoi(text.c_str() + e + 1);
  std::string sign = text[0] == '-' ? "-" : "";
  std::string digits;
  for (size_t i = sign.size(); i < e; ++i) {
    if (text[i] != '.') digits += text[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  // Python's repr: positional from 1e-4 up to 1e16, scientific outside.
  if (exponent < -4 || exponent >= 16) {
    std::string out = sign + digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    char exp[16];
    std::snprintf(exp, sizeof(exp), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp;
  }
  if (exponent < 0) return sign + "0." + std::string(-exponent - 1, '0') + digits;
  if (static_cast<int>(digits.size()) <= exponent + 1) {
    return sign + digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
  }
  return sign + digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
}

}  // namespace accel::exporters
