#ifndef ACCEL_PLANNER_COLLECTIVE_COST_H_
#define ACCEL_PLANNER_COLLECTIVE_COST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"

// Time of one collective under the ring algorithm's α–β model (Thakur, Rabenseifner and Gropp
// 2005, "Optimization of Collective Communication Operations in MPICH", §4; the bus-bandwidth
// factors of NCCL's nccl-tests doc/PERFORMANCE.md). For a buffer of n bytes over p ranks with
// link latency α (seconds) and bandwidth β (bytes per second):
//   all-reduce      2·(p−1)·α + 2·(p−1)/p · n/β   (reduce-scatter then all-gather)
//   all-gather      (p−1)·α + (p−1)/p · n/β       (n = the gathered, full buffer)
//   reduce-scatter  (p−1)·α + (p−1)/p · n/β       (n = the full input buffer)
//   all-to-all      (p−1)·α + (p−1)/p · n/β       (n = one rank's send buffer; pairwise exchange,
//                   each rank keeps 1/p and sends a (p−1)/p share; NCCL's alltoall busbw factor)
//   send/recv       α + n/β
// p = 1 costs nothing.
namespace accel::planner {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kSendRecv, kAllToAll };

// The plan's name for it (CommunicationTime.collective).
ir::Collective IrCollective(Collective c);

// Latency steps of one call: 2(p−1), p−1, p−1, 1 or p−1 (0 when p ≤ 1).
int64_t RingSteps(Collective c, int64_t group_size);

// Fraction of the buffer each rank sends: 2(p−1)/p, (p−1)/p, (p−1)/p, 1 or (p−1)/p (0 when
// p ≤ 1).
double RingBandwidthFactor(Collective c, int64_t group_size);

// Seconds for `calls` collectives of `bytes_per_call` bytes each over `group_size` ranks.
// `bytes_per_second` > 0, `latency_seconds` ≥ 0.
double RingSeconds(Collective c, int64_t group_size, int64_t calls, double bytes_per_call,
                   double bytes_per_second, double latency_seconds);

// The formula of RingSeconds with the numbers substituted, e.g.
// "4 x (2*(2-1) x 5e-05 s + 2*(2-1)/2 x 1.2 MB / 2 GB/s)".
std::string RingFormula(Collective c, int64_t group_size, int64_t calls, double bytes_per_call,
                        double bytes_per_second, double latency_seconds);

// One timed collective: `seconds` for one call on a buffer of `bytes` over `group_size` ranks.
struct CollectiveSample {
  int64_t group_size = 0;
  double bytes = 0;
  double seconds = 0;
};

// Link latency α (seconds) and bandwidth β (bytes per second) fitted to all-reduce samples by
// least squares on t = α·2(p−1) + (1/β)·(2(p−1)/p)·n (the ring model above; samples with p ≤ 1
// are ignored). α is clamped at 0 (a negative intercept means latency below the timer's
// resolution). Errors: InvalidArgument with fewer than two usable samples or when the samples
// cannot separate α from β (all with the same n / p ratio), or a bandwidth that is not
// positive.
struct RingFit {
  double latency_seconds = 0;
  double bytes_per_second = 0;
};
absl::StatusOr<RingFit> FitAllReduceRing(const std::vector<CollectiveSample>& samples);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_COLLECTIVE_COST_H_
