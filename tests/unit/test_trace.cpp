// TraceWriter keeps each event as its compact JSON text; json() must be the
// very bytes of the compact dump of the whole tree it used to build.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "platform/report/files.h"
#include "platform/report/json_text.h"
#include "platform/report/trace.h"
#include "temp_dir.h"

namespace {

using fabricsim::report::json_text;
using fabricsim::report::TraceWriter;
using J = nlohmann::ordered_json;

TEST(TraceWriter, JsonIsTheCompactDumpOfTheEventTree) {
  TraceWriter w(4);  // two metadata events, two kept, two dropped
  w.name_process(1, "port");
  w.name_thread(1, 2, "bad \xff byte");  // invalid UTF-8: replaced, as the tree dump does
  w.span("seq 0", "tx", 1, 1, 1500, 13600, J{{"attempt", 1}, {"profile", "STRONG"}});
  w.instant("STRONG W=8", "policy", 1, 2, 3);
  w.span("seq 1", "tx", 1, 1, 14000, 13600);
  w.instant("late", "policy", 1, 2, 99);
  w.set_run(J{{"id", "seed1-configabc"}});

  J events = J::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "port"}}}});
  events.push_back(
      {{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 2}, {"args", {{"name", "bad \xff byte"}}}});
  events.push_back({{"name", "seq 0"},
                    {"cat", "tx"},
                    {"ph", "X"},
                    {"ts", 1500 / 1e6},
                    {"dur", 13600 / 1e6},
                    {"pid", 1},
                    {"tid", 1},
                    {"args", {{"attempt", 1}, {"profile", "STRONG"}}}});
  events.push_back(
      {{"name", "STRONG W=8"}, {"cat", "policy"}, {"ph", "i"}, {"s", "t"}, {"ts", 3 / 1e6}, {"pid", 1}, {"tid", 2}});
  J whole;
  whole["traceEvents"] = events;
  whole["displayTimeUnit"] = "ns";
  whole["otherData"] = {{"producer", "fabricsim"}, {"dropped_events", 2}};
  whole["otherData"]["run"] = {{"id", "seed1-configabc"}};

  EXPECT_EQ(w.events(), 4u);
  EXPECT_EQ(w.dropped(), 2u);
  EXPECT_EQ(w.json(), json_text(whole) + "\n");
}

TEST(TraceWriter, EmptyTraceIsAnEmptyEventList) {
  TraceWriter w;
  EXPECT_EQ(w.json(),
            "{\"traceEvents\":[],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"fabricsim\","
            "\"dropped_events\":0}}\n");
}

// write_atomic: a path that names a folder (trailing '/') is refused before
// any folder on it is created; a plain path creates its parents.
TEST(WriteAtomic, PathEndingInSlashCreatesNothing) {
  namespace fs = std::filesystem;
  fabricsim::testing::TempDir tmp("files");
  const fs::path dir = fs::path(tmp.write("x", "")).parent_path();
  EXPECT_THROW(fabricsim::report::write_atomic(dir / "new" / "sub" / "", "x"), std::runtime_error);
  EXPECT_FALSE(fs::exists(dir / "new"));
  fabricsim::report::write_atomic(dir / "new" / "f.txt", "abc");
  std::string got;
  ASSERT_TRUE(fabricsim::report::read_file(dir / "new" / "f.txt", got));
  EXPECT_EQ(got, "abc");
  EXPECT_THROW(fabricsim::report::write_atomic(dir / "new", "x"), std::runtime_error);  // a folder
}

}  // namespace
