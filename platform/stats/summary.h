// Statistics / summary helpers for fabricsim experiments.
//
// Plain C++17 (no SystemC). Used to reduce per-seed simulation results into
// means with confidence intervals and paired group-vs-group deltas, emitted
// as JSON for reports.
//
// Conventions:
//   * Units are those of the input values (the functions are unit-agnostic);
//     "_pct" fields are percentages (0..100 scale, may be negative).
//   * Invalid input is reported with std::invalid_argument.
//   * JSON output uses nlohmann::ordered_json: keys appear in insertion order
//     (the order documented below), never re-sorted, so the same input
//     always dumps to byte-identical text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fabricsim::stats {

/// Mean of a sample with a two-sided Student-t confidence interval.
struct MeanCI {
  std::size_t n;      ///< number of observations
  double mean;        ///< arithmetic mean
  double sd;          ///< sample standard deviation (divisor n-1); 0 if n==1
  double half_width;  ///< CI half width; 0 if n==1
  double lo;          ///< mean - half_width
  double hi;          ///< mean + half_width
};

/// Mean and two-sided confidence interval of `x`.
///
/// sd = sqrt(sum (x_i - mean)^2 / (n-1));
/// half_width = t_{1-(1-level)/2, n-1} * sd / sqrt(n), with the Student-t
/// quantile from Boost.Math (boost::math::students_t). Standard textbook
/// t-interval, e.g. NIST/SEMATECH e-Handbook of Statistical Methods §7.2.2.1.
/// n==1 gives sd = 0 and half_width = 0 (lo == hi == mean).
///
/// @param x      observations (any order, any unit)
/// @param level  confidence level, open interval (0,1); default 0.95
/// @throws std::invalid_argument if x is empty or level is not in (0,1)
MeanCI mean_ci(const std::vector<double>& x, double level = 0.95);

/// Paired difference a - b with a normal-approximation confidence interval.
struct PairedDelta {
  std::size_t n;      ///< number of pairs
  double mean_delta;  ///< mean of d_i = a_i - b_i
  double sd;          ///< sample sd of d (divisor n-1); 0 if n==1
  double half_width;  ///< z * sd / sqrt(n)
  double lo;          ///< mean_delta - half_width
  double hi;          ///< mean_delta + half_width
  double t_lo;        ///< Student-t interval of the same d_i (mean_ci(d, level)); = mean_delta if n==1
  double t_hi;
  double rel_pct;     ///< 100 * mean_delta / mean(b); NaN if mean(b)==0
  double rel_lo_pct;  ///< 100 * lo / mean(b); NaN if mean(b)==0
  double rel_hi_pct;  ///< 100 * hi / mean(b); NaN if mean(b)==0
};

/// Paired comparison of `a` against `b` (a_i paired with b_i by index).
///
/// d_i = a_i - b_i; half_width = z * sd(d) / sqrt(n) with
/// z = quantile(boost::math::normal(0,1), 1-(1-level)/2) (1.959964 for 95 %).
/// This is the large-sample (normal approximation) interval for a paired
/// mean difference; note it is narrower than the t-interval for small n,
/// which is given beside it (t_lo, t_hi: mean_ci of the differences).
/// Relative figures are expressed against mean(b) (b is the baseline).
///
/// @param a, b   equally sized, non-empty vectors, same unit
/// @param level  confidence level in (0,1); default 0.95
/// @throws std::invalid_argument if sizes differ, inputs are empty, or level
///         is not in (0,1)
PairedDelta paired_delta(const std::vector<double>& a, const std::vector<double>& b, double level = 0.95);

/// Nearest-rank percentile: sorted(v)[ceil(p/100 * n) - 1].
///
/// Always returns one of the input values (no interpolation). Uses
/// std::nth_element (O(n)); `v` is taken by value and reordered.
/// Examples: 1..100 at p=99 -> 99; 1..10 at p=99 -> 10; {5} at any p -> 5.
///
/// @param v  observations (any order); must not contain NaN
/// @param p  percentile in (0, 100]
/// @throws std::invalid_argument if v is empty, contains NaN, or p is not
///         in (0,100]
double percentile_nearest_rank(std::vector<double> v, double p);

/// Index (0-based, in ascending order) that percentile_nearest_rank selects
/// among n values at percentile p: ceil(p n / 100) - 1 clamped to [0, n-1]
/// (n >= 1, p in (0, 100]; no check).
std::size_t nearest_rank_index(std::size_t n, double p);

/// One simulation run: the configuration group it belongs to, the RNG seed
/// it ran with, and its scalar metrics by name.
struct Sample {
  std::string group;
  std::uint64_t seed;
  std::map<std::string, double> metrics;
};

/// Summarise samples per group and as paired deltas between every ordered
/// pair of groups.
///
/// Output (nlohmann::ordered_json, keys in exactly this order):
/// @code
/// { "groups": { "<group>": { "n": N, "metrics": { "<metric>":
///       {"mean", "sd", "ci95_lo", "ci95_hi", "half_width"} } } },
///   "paired_deltas": [ { "a": "<A>", "b": "<B>", "n": N, "metrics": {
///       "<metric>": {"mean_delta", "ci95_lo", "ci95_hi", "t_ci95_lo",
///                    "t_ci95_hi", "rel_pct", "rel_ci95_lo_pct",
///                    "rel_ci95_hi_pct"} } } ] }
/// @endcode
///  * groups appear in `group_order` order, metrics in `metric_names` order;
///  * group statistics come from mean_ci(values, 0.95) (Student t);
///  * paired_deltas lists every ordered pair (A,B), A != B, A outer loop and
///    B inner loop over `group_order`; each entry is paired_delta(A, B, 0.95)
///    (normal approximation, link-layer spec), i.e. delta = A - B, relative
///    to mean(B), and t_ci95_* the Student-t interval of the same
///    differences (mean_ci);
///  * with one sample (n == 1) sd, half_width and every interval bound are
///    null (no spread can be estimated);
///  * pairing is by seed: values are aligned on seeds sorted ascending, so
///    the input order of `samples` does not affect the output;
///  * any non-finite double (e.g. rel_pct when mean(B)==0) is written as
///    JSON null.
/// Metrics present in a sample but not listed in `metric_names` are ignored.
///
/// @throws std::invalid_argument (message names the offending item) if:
///   a group in `group_order` has no sample; `group_order` or `metric_names`
///   contains a duplicate; a sample's group is not in `group_order`; two
///   samples share the same (group, seed); a sample lacks one of
///   `metric_names`; two groups do not have identical seed sets.
nlohmann::ordered_json summarize(const std::vector<Sample>& samples, const std::vector<std::string>& metric_names,
                                 const std::vector<std::string>& group_order);

}  // namespace fabricsim::stats
