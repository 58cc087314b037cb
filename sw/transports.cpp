#include "sw/transports.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::sw {

namespace {

// Throws std::invalid_argument unless `name` is a transport.
void check_name(const std::string& name) {
  const auto& names = transport_names();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  std::string valid;
  for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown transport '" + name + "' (valid: " + valid + ")");
}

bool one_of(const std::string& name, std::initializer_list<const char*> set) {
  check_name(name);
  return std::any_of(set.begin(), set.end(), [&](const char* n) { return name == n; });
}

}  // namespace

const std::vector<std::string>& transport_names() {
  static const std::vector<std::string> names{// AllReduce transports (host-bridge.md §4, in table order)
                                              "pull", "bulk_pull", "full", "payload_rsag", "bulk_push", "full_phased",
                                              "payload_rsag_phased", "bulk_push_phased", "write_ring", "nccl_ll",
                                              "nccl_shm", "nccl_simple_read",
                                              // data-movement probes
                                              "read_ring", "write_all"};
  return names;
}

const std::vector<std::string>& allreduce_transport_names() {
  // the two probes end transport_names()
  static const std::vector<std::string> names(transport_names().begin(), transport_names().end() - 2);
  return names;
}

CollectiveSpec transport_spec(const std::string& name, std::uint64_t bytes_per_rank, int ranks) {
  check_name(name);
  CollectiveSpec s;
  if (name == "read_ring") {
    s.op = Op::sendrecv;
    s.algorithm = "read";
    s.bytes = bytes_per_rank;
  } else if (name == "write_all") {
    s.op = Op::allgather;
    s.algorithm = "direct";
    s.bytes = bytes_per_rank * static_cast<std::uint64_t>(std::max(ranks, 0));
  } else {
    s.op = Op::allreduce;
    s.algorithm = name;
    s.bytes = bytes_per_rank;
  }
  layout(s, ranks);  // validates ranks and size
  return s;
}

bool transport_reads_peers(const std::string& name) {
  return one_of(name, {"pull", "bulk_pull", "nccl_simple_read", "read_ring"});
}

bool transport_fans_out(const std::string& name) {
  return one_of(name, {"full", "payload_rsag", "bulk_push", "write_all"});
}

}  // namespace fabricsim::sw
