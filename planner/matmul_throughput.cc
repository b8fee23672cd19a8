#include "planner/matmul_throughput.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "planner/device_profiles.h"

namespace accel::planner {
namespace {

bool WellFormed(const ir::MatmulGrid& grid) {
  const int s = grid.sizes_size();
  if (s < 2 || grid.flops_per_second_size() != s * s * s) return false;
  for (int i = 0; i < s; ++i) {
    if (grid.sizes(i) < 1 || (i > 0 && grid.sizes(i) <= grid.sizes(i - 1))) return false;
  }
  for (double f : grid.flops_per_second()) {
    if (!(f > 0) || !std::isfinite(f)) return false;
  }
  return true;
}

// The grid interval holding log(x) after clamping: lower index and the weight of the upper one.
struct Bracket {
  int lower = 0;
  double upper_weight = 0;
};

Bracket Locate(const ir::MatmulGrid& grid, int64_t x) {
  const int s = grid.sizes_size();
  const int64_t clamped = std::clamp<int64_t>(x, grid.sizes(0), grid.sizes(s - 1));
  int i = 0;
  while (i + 2 < s && grid.sizes(i + 1) <= clamped) ++i;
  const double lo = std::log(static_cast<double>(grid.sizes(i)));
  const double hi = std::log(static_cast<double>(grid.sizes(i + 1)));
  const double v = std::log(static_cast<double>(clamped));
  return {i, std::clamp((v - lo) / (hi - lo), 0.0, 1.0)};
}

double Interpolate(const ir::MatmulGrid& grid, int64_t m, int64_t n, int64_t k) {
  const int s = grid.sizes_size();
  const std::array<Bracket, 3> b = {Locate(grid, m), Locate(grid, n), Locate(grid, k)};
  double log_flops = 0;
  for (int corner = 0; corner < 8; ++corner) {
    double weight = 1;
    std::array<int, 3> index{};
    for (int axis = 0; axis < 3; ++axis) {
      const bool upper = (corner >> axis) & 1;
      index[axis] = b[axis].lower + (upper ? 1 : 0);
      weight *= upper ? b[axis].upper_weight : 1 - b[axis].upper_weight;
    }
    if (weight == 0) continue;
    log_flops += weight * std::log(grid.flops_per_second((index[0] * s + index[1]) * s + index[2]));
  }
  return std::exp(log_flops);
}

ir::MatmulLayout Normalized(ir::MatmulLayout layout) {
  return layout == ir::MATMUL_LAYOUT_UNSPECIFIED ? ir::MATMUL_LAYOUT_NN : layout;
}

}  // namespace

const ir::MatmulGrid* FindMatmulGrid(const ir::DeviceProfile& profile, ir::Dtype dtype,
                                     ir::MatmulLayout layout) {
  const ir::Dtype wanted = dtype == ir::DTYPE_UNSPECIFIED ? ir::DTYPE_FP32 : dtype;
  for (const ir::MatmulGrid& grid : profile.matmul_grids()) {
    if (grid.dtype() == wanted && Normalized(grid.layout()) == Normalized(layout) &&
        WellFormed(grid)) {
      return &grid;
    }
  }
  return nullptr;
}

double MatmulFlopsPerSecond(const ir::DeviceProfile& profile, ir::Dtype dtype,
                            ir::MatmulLayout layout, int64_t m, int64_t n, int64_t k) {
  const ir::MatmulGrid* grid = FindMatmulGrid(profile, dtype, layout);
  if (grid == nullptr) grid = FindMatmulGrid(profile, dtype, ir::MATMUL_LAYOUT_NN);
  const double figure =
      grid != nullptr ? Interpolate(*grid, m, n, k) : MatmulPeakFlopsPerSecond(profile, dtype);
  return figure * profile.matmul_efficiency();
}

}  // namespace accel::planner
