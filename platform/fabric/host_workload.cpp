// pcie-host configuration, the measurement workload (docs/models/pcie.md,
// "Harness" and "Schedules"): the GPU group, a transport or a user's
// schedule, size, duration and flags; the memory-fit check of everything
// the run can use; the run section.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>
#include <utility>

#include "platform/fabric/fabric_config.h"
#include "platform/fabric/host_parse.h"
#include "sw/schedule_exec.h"
#include "sw/transports.h"

namespace fabricsim::fabric::host_parse {

namespace {

// workload.algorithm: schedule loads the user's schedule (null otherwise) and
// sets the default group to its ranks; without one, the schedule keys are errors.
std::shared_ptr<const sw::Schedule> workload_schedule(config::Section& w, HostRunConfig& c,
                                                      std::vector<std::string>& group_default) {
  const HostSpec& H = c.host;
  // A user's schedule (docs/models/pcie.md, "Schedules") instead of a transport.
  const bool schedule = w.has("algorithm") && w.choice("algorithm", "", {"schedule"}) == "schedule";
  std::shared_ptr<const sw::Schedule> S;
  if (schedule) {
    S = load_workload_schedule(w, c.workload.schedule_path);
    const std::string where = fmt::format("{}:{}: ", S->file, S->ngpus_line);
    if (!w.has("group")) {
      if (S->ngpus > static_cast<int>(H.gpus.size()))
        w.fail("schedule", fmt::format("{}the schedule is for ngpus={} ranks, the host has {} GPUs", where, S->ngpus,
                                       H.gpus.size()));
      group_default.clear();
      for (int g = 0; g < S->ngpus; ++g) group_default.push_back(std::to_string(g));
    }
    if (w.has("rank_map"))
      w.fail("rank_map", "on a pcie-host fabric workload.group places the ranks: schedule rank i runs on GPU group[i]");
  } else {
    for (const char* k : {"schedule", "rank_map", "collective", "root"})
      if (w.has(k)) w.fail(k, "only read with workload.algorithm: schedule");
  }
  return S;
}

// workload.group: distinct GPUs of this host, at least 2.
void workload_group(config::Section& w, HostRunConfig& c, const std::vector<std::string>& group_default) {
  const HostSpec& H = c.host;
  HostWorkload& W = c.workload;
  W.group.clear();
  std::set<int> seen;
  for (const auto& g : w.strings("group", group_default)) {
    int v = -1;
    try {
      std::size_t pos = 0;
      v = std::stoi(g, &pos);
      if (pos != g.size()) v = -1;
    } catch (...) {
    }
    if (v < 0 || v >= static_cast<int>(H.gpus.size()))
      w.fail("group", fmt::format("'{}' is not a GPU of this host (0..{})", g, H.gpus.size() - 1));
    if (!seen.insert(v).second) w.fail("group", fmt::format("GPU {} is listed twice", v));
    W.group.push_back(v);
  }
  if (W.group.size() < 2) w.fail("group", "a group needs at least 2 GPUs");
}

// workload.transport, size, duration, min_duration, ops, barrier, chunk and the flags.
void workload_sizes(config::Section& w, HostWorkload& W, const sw::Schedule* S) {
  const auto& names = sw::transport_names();
  std::vector<std::string> choices = names;
  W.transport = w.choice("transport", "pull", choices);  // validated, but a schedule moves data as its steps say
  if (S) W.transport = "schedule";
  W.size_bytes = w.bytes("size", W.size_bytes);
  const std::uint64_t n = W.group.size();
  if (W.size_bytes == 0 || W.size_bytes % (4 * n) != 0)
    w.fail("size", fmt::format("size must be a positive multiple of 4 x group size ({} B)", 4 * n));
  if (W.size_bytes > (1ull << 30)) w.fail("size", "at most 1GiB per GPU (one DMA operation moves < 4 GiB)");
  if (w.has("duration") && w.string("duration", "auto") == "auto") {
    W.duration_ps = 0;
  } else {
    W.duration_ps = w.time_ps("duration", 0);
    if (w.has("duration") && W.duration_ps == 0) w.fail("duration", "a cell must last > 0 (or write 'auto')");
  }
  W.min_duration_ps = w.time_ps("min_duration", W.min_duration_ps);
  // A schedule runs `ops` times (default once); ops: 0 runs it back to back for the cell's duration.
  // Every operation keeps its latency for the cell's percentiles (~50 bytes
  // each with its bookkeeping; 10^7 operations ran in ~25 s and 0.5 GB): the
  // limit keeps an explicit count simulable, as workload.iterations' 10^6 does.
  W.ops = w.integer("ops", S ? 1 : 0, 0, 10'000'000);
  W.barrier_ps = w.time_ps("barrier", 1'000'000);
  W.chunk_bytes = w.bytes("chunk", W.chunk_bytes);
  if (W.chunk_bytes == 0 || W.chunk_bytes % 4) w.fail("chunk", "chunk must be a positive multiple of 4 B");
  W.kernel_barriers = w.boolean("kernel_barriers", false);
  W.data = w.boolean("data", S != nullptr);  // a schedule moves real bytes and is checked by default
  W.verify = w.boolean("verify", true);
}

// workload.collective and root of a schedule, checked against the group and size.
void workload_schedule_checks(config::Section& w, HostRunConfig& c, std::shared_ptr<const sw::Schedule> S) {
  HostWorkload& W = c.workload;
  if (c.decode_mode) w.fail("mode", "decode rounds run transports picked by a selection policy, not a schedule");
  const bool op_explicit = w.has("collective");
  const sw::Op declared = sw::parse_op(
      w.choice("collective", "allreduce", {"allreduce", "reduce_scatter", "allgather", "alltoall", "broadcast", "custom"}));
  check_workload_schedule(w, *S, static_cast<int>(W.group.size()), op_explicit ? &declared : nullptr, W.size_bytes);
  W.collective = S->op;
  // A custom schedule has no definition to check its result against: its
  // `correct` is n/a whatever workload.verify says.
  if (S->op == sw::Op::custom) W.verify = false;
  W.root = static_cast<int>(w.integer("root", 0, 0, 1u << 20));
  if (S->op == sw::Op::broadcast && W.root >= S->ngpus)
    w.fail("root", fmt::format("broadcast root {} out of range [0, {}]", W.root, S->ngpus - 1));
  W.schedule = S;
}

}  // namespace

config::Section workload_section(config::Section& root, HostRunConfig& c) {
  config::Section w = root.child_or_empty("workload");
  HostWorkload& W = c.workload;
  std::vector<std::string> group_default{"0", "1", "2", "3"};
  const std::shared_ptr<const sw::Schedule> S = workload_schedule(w, c, group_default);
  workload_group(w, c, group_default);
  if (S && static_cast<int>(W.group.size()) != S->ngpus)
    w.fail("group", fmt::format("{}:{}: the schedule is for ngpus={} ranks, the group lists {} GPUs (schedule rank "
                                "i runs on GPU group[i])",
                                S->file, S->ngpus_line, S->ngpus, W.group.size()));
  workload_sizes(w, W, S.get());
  c.decode_mode = w.choice("mode", "transport", {"transport", "decode"}) == "decode";
  if (S) workload_schedule_checks(w, c, S);
  w.finish();
  return w;
}

void check_memory_fit(const HostRunConfig& c, const config::Section& host_memory, const config::Section& workload) {
  const HostSpec& H = c.host;
  // Every transport this run can use must fit in host memory (nccl_shm stages there),
  // and real bytes must fit in RAM.
  std::vector<std::pair<std::string, std::uint64_t>> uses{{c.workload.transport, c.workload.size_bytes}};
  if (c.workload.schedule) uses.clear();  // a schedule writes GPU to GPU: nothing staged in host memory
  if (c.decode_mode) {
    uses.clear();
    const auto& D = c.decode;
    for (auto b : D.allreduces) {
      for (const auto& t : D.candidates) uses.emplace_back(t, b);
      for (const auto* ld : {&D.ladder, &D.switch_local, &D.quadrant_crossing})
        for (const auto& k : ld->buckets) uses.emplace_back(k.transport, b);
    }
  }
  const int n = static_cast<int>(c.workload.group.size());
  std::uint64_t gpu_bytes = 0;
  for (const auto& [t, b] : uses) {
    auto spec = sw::transport_spec(t, b, n);
    spec.chunk_bytes = c.workload.chunk_bytes;
    spec.fabric_barriers = c.workload.kernel_barriers;
    const std::uint64_t need = sw::host_bytes(spec, n);
    if (need > H.host_memory_bytes)
      host_memory.fail(
          "size", fmt::format("{} of {} B per GPU on {} GPUs stages {} B in host memory; the host has {} B", t, b, n,
                              need, H.host_memory_bytes));
    gpu_bytes = std::max(gpu_bytes, sw::layout(spec, n).total);
  }
  if (const auto& S = c.workload.schedule)
    gpu_bytes =
        sw::layout_schedule(*S, c.workload.size_bytes, H.gpu.threadblock_rate_bytes_per_s > 0 ? sw::kRatePieceBytes : 0)
            .memory_bytes;
  const std::uint64_t ram = gpu_bytes * static_cast<std::uint64_t>(n) + H.host_memory_bytes;
  // Blamed on data: where it is written, else on what sized the buffers (a
  // schedule's layout, with its scratch chunks, or the size).
  if (c.workload.data && ram > (8ull << 30))
    workload.fail(
        workload.has("data")  ? "data"
        : c.workload.schedule ? "schedule"
                              : "size",
        fmt::format("real bytes need {} MiB of RAM ({} GPUs x {} MiB of buffers{}, and host memory); at "
                    "most 8192 MiB (use data: false, a smaller size or fabric.host_memory.size)",
                    ram >> 20, n, gpu_bytes >> 20,
                    c.workload.schedule ? " laid out by the schedule: input, output and scratch chunks" : ""));
}

void run_section(config::Section& root, HostRunConfig& c) {
  config::Section r = root.child_or_empty("run");
  c.seed = r.integer("seed", 1, 0, ~0ULL);
  c.deadline_ps = r.time_ps("deadline", 600'000'000'000'000ull);
  if (c.deadline_ps == 0) r.fail("deadline", "must be above 0 (leave it out for the default, 600 s)");
  r.finish();
}

}  // namespace fabricsim::fabric::host_parse
