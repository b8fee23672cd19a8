#include "planner/collective_cost.h"

#include <cmath>
#include <cstdio>

#include "absl/status/status.h"

namespace accel::planner {
namespace {

std::string G(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", v);
  return buffer;
}

}  // namespace

ir::Collective IrCollective(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return ir::COLLECTIVE_ALL_REDUCE;
    case Collective::kAllGather: return ir::COLLECTIVE_ALL_GATHER;
    case Collective::kReduceScatter: return ir::COLLECTIVE_REDUCE_SCATTER;
    case Collective::kSendRecv: return ir::COLLECTIVE_SEND_RECV;
    case Collective::kAllToAll: return ir::COLLECTIVE_ALL_TO_ALL;
  }
  return ir::COLLECTIVE_UNSPECIFIED;
}

int64_t RingSteps(Collective c, int64_t group_size) {
  if (group_size <= 1) return 0;
  switch (c) {
    case Collective::kAllReduce: return 2 * (group_size - 1);
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return group_size - 1;
    case Collective::kSendRecv: return 1;
  }
  return 0;
}

double RingBandwidthFactor(Collective c, int64_t group_size) {
  if (group_size <= 1) return 0;
  const double p = static_cast<double>(group_size);
  switch (c) {
    case Collective::kAllReduce: return 2 * (p - 1) / p;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return (p - 1) / p;
    case Collective::kSendRecv: return 1;
  }
  return 0;
}

double RingSeconds(Collective c, int64_t group_size, int64_t calls, double bytes_per_call,
                   double bytes_per_second, double latency_seconds) {
  if (group_size <= 1 || calls <= 0) return 0;
  const double one = static_cast<double>(RingSteps(c, group_size)) * latency_seconds +
                     RingBandwidthFactor(c, group_size) * bytes_per_call / bytes_per_second;
  return static_cast<double>(calls) * one;
}

std::string RingFormula(Collective c, int64_t group_size, int64_t calls, double bytes_per_call,
                        double bytes_per_second, double latency_seconds) {
  const std::string p = std::to_string(group_size);
  std::string steps, factor;
  switch (c) {
    case Collective::kAllReduce:
      steps = "2*(" + p + "-1)";
      factor = "2*(" + p + "-1)/" + p;
      break;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      steps = "(" + p + "-1)";
      factor = "(" + p + "-1)/" + p;
      break;
    case Collective::kSendRecv:
      steps = "1";
      factor = "1";
      break;
  }
  return std::to_string(calls) + " x (" + steps + " x " + G(latency_seconds) + " s + " + factor +
         " x " + G(bytes_per_call) + " B / " + G(bytes_per_second) + " B/s)";
}

absl::StatusOr<RingFit> FitAllReduceRing(const std::vector<CollectiveSample>& samples) {
  // Normal equations of t = a·x + c·y, x = 2(p−1) latency steps, y = 2(p−1)/p · n bytes sent.
  double xx = 0, xy = 0, yy = 0, xt = 0, yt = 0;
  int used = 0;
  for (const CollectiveSample& s : samples) {
    if (s.group_size <= 1) continue;
    const double x = static_cast<double>(RingSteps(Collective::kAllReduce, s.group_size));
    const double y = RingBandwidthFactor(Collective::kAllReduce, s.group_size) * s.bytes;
    xx += x * x;
    xy += x * y;
    yy += y * y;
    xt += x * s.seconds;
    yt += y * s.seconds;
    ++used;
  }
  if (used < 2) return absl::InvalidArgumentError("need at least two all-reduce samples");
  const double det = xx * yy - xy * xy;
  if (!(std::abs(det) > 1e-12 * xx * yy)) {
    return absl::InvalidArgumentError("the samples cannot separate latency from bandwidth");
  }
  double latency = (xt * yy - yt * xy) / det;
  double inverse_bandwidth = (yt * xx - xt * xy) / det;
  if (latency < 0) {
    latency = 0;
    inverse_bandwidth = yt / yy;
  }
  if (!(inverse_bandwidth > 0)) {
    return absl::InvalidArgumentError("fitted bandwidth is not positive");
  }
  return RingFit{latency, 1.0 / inverse_bandwidth};
}

}  // namespace accel::planner
