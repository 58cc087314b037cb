#pragma once
// The GPU collective transports of host-bridge.md §4 as data: which
// collective (sw/collectives.h) runs each transport of the report's table,
// and which fabric traffic classes it exercises (reads of peer memory,
// concurrent fan-out writes). Plain C++, no SystemC.
#include <cstdint>
#include <string>
#include <vector>

#include "sw/collectives.h"

namespace fabricsim::sw {

/// The report's transports, in table order: pull, bulk_pull, full,
/// payload_rsag, bulk_push, full_phased, payload_rsag_phased,
/// bulk_push_phased, write_ring, nccl_ll, nccl_shm, nccl_simple_read, then the
/// two data-movement probes read_ring and write_all (14 names).
const std::vector<std::string>& transport_names();

/// The 12 AllReduce transports of transport_names() (without the probes
/// read_ring and write_all), in table order: what a ladder bucket or a
/// decode race may pick.
const std::vector<std::string>& allreduce_transport_names();

/// The collective that runs transport `name` when every rank has a buffer of
/// `bytes_per_rank` bytes (the report's size, e.g. 80 KiB) on `ranks` ranks:
/// - the 12 AllReduce transports: Op::allreduce, algorithm = name,
///   bytes = bytes_per_rank;
/// - read_ring: Op::sendrecv "read" (rank r reads rank r - 1's buffer),
///   bytes = bytes_per_rank;
/// - write_all: Op::allgather "direct" (every rank writes its buffer to every
///   peer), bytes = bytes_per_rank x ranks.
/// Other fields keep CollectiveSpec's defaults (chunk_bytes 256 KiB).
/// Throws std::invalid_argument naming the valid transports for an unknown
/// name, and whatever layout() throws for the resulting spec (fewer than 2
/// ranks; AllReduce: bytes_per_rank not a positive multiple of 4 x ranks;
/// probes: not a positive multiple of 4 x ranks for read_ring, of 4 for
/// write_all).
CollectiveSpec transport_spec(const std::string& name, std::uint64_t bytes_per_rank, int ranks);

/// True if the transport moves data by reading peer memory (post_read of a
/// peer GPU): pull, bulk_pull, nccl_simple_read, read_ring. nccl_shm reads
/// host memory, not a peer: false. Throws std::invalid_argument for an
/// unknown name.
bool transport_reads_peers(const std::string& name);

/// True if every rank writes to all its peers concurrently (fan-out): full,
/// payload_rsag, bulk_push, write_all. The phased variants write one peer at
/// a time: false. Throws std::invalid_argument for an unknown name.
bool transport_fans_out(const std::string& name);

}  // namespace fabricsim::sw
