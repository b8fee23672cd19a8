// A Communicator decorator that records every collective it issues, so tests can compare the
// collectives that ran (kind, group size, elements, dtype) with what the plan says.
#ifndef ACCEL_EXECUTOR_COMM_TRACE_H_
#define ACCEL_EXECUTOR_COMM_TRACE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "executor/communicator.h"

namespace accel::exec {

// One collective as issued (not as completed).
struct CollectiveRecord {
  std::string kind;       // "all_reduce", "all_gather", "reduce_scatter", "broadcast", ...
  int group_size = 0;
  int64_t elements = 0;   // elements of this rank's input (reduce-scatter: the whole input)
  std::string dtype;      // c10 scalar type name, e.g. "Float", "BFloat16"
};

// Thread-safe list of records shared by the communicators of one rank.
class CollectiveTrace {
 public:
  void Add(CollectiveRecord record);
  std::vector<CollectiveRecord> Records() const;
  void Clear();

 private:
  mutable std::mutex mu_;
  std::vector<CollectiveRecord> records_;
};

// Wraps inner so that every collective is appended to trace before it is forwarded.
std::shared_ptr<Communicator> WithTrace(std::shared_ptr<Communicator> inner,
                                        std::shared_ptr<CollectiveTrace> trace);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_COMM_TRACE_H_
