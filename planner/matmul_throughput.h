#ifndef ACCEL_PLANNER_MATMUL_THROUGHPUT_H_
#define ACCEL_PLANNER_MATMUL_THROUGHPUT_H_

#include <cstdint>
#include <string_view>

#include "ir/plan.pb.h"

// The matrix-multiply throughput the step-time model assumes for one matmul of a given shape.
// A profile with a measured grid for the dtype (accel.ir.MatmulGrid, from `accel calibrate`)
// answers by interpolating the grid; one without answers its peak for every shape. Small and
// thin matmuls reach far less than a large square one (blocking, packing and dispatch cost the
// same per call whatever the FLOPs), which a single peak cannot express.
namespace accel::planner {

// FLOP/s for C[m×n] = A[m×k]·B[k×n] with `dtype` operands (UNSPECIFIED reads as fp32) read in
// `layout` (UNSPECIFIED reads as NN), times profile.matmul_efficiency(), per device (per core
// when profile.shared_cores_per_node() > 0, like the peaks):
// - with a grid for (`dtype`, `layout`), else the dtype's NN grid (a profile measured before
//   layouts were, or one whose transposed layouts were not measured): log(FLOP/s) interpolated
//   trilinearly in (log m, log n, log k) between the grid points around the shape; each
//   coordinate is first clamped to the grid's range, so shapes beyond the grid take its edge (a
//   matmul larger than the largest measured one is assumed to run no faster than it).
// - otherwise: MatmulPeakFlopsPerSecond(profile, dtype) (planner/device_profiles.h).
// m, n, k < 1 count as 1. A grid that breaks accel.ir.MatmulGrid's contract (sizes not
// increasing, wrong count) is ignored; spec/device_profile_file.h refuses such files.
double MatmulFlopsPerSecond(const ir::DeviceProfile& profile, ir::Dtype dtype,
                            ir::MatmulLayout layout, int64_t m, int64_t n, int64_t k);

// The grid of `profile` for exactly (`dtype`, `layout`) (UNSPECIFIED layouts, in the request or
// the grid, read as NN), or nullptr when it has none (or only a malformed one).
const ir::MatmulGrid* FindMatmulGrid(const ir::DeviceProfile& profile, ir::Dtype dtype,
                                     ir::MatmulLayout layout = ir::MATMUL_LAYOUT_NN);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_MATMUL_THROUGHPUT_H_
