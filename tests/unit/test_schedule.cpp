// Unit tests (no SystemC) of users' schedules: the MSCCL XML and native YAML
// parsers, the validator's errors (file:line: what), the step semantics run by
// the executor over a fake fabric (tests/unit/fake_world.h: random delivery
// order, no time), the correctness check and the critical path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sw/schedule.h"
#include "sw/schedule_exec.h"
#include "tests/unit/fake_world.h"

namespace {

namespace sw = fabricsim::sw;
using fabricsim::models::accelerator_api;
using fabricsim_test::FakeWorld;

const std::string kRoot = FABRICSIM_SOURCE_DIR;

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The two-rank AllReduce of the CLI fixtures.
std::string two_rank() { return read(kRoot + "/tests/cli/fixtures/schedules/allreduce-2.xml"); }

std::string replace(std::string s, const std::string& a, const std::string& b) {
  const auto p = s.find(a);
  EXPECT_NE(p, std::string::npos) << a;
  if (p != std::string::npos) s.replace(p, a.size(), b);
  return s;
}

// ScheduleError of parse + validate, "" if none.
std::string error_of(const std::string& xml) {
  try {
    sw::validate(sw::parse_msccl_xml(xml, "t.xml"));
  } catch (const sw::ScheduleError& e) {
    return e.what();
  }
  return "";
}

// A dependency on a step that says hasdep="0" (MSCCL's runtimes would not
// signal it) is a warning naming the step's line; one per such step; none for
// the file as msccl-tools wrote it.
TEST(ScheduleXml, DependencyOnAStepWithoutHasdepIsAWarning) {
  const std::string orig = read(kRoot + "/topologies/schedules/allpairs-allreduce-8.xml");
  EXPECT_TRUE(sw::parse_msccl_xml(orig, "ap.xml").warnings.empty());
  std::string zero = orig;
  std::size_t marked = 0;
  for (std::size_t p = zero.find("hasdep=\"1\""); p != std::string::npos; p = zero.find("hasdep=\"1\"", p)) {
    zero.replace(p, 10, "hasdep=\"0\"");
    ++marked;
  }
  ASSERT_GT(marked, 0u);
  const sw::Schedule s = sw::parse_msccl_xml(zero, "ap.xml");
  EXPECT_EQ(s.warnings.size(), marked);  // every step msccl-tools marked has a dependent
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_NE(s.warnings[0].find("ap.xml:"), std::string::npos) << s.warnings[0];
  EXPECT_NE(s.warnings[0].find("says hasdep=\"0\" but step"), std::string::npos) << s.warnings[0];
  // The steps run as ordered by depid / deps all the same.
  EXPECT_NO_THROW(sw::validate(s));
}

// Every rank fills its input (sw::input_value), meets at a barrier, then runs
// its part of `s`; "" or the FakeWorld's error (a deadlock, a bad access).
std::string run_schedule_on(FakeWorld& w, const sw::Schedule& s, const sw::ScheduleLayout& L) {
  return w.run([&](accelerator_api& a) {
    const auto& R = L.ranks[a.rank()];
    for (std::uint64_t i = 0; i < R.in_bytes / 4; ++i) {
      const float v = sw::input_value(s.op, a.rank(), i);
      std::memcpy(a.memory() + R.in + 4 * i, &v, 4);
    }
    a.barrier();
    sw::run_schedule(a, s, L, a.rank());
  });
}

// Run `s` at `bytes` on a fake fabric (seeded delivery order); "" or the first wrong rank and chunk.
std::string run_fake(const sw::Schedule& s, std::uint64_t bytes, std::uint32_t seed, std::string* err = nullptr) {
  const sw::ScheduleLayout L = sw::layout_schedule(s, bytes);
  FakeWorld w(s.ngpus, L.memory_bytes, 0, seed);
  const std::string e = run_schedule_on(w, s, L);
  if (err) *err = e;
  if (!e.empty()) return "run failed: " + e;
  std::vector<std::vector<float>> outs(s.ngpus);
  std::vector<const float*> ptr(s.ngpus);
  for (int r = 0; r < s.ngpus; ++r) {
    outs[r].resize(L.ranks[r].out_bytes / 4);
    std::memcpy(outs[r].data(), w.memory(r) + L.ranks[r].out, L.ranks[r].out_bytes);
    ptr[r] = outs[r].data();
  }
  return sw::check_outputs(s, L, ptr);
}

}  // namespace

// ---- parsers ---------------------------------------------------------------------

TEST(ScheduleParse, MscclXmlFieldsAndLines) {
  const sw::Schedule s = sw::parse_msccl_xml(two_rank(), "a.xml");
  EXPECT_EQ(s.name, "allreduce-2");
  EXPECT_EQ(s.op, sw::Op::allreduce);
  EXPECT_EQ(s.ngpus, 2);
  EXPECT_EQ(s.nchunksperloop, 2u);
  EXPECT_EQ(s.proto, "Simple");
  EXPECT_FALSE(s.inplace);
  ASSERT_EQ(s.gpus.size(), 2u);
  EXPECT_EQ(s.gpus[1].line, 11);
  const auto& t = s.gpus[0].tbs.at(0);
  EXPECT_EQ(t.send, 1);
  EXPECT_EQ(t.recv, 1);
  ASSERT_EQ(t.steps.size(), 4u);
  EXPECT_EQ(t.steps[1].type, sw::StepType::recv_reduce_copy);
  EXPECT_EQ(t.steps[1].srcbuf, sw::Buf::input);
  EXPECT_EQ(t.steps[1].dstbuf, sw::Buf::output);
  EXPECT_EQ(t.steps[0].srcoff, 1u);
  EXPECT_EQ(t.steps[1].line, 6);
  EXPECT_NO_THROW(sw::validate(s));
}

TEST(ScheduleParse, YamlFormCarriesTheSameSteps) {
  const sw::Schedule x = sw::parse_msccl_xml(two_rank(), "a.xml");
  const sw::Schedule y = sw::load_schedule(kRoot + "/tests/cli/fixtures/schedules/allreduce-2.yaml");
  ASSERT_EQ(x.gpus.size(), y.gpus.size());
  for (std::size_t g = 0; g < x.gpus.size(); ++g) {
    EXPECT_EQ(x.gpus[g].i_chunks, y.gpus[g].i_chunks);
    EXPECT_EQ(x.gpus[g].o_chunks, y.gpus[g].o_chunks);
    ASSERT_EQ(x.gpus[g].tbs.size(), y.gpus[g].tbs.size());
    for (std::size_t t = 0; t < x.gpus[g].tbs.size(); ++t) {
      const auto &a = x.gpus[g].tbs[t], &b = y.gpus[g].tbs[t];
      EXPECT_EQ(a.send, b.send);
      EXPECT_EQ(a.recv, b.recv);
      ASSERT_EQ(a.steps.size(), b.steps.size());
      for (std::size_t k = 0; k < a.steps.size(); ++k) {
        EXPECT_EQ(a.steps[k].type, b.steps[k].type);
        EXPECT_EQ(a.steps[k].cnt, b.steps[k].cnt);
        if (sw::reads_src(a.steps[k].type)) {
          EXPECT_EQ(a.steps[k].srcoff, b.steps[k].srcoff);
        }
        if (sw::writes_dst(a.steps[k].type)) {
          EXPECT_EQ(a.steps[k].dstoff, b.steps[k].dstoff);
        }
      }
    }
  }
  EXPECT_EQ(y.gpus[0].tbs[0].steps[1].line, 16);
}

TEST(ScheduleParse, ShippedXmlAndYamlFormsAgree) {
  for (const char* n :
       {"ring-allreduce-8", "allpairs-allreduce-8", "ring-allgather-8", "alltoall-8", "hierarchical-allreduce-4x4"}) {
    const auto x = sw::load_schedule(kRoot + "/topologies/schedules/" + std::string(n) + ".xml");
    const auto y = sw::load_schedule(kRoot + "/topologies/schedules/" + std::string(n) + ".yaml");
    ASSERT_EQ(x.gpus.size(), y.gpus.size()) << n;
    std::size_t steps_x = 0, steps_y = 0;
    for (std::size_t g = 0; g < x.gpus.size(); ++g)
      for (std::size_t t = 0; t < x.gpus[g].tbs.size(); ++t) {
        steps_x += x.gpus[g].tbs[t].steps.size();
        steps_y += y.gpus[g].tbs[t].steps.size();
        for (std::size_t k = 0; k < x.gpus[g].tbs[t].steps.size(); ++k) {
          EXPECT_EQ(x.gpus[g].tbs[t].steps[k].type, y.gpus[g].tbs[t].steps[k].type) << n;
          EXPECT_EQ(x.gpus[g].tbs[t].steps[k].depid, y.gpus[g].tbs[t].steps[k].depid) << n;
          EXPECT_EQ(x.gpus[g].tbs[t].steps[k].deps, y.gpus[g].tbs[t].steps[k].deps) << n;
        }
      }
    EXPECT_EQ(steps_x, steps_y) << n;
    EXPECT_GT(steps_x, 0u);
  }
}

// ---- validator -------------------------------------------------------------------

TEST(ScheduleValidate, BadInputNamesFileLineAndWhat) {
  const std::string g = two_rank();
  EXPECT_EQ(error_of(g), "");
  // A <tb> never closed: pugixml stops at the mismatched </gpu> on line 9.
  EXPECT_EQ(error_of(replace(g, "    </tb>\n  </gpu>\n  <gpu id=\"1\"", "  </gpu>\n  <gpu id=\"1\"")),
            "t.xml:9: malformed XML: Start-end tags mismatch");
  EXPECT_NE(error_of(replace(g, "type=\"rrc\"", "type=\"rrx\"")).find("t.xml:6: unknown step type 'rrx'"),
            std::string::npos);
  EXPECT_NE(error_of(replace(g, "srcbuf=\"o\"", "srcbuf=\"q\"")).find("t.xml:7: unknown buffer"), std::string::npos);
  EXPECT_NE(error_of(replace(g, "srcoff=\"1\" dstbuf", "srcoff=\"2\" dstbuf")).find("t.xml:5:"), std::string::npos);
  EXPECT_NE(error_of(replace(g, "coll=\"allreduce\"", "coll=\"allmagic\"")).find("t.xml:2: <algo> coll=\"allmagic\""),
            std::string::npos);
  EXPECT_NE(error_of(replace(g, "send=\"1\" recv=\"1\"", "send=\"0\" recv=\"1\"")).find("own rank"), std::string::npos);
  EXPECT_NE(error_of(replace(g, "send=\"1\" recv=\"1\"", "send=\"5\" recv=\"1\"")).find("outside [0, 1]"),
            std::string::npos);
  EXPECT_NE(error_of(replace(g, "ngpus=\"2\"", "ngpus=\"3\"")).find("lists 2 GPUs"), std::string::npos);
  // A whole number beyond 64 bits is out of range, not "not an integer".
  EXPECT_NE(error_of(replace(g, "ngpus=\"2\"", "ngpus=\"99999999999999999999\""))
                .find("t.xml:2: <algo> attribute ngpus=\"99999999999999999999\" outside [1, "),
            std::string::npos);
  EXPECT_NE(error_of(replace(g, "ngpus=\"2\"", "ngpus=\"2x\"")).find("ngpus=\"2x\" is not an integer"),
            std::string::npos);
  EXPECT_NE(error_of(replace(g, "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n      <step s=\"2\"",
                             "depid=\"0\" deps=\"3\" hasdep=\"0\"/>\n      <step s=\"2\""))
                .find("dependency cycle on rank 0"),
            std::string::npos);
  EXPECT_NE(error_of(replace(g, "depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n      <step s=\"2\"",
                             "depid=\"4\" deps=\"0\" hasdep=\"0\"/>\n      <step s=\"2\""))
                .find("depid 4 names no threadblock"),
            std::string::npos);
  // A count mismatch names the receive's line and both counts.
  EXPECT_NE(error_of(replace(g, "srcoff=\"0\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"1\"",
                             "srcoff=\"0\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"2\""))
                .find("t.xml:16: message 1 from rank 0 to rank 1 on channel 0: the send (line 7) moves 2 chunks"),
            std::string::npos);
  // The second send of rank 0 has no receive once rank 1's last step is a local copy.
  const std::string unmatched = replace(g, "type=\"r\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"0\"",
                                        "type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\"");
  EXPECT_NE(error_of(unmatched).find("t.xml:7: rank 0 threadblock 0 step 2 sends message 1"), std::string::npos);
}

// Malformed text that parsers read in part without a word: an attribute given
// twice (pugixml keeps both, attribute() the first), a second YAML document
// (yaml-cpp's Load keeps the first), a byte that is not UTF-8.
TEST(ScheduleParse, RepeatedAttributesSecondDocumentsAndNonUtf8AreErrors) {
  const std::string g = two_rank();
  auto parse_error = [](const std::string& text, const std::string& file) -> std::string {
    try {
      sw::parse_schedule(text, file);
    } catch (const sw::ScheduleError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(parse_error(g, "t.xml"), "");
  EXPECT_EQ(parse_error(replace(g, "<tb id=\"0\" send=\"1\"", "<tb id=\"0\" send=\"1\" send=\"0\""), "t.xml"),
            "t.xml:4: <tb> gives attribute 'send' twice (malformed XML)");
  EXPECT_EQ(
      parse_error(replace(g, "<gpu id=\"1\" i_chunks=\"2\"", "<gpu id=\"1\" i_chunks=\"2\" i_chunks=\"2\""), "t.xml"),
      "t.xml:11: <gpu> gives attribute 'i_chunks' twice (malformed XML)");
  // 0xff on line 2 (the name, column 22), a truncated 3-byte sequence, a surrogate; UTF-8 names are fine.
  EXPECT_EQ(parse_error(replace(g, "name=\"allreduce-2\"", "name=\"allreduce\xff\""), "t.xml"),
            "t.xml:2:22: byte 0xff is not UTF-8 text (save the file as UTF-8)");
  EXPECT_NE(parse_error(replace(g, "name=\"allreduce-2\"", "name=\"a\xe2\x82\""), "t.xml").find("byte 0xe2"),
            std::string::npos);
  EXPECT_NE(parse_error(replace(g, "name=\"allreduce-2\"", "name=\"a\xed\xa0\x80\""), "t.xml").find("byte 0xed"),
            std::string::npos);
  EXPECT_EQ(
      parse_error(replace(g, "name=\"allreduce-2\"", "name=\"all\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""), "t.xml"), "");
  std::ifstream f(kRoot + "/tests/cli/fixtures/schedules/allreduce-2.yaml");
  std::stringstream ys;
  ys << f.rdbuf();
  const std::string y = ys.str();
  ASSERT_EQ(parse_error(y, "t.yaml"), "");
  const int lines = static_cast<int>(std::count(y.begin(), y.end(), '\n'));
  EXPECT_EQ(parse_error(y + "---\nschedule: {}\n", "t.yaml"),
            "t.yaml:" + std::to_string(lines + 1) +
                ": a second YAML document begins here: a schedule file is one "
                "document");
}

TEST(ScheduleValidate, RunChecksNgpusCollAndSizes) {
  const sw::Schedule s = sw::parse_msccl_xml(two_rank(), "a.xml");
  auto err = [&](int ranks, const sw::Op* op, std::uint64_t bytes) {
    try {
      sw::check_run(s, ranks, op, bytes);
    } catch (const sw::ScheduleError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(err(2, nullptr, 65536), "");
  EXPECT_NE(err(4, nullptr, 65536).find("a.xml:2: the schedule is for ngpus=2 ranks, the fabric has 4"),
            std::string::npos);
  const sw::Op ag = sw::Op::allgather, ar = sw::Op::allreduce;
  EXPECT_NE(err(2, &ag, 65536).find("coll 'allreduce' disagrees with workload.collective 'allgather'"),
            std::string::npos);
  EXPECT_EQ(err(2, &ar, 65536), "");
  EXPECT_NE(err(2, nullptr, 65536 + 4).find("not a positive multiple of 4 B x nchunksperloop"), std::string::npos);
  // The sizes around T that fit both rules: lcm(4 x nchunksperloop, 4 x ranks) = 8 B here.
  EXPECT_NE(err(2, nullptr, 65536 + 4).find("(sizes that fit: multiples of 8 B, e.g. 65536 B or 65544 B)"),
            std::string::npos)
      << err(2, nullptr, 65536 + 4);
  EXPECT_NE(err(2, nullptr, 4).find("(sizes that fit: multiples of 8 B, e.g. 8 B)"), std::string::npos)
      << err(2, nullptr, 4);
  // Only sizes under 4 GiB (workload.size's limit) are suggested.
  EXPECT_NE(err(2, nullptr, 4294967290ull).find("(sizes that fit: multiples of 8 B, e.g. 4294967288 B)"),
            std::string::npos)
      << err(2, nullptr, 4294967290ull);
  sw::Schedule huge = s;
  huge.nchunksperloop = 1ull << 31;  // chunks of whole float32 values: multiples of 8 GiB
  try {
    sw::check_run(huge, 2, nullptr, 65536);
    ADD_FAILURE() << "no error";
  } catch (const sw::ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("(no size under 4 GiB fits: sizes must be multiples of 8589934592 B; lower "
                                         "nchunksperloop)"),
              std::string::npos)
        << e.what();
  }
  // In place, msccl-tools gives the aliased buffer 0 chunks: o_chunks=0 for
  // an AllReduce (the output is the input); both 0 is still an error.
  const sw::Schedule ip =
      sw::load_schedule(kRoot + "/tests/cli/fixtures/schedules/allreduce-2-inplace.xml");
  EXPECT_NO_THROW(sw::check_run(ip, 2, nullptr, 65536));
  EXPECT_EQ(run_fake(ip, 1024, 9), "");
  sw::Schedule none = ip;
  for (auto& G : none.gpus) G.i_chunks = 0;
  try {
    sw::check_run(none, 2, nullptr, 65536);
    ADD_FAILURE() << "i_chunks = o_chunks = 0 accepted";
  } catch (const sw::ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("o_chunks=0 chunks of 32768 B, but allreduce of 65536 B needs 65536 B of output"),
              std::string::npos)
        << e.what();
  }
  // An AllGather schedule's output must hold N x input.
  const sw::Schedule g = sw::load_schedule(kRoot + "/topologies/schedules/ring-allgather-8.xml");
  EXPECT_NO_THROW(sw::check_run(g, 8, nullptr, 8 << 20));
}

// Older MSCCL / SCCL files write neither ngpus nor coll: the <gpu> count is
// the rank count, and the collective is the workload's (resolve_collective).
TEST(ScheduleParse, OlderFilesWithoutNgpusAndCollTakeThemFromGpusAndWorkload) {
  const std::string old = replace(two_rank(), " ngpus=\"2\" coll=\"allreduce\"", "");
  sw::Schedule s = sw::parse_msccl_xml(old, "old.xml");
  EXPECT_EQ(s.ngpus, 2);
  EXPECT_FALSE(s.coll_given);
  EXPECT_EQ(s.coll, "");
  sw::validate(s);
  sw::resolve_collective(s, sw::Op::allgather);
  EXPECT_EQ(s.op, sw::Op::allgather);
  EXPECT_EQ(s.coll, "allgather");
  // A file that names its collective keeps it.
  sw::Schedule named = sw::parse_msccl_xml(two_rank(), "a.xml");
  EXPECT_TRUE(named.coll_given);
  sw::resolve_collective(named, sw::Op::allgather);
  EXPECT_EQ(named.op, sw::Op::allreduce);
  // Without ngpus, a file without <gpu> is an error at the <algo> line.
  EXPECT_NE(error_of("<algo name=\"x\" nchunksperloop=\"1\" coll=\"allreduce\">\n</algo>\n")
                .find("t.xml:1: <algo> lists no <gpu>"),
            std::string::npos);
  // The same schedule runs exactly once its collective is resolved.
  sw::Schedule ar = sw::parse_msccl_xml(old, "old.xml");
  sw::resolve_collective(ar, sw::Op::allreduce);
  EXPECT_EQ(run_fake(ar, 1024, 3), "");
}

// A schedule that leaves its result in its input buffer without saying it
// runs in place: the wrong-result message says so (the output stays unwritten).
TEST(ScheduleExec, ResultLeftInTheInputBufferIsNamed) {
  std::string x = two_rank();
  for (int k = 0; k < 4; ++k) x = replace(x, "dstbuf=\"o\" dstoff=\"" + std::string(k % 2 ? "1" : "0") + "\"",
                                           "dstbuf=\"i\" dstoff=\"" + std::string(k % 2 ? "1" : "0") + "\"");
  const sw::Schedule s = sw::parse_msccl_xml(x, "i.xml");
  sw::validate(s);
  const std::string w = run_fake(s, 1024, 5);
  EXPECT_EQ(w.rfind("rank 0 chunk 0 of its output (element 0): expected 3, got 0 (no step of rank 0 writes buffer o", 0),
            0u)
      << w;
  // In place, the same steps are exact.
  const sw::Schedule ip = sw::parse_msccl_xml(replace(x, "inplace=\"0\"", "inplace=\"1\""), "i.xml");
  EXPECT_EQ(run_fake(ip, 1024, 5), "");
}

// coll="custom": no standard definition. Each rank's buffers are its chunk
// counts; the run moves the bytes the steps say (checked here by hand), and
// check_outputs has nothing to check.
TEST(ScheduleExec, CustomCollectiveMovesTheBytesItsStepsSay) {
  sw::Schedule s = sw::load_schedule(kRoot + "/tests/cli/fixtures/schedules/forward-3.xml");
  EXPECT_EQ(s.op, sw::Op::custom);
  EXPECT_EQ(sw::to_string(s.op), "custom");
  EXPECT_TRUE(sw::algorithms(sw::Op::custom).empty());
  EXPECT_EQ(sw::busbw_factor(sw::Op::custom, 3), 1.0);
  // Chunk counts need not match a standard collective; sizes need not be a multiple of 4 x ranks.
  EXPECT_NO_THROW(sw::check_run(s, 3, nullptr, 1000));
  const sw::ScheduleLayout L = sw::layout_schedule(s, 1024);
  EXPECT_EQ(L.ranks[0].in_bytes, 1024u);
  EXPECT_EQ(L.ranks[0].out_bytes, 0u);
  EXPECT_EQ(L.ranks[2].in_bytes, 0u);
  EXPECT_EQ(L.ranks[2].out_bytes, 1024u);
  FakeWorld w(3, L.memory_bytes, 0, 4);
  EXPECT_EQ(run_schedule_on(w, s, L), "");
  for (int r : {1, 2}) {
    std::vector<float> out(256);
    std::memcpy(out.data(), w.memory(r) + L.ranks[r].out, 1024);
    for (std::uint64_t i = 0; i < 256; ++i) ASSERT_EQ(out[i], sw::input_value(sw::Op::custom, 0, i)) << r << " " << i;
  }
  std::vector<const float*> none(3, nullptr);
  EXPECT_EQ(sw::check_outputs(s, L, none), "");
}

// ---- executor and step semantics ------------------------------------------------

TEST(ScheduleExec, ShippedSchedulesAreExactUnderRandomDelivery) {
  for (const char* n :
       {"ring-allreduce-8.xml", "ring-allreduce-8-c2.xml", "allpairs-allreduce-8.xml", "ring-allgather-8.xml",
        "allpairs-allgather-8.xml", "alltoall-8.xml", "hierarchical-allreduce-4x4.xml", "ring-allreduce-8.yaml",
        "alltoall-8.yaml", "ring-reducescatter-8.xml", "chain-broadcast-8.xml"}) {
    const sw::Schedule s = sw::load_schedule(kRoot + "/topologies/schedules/" + n);
    for (std::uint32_t seed : {1u, 2u, 3u})
      EXPECT_EQ(run_fake(s, 4096 * s.nchunksperloop, seed), "") << n << " seed " << seed;
  }
}

TEST(ScheduleExec, AllPairs64IsExact) {
  const sw::Schedule s = sw::load_schedule(kRoot + "/topologies/schedules/allpairs-allreduce-64.xml");
  EXPECT_EQ(run_fake(s, 64 * 64, 1), "");
}

TEST(ScheduleExec, TwoRankFixtureIsExactAndWrongResultIsNamed) {
  const sw::Schedule good = sw::parse_msccl_xml(two_rank(), "a.xml");
  EXPECT_EQ(run_fake(good, 1024, 7), "");
  // Rank 0 stores what it receives without adding its own copy (r instead of rrc).
  const sw::Schedule bad = sw::parse_msccl_xml(replace(two_rank(), "type=\"rrc\"", "type=\"r\""), "b.xml");
  sw::validate(bad);
  const std::string w = run_fake(bad, 1024, 7);
  EXPECT_EQ(w.rfind("rank 0 chunk 0 of its output (element 0): expected 3, got 2", 0), 0u) << w;
}

// re, cpy, nop and dependencies across threadblocks: rank r receives the
// peer's copy of chunk r into scratch (tb 0), a local threadblock (tb 1)
// waits for it (nop), copies i[r] to o[r] and reduces the scratch chunk in;
// tb 0 sends o[r] only after that reduction (depid / deps).
TEST(ScheduleExec, LocalStepsAndCrossThreadblockDependencies) {
  std::string xml = R"(<algo name="local" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="0">)";
  for (int r = 0; r < 2; ++r) {
    const int p = 1 - r;
    xml += "<gpu id=\"" + std::to_string(r) + "\" i_chunks=\"2\" o_chunks=\"2\" s_chunks=\"1\">";
    xml += "<tb id=\"0\" send=\"" + std::to_string(p) + "\" recv=\"" + std::to_string(p) + "\" chan=\"0\">";
    xml += "<step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"" + std::to_string(p) +
           "\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>";
    xml +=
        "<step s=\"1\" type=\"r\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"s\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" "
        "deps=\"-1\" hasdep=\"1\"/>";
    xml += "<step s=\"2\" type=\"s\" srcbuf=\"o\" srcoff=\"" + std::to_string(r) +
           "\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"1\" depid=\"1\" deps=\"2\" hasdep=\"0\"/>";
    xml += "<step s=\"3\" type=\"r\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"" + std::to_string(p) +
           "\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>";
    xml += "</tb><tb id=\"1\" send=\"-1\" recv=\"-1\" chan=\"0\">";
    xml +=
        "<step s=\"0\" type=\"nop\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"0\" depid=\"0\" "
        "deps=\"1\" hasdep=\"0\"/>";
    xml += "<step s=\"1\" type=\"cpy\" srcbuf=\"i\" srcoff=\"" + std::to_string(r) + "\" dstbuf=\"o\" dstoff=\"" +
           std::to_string(r) + "\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>";
    xml += "<step s=\"2\" type=\"re\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"" + std::to_string(r) +
           "\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>";
    xml += "</tb></gpu>";
  }
  xml += "</algo>";
  const sw::Schedule s = sw::parse_msccl_xml(xml, "local.xml");
  sw::validate(s);
  for (std::uint32_t seed = 1; seed <= 5; ++seed) EXPECT_EQ(run_fake(s, 2048, seed), "") << seed;
  // msccl-tools marks a threadblock without peers chan="-1": the same schedule;
  // on a threadblock with a peer it is an error.
  std::string local_chan = xml;
  const std::string c0 = "recv=\"-1\" chan=\"0\"", cm = "recv=\"-1\" chan=\"-1\"";
  for (std::size_t p; (p = local_chan.find(c0)) != std::string::npos;) local_chan.replace(p, c0.size(), cm);
  ASSERT_NE(local_chan, xml);
  const sw::Schedule lc = sw::parse_msccl_xml(local_chan, "local.xml");
  sw::validate(lc);
  EXPECT_EQ(run_fake(lc, 2048, 1), "");
  std::string peer_chan = xml;
  const std::string p0 = "\" chan=\"0\">";
  peer_chan.replace(peer_chan.find(p0), p0.size(), "\" chan=\"-1\">");
  EXPECT_NE(error_of(peer_chan).find("chan=-1 is only for a threadblock without peers"), std::string::npos)
      << error_of(peer_chan);
  // Without the dependency, tb 0 may send o[r] before it holds the sum: some order shows it.
  std::string loose = xml;
  for (std::size_t p; (p = loose.find("depid=\"1\" deps=\"2\"")) != std::string::npos;)
    loose.replace(p, 18, "depid=\"-1\" deps=\"-1\"");
  const sw::Schedule l = sw::parse_msccl_xml(loose, "loose.xml");
  sw::validate(l);
  bool some_wrong = false;
  for (std::uint32_t seed = 1; seed <= 20 && !some_wrong; ++seed) some_wrong = !run_fake(l, 2048, seed).empty();
  EXPECT_TRUE(some_wrong) << "the dependency should matter";
}

// rrs sends src + received on and stores nothing; rrcs also stores it.
TEST(ScheduleExec, ReduceSendStoresNothingReduceCopySendStores) {
  const sw::Schedule s = sw::load_schedule(kRoot + "/topologies/schedules/ring-allreduce-8.xml");
  const sw::ScheduleLayout L = sw::layout_schedule(s, 8 * 1024);
  FakeWorld w(8, L.memory_bytes, 0, 3);
  const std::string e = run_schedule_on(w, s, L);
  ASSERT_EQ(e, "");
  // Rank 0's input is untouched (rrs reduces into its staging slot, rrc/rrcs into o).
  for (std::uint64_t i = 0; i < L.ranks[0].in_bytes / 4; ++i) {
    float v;
    std::memcpy(&v, w.memory(0) + L.ranks[0].in + 4 * i, 4);
    ASSERT_EQ(v, sw::input_value(s.op, 0, i)) << i;
  }
}

TEST(ScheduleExec, DeadlockIsReported) {
  const std::string dl = read(kRoot + "/tests/cli/fixtures/schedules/deadlock.xml");
  const sw::Schedule s = sw::parse_msccl_xml(dl, "d.xml");
  sw::validate(s);  // valid statically: the cycle runs through the two ranks' receives
  std::string err;
  run_fake(s, 1024, 1, &err);
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
}

TEST(ScheduleExec, LayoutStagesEveryMessageAndPairsSends) {
  const sw::Schedule s = sw::parse_msccl_xml(two_rank(), "a.xml");
  const sw::ScheduleLayout L = sw::layout_schedule(s, 1024);
  EXPECT_EQ(L.chunk, 512u);
  EXPECT_EQ(L.ranks[0].in, 0u);
  EXPECT_EQ(L.ranks[0].out, 1024u);
  EXPECT_EQ(L.ranks[0].staging, 2048u);
  EXPECT_EQ(L.ranks[0].total, 2048u + 2 * 512u);  // two messages received
  // Rank 0's first send lands in rank 1's first staging slot, its second in the second.
  EXPECT_EQ(L.steps[0][0][0].tx_peer, 1);
  EXPECT_EQ(L.steps[0][0][0].tx_addr, L.steps[1][0][1].rx_addr);
  EXPECT_EQ(L.steps[0][0][2].tx_addr, L.steps[1][0][3].rx_addr);
  // One flag per message received (landing order does not matter), counting its pieces.
  EXPECT_EQ(L.steps[1][0][1].rx_flag, 0);
  EXPECT_EQ(L.steps[1][0][3].rx_flag, 1);
  EXPECT_EQ(L.steps[1][0][3].rx_need, 1u);
  EXPECT_EQ(L.steps[0][0][2].tx_flag, 1);
  // In pieces of 256 B: two pieces per message.
  const sw::ScheduleLayout P = sw::layout_schedule(s, 1024, 256);
  EXPECT_EQ(P.steps[1][0][3].rx_need, 2u);
}

TEST(ScheduleExec, CriticalPathFollowsTheLastMessage) {
  const sw::Schedule s = sw::parse_msccl_xml(two_rank(), "a.xml");
  std::vector<sw::RankRecords> rec(2, sw::RankRecords(1, std::vector<sw::StepRecord>(4)));
  // Rank 1 finishes last; its step 3 waited for rank 0's step 2, which followed rank 0's step 1 ...
  rec[0][0] = {{0, 0, 0, 5, 0}, {0, 10, 11, 0, 2}, {11, 11, 11, 20, 0}, {11, 21, 21, 0, 2}};
  rec[1][0] = {{0, 0, 0, 10, 0}, {0, 5, 6, 0, 2}, {6, 6, 6, 15, 0}, {6, 20, 30, 0, 2}};
  const auto p = sw::critical_path(s, rec);
  ASSERT_GE(p.size(), 3u);
  EXPECT_EQ(p.back().rank, 1);
  EXPECT_EQ(p.back().step, 3);
  EXPECT_EQ(p[p.size() - 2].rank, 0);
  EXPECT_EQ(p[p.size() - 2].step, 2);
  EXPECT_EQ(p[p.size() - 3].rank, 0);
  EXPECT_EQ(p[p.size() - 3].step, 1);
}

// ---- loader limits (found while fuzzing the schedule loader and reviewing it) ----

namespace {
std::string yaml_error(const std::string& text) {
  try {
    sw::validate(sw::parse_schedule_yaml(text, "t.yaml"));
  } catch (const sw::ScheduleError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

// 12 KB of nested aliases (1,500 threadblocks of 1,500 nop steps each) used to
// expand to 2.25 million steps (10 s, 290 MB) and be accepted; one more level
// would have been billions. The loader now counts what it expands.
TEST(ScheduleLimits, YamlAliasExpansionIsBoundedByTheFileSize) {
  std::string steps = "[&p {type: nop}", tbs = "[&t {steps: ";
  for (int i = 0; i < 1500; ++i) steps += ", *p";
  steps += "]";
  tbs += steps + "}";
  for (int i = 0; i < 1500; ++i) tbs += ", *t";
  tbs += "]";
  const std::string text = "schedule:\n  collective: allreduce\n  ranks: 2\n  chunks: 2\n  gpus:\n    - {rank: 0, "
                           "threadblocks: " +
                           tbs + "}\n    - {rank: 1}\n";
  const std::string e = yaml_error(text);
  EXPECT_NE(e.find("t.yaml:6: YAML aliases expand the schedule"), std::string::npos) << e;
  // A few aliased steps stay fine.
  EXPECT_EQ(yaml_error("schedule:\n  collective: allreduce\n  ranks: 2\n  chunks: 2\n  gpus:\n"
                       "    - {rank: 0, threadblocks: [{steps: [&p {type: nop}, *p, *p]}]}\n    - {rank: 1}\n"),
            "");
}

// A native YAML schedule's messages name its own keys (ranks, chunks), not MSCCL's.
TEST(ScheduleValidate, YamlMessagesNameTheYamlKeys) {
  const sw::Schedule y = sw::load_schedule(kRoot + "/tests/cli/fixtures/schedules/allreduce-2.yaml");
  auto err = [&](int ranks, std::uint64_t bytes) {
    try {
      sw::check_run(y, ranks, nullptr, bytes);
    } catch (const sw::ScheduleError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(err(2, 65536), "");
  const std::string r = err(4, 65536);
  EXPECT_NE(r.find("the schedule is for ranks=2 ranks, the fabric has 4"), std::string::npos) << r;
  const std::string c = err(2, 65536 + 4);
  EXPECT_NE(c.find("not a positive multiple of 4 B x chunks ("), std::string::npos) << c;
  const std::string two = read(kRoot + "/tests/cli/fixtures/schedules/allreduce-2.yaml");
  const std::string n = yaml_error(replace(two, "  ranks: 2\n", "  ranks: 3\n"));
  EXPECT_NE(n.find("ranks is 3 but the schedule lists 2 ranks"), std::string::npos) << n;
}

// yaml-cpp keeps the first of two equal keys: a duplicate used to be dropped silently.
TEST(ScheduleLimits, YamlDuplicateKeysAreRejected) {
  const std::string two = read(kRoot + "/tests/cli/fixtures/schedules/allreduce-2.yaml");
  const std::string e = yaml_error(replace(two, "  ranks: 2\n", "  ranks: 2\n  ranks: 3\n"));
  EXPECT_NE(e.find("t.yaml:6: duplicate key 'ranks' in schedule"), std::string::npos) << e;
}

// `after: [THREADBLOCK, STEP]` beyond int used to be truncated: [4294967296, 0] became threadblock 0.
TEST(ScheduleLimits, YamlAfterOutsideTheIdRangeIsRejected) {
  const std::string two = read(kRoot + "/tests/cli/fixtures/schedules/allreduce-2.yaml");
  const std::string e =
      yaml_error(replace(two, "{type: s, src: \"o[0]\"}", "{type: s, src: \"o[0]\", after: [4294967296, 0]}"));
  EXPECT_NE(e.find("t.yaml:17: schedule.gpus[0].threadblocks[0].steps[2].after must be [THREADBLOCK, STEP]"),
            std::string::npos)
      << e;
}

// Chunk counts x chunk bytes used to be multiplied unchecked: at 2 GiB (1 GiB
// chunks) o_chunks = 2^34 + 2 wrapped to the 2 chunks of output and passed;
// s_chunks = 2^40 at 4 MiB chunks gave a scratch size that wrapped.
TEST(ScheduleLimits, HugeChunkCountsAreRejectedNotWrapped) {
  auto err = [](const std::string& xml, std::uint64_t bytes) {
    try {
      const sw::Schedule s = sw::parse_msccl_xml(xml, "a.xml");
      sw::validate(s);
      sw::check_run(s, 2, nullptr, bytes);
    } catch (const sw::ScheduleError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string two = two_rank();
  EXPECT_EQ(err(two, 1ull << 31), "");
  const std::string wrap = replace(two, "o_chunks=\"2\"", "o_chunks=\"17179869186\"");
  const std::string w = err(wrap, 1ull << 31);
  EXPECT_NE(w.find("a.xml:3: rank 0: o_chunks=17179869186 chunks of 1073741824 B, but allreduce of 2147483648 B "
                   "needs 2147483648 B of output (2 chunks)"),
            std::string::npos)
      << w;
  const std::string big = replace(two, "s_chunks=\"0\"", "s_chunks=\"1099511627776\"");
  const std::string e = err(big, 8 << 20);
  EXPECT_NE(e.find("a.xml:3: rank 0: s_chunks=1099511627776 of 4194304 B each"), std::string::npos) << e;
  EXPECT_NE(e.find("more than 1 TiB of scratch"), std::string::npos) << e;
}

// pugixml parses several top-level elements: a second <algo> used to be ignored silently.
TEST(ScheduleLimits, XmlWithASecondAlgoIsRejected) {
  const std::string two = two_rank();
  const std::string algo = two.substr(two.find("<algo"));
  const std::string e = error_of(two + algo);
  EXPECT_NE(e.find("t.xml:" + std::to_string(std::count(two.begin(), two.end(), '\n') + 1) +
                   ": <algo> after the <algo> element"),
            std::string::npos)
      << e;
}
