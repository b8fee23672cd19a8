#ifndef ACCEL_COMMON_EXIT_CODES_H_
#define ACCEL_COMMON_EXIT_CODES_H_

namespace accel {

// Process exit codes shared by every subcommand (docs/design.md "Errors").
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;   // bad spec, impossible plan, does not fit
inline constexpr int kExitUsage = 2;     // bad command line
inline constexpr int kExitInternal = 3;  // a bug in accel (an absl::Status that escaped)
inline constexpr int kExitRuntime = 4;   // the run failed (worker crash, I/O, collective timeout)

}  // namespace accel

#endif  // ACCEL_COMMON_EXIT_CODES_H_
