// Transport selection (sw/selection): ladders and races.
#include <gtest/gtest.h>

#include "sw/selection.h"

using namespace fabricsim::sw;

TEST(Ladder, PicksTheFirstBucketCoveringTheSize) {
  Ladder l{"x", {{12 * 1024, "full"}, {110 * 1024, "full_phased"}, {8u << 20, "bulk_push_phased"}}};
  EXPECT_NO_THROW(l.validate());
  EXPECT_EQ(l.pick(16), "full");
  EXPECT_EQ(l.pick(12 * 1024), "full");
  EXPECT_EQ(l.pick(12 * 1024 + 4), "full_phased");
  EXPECT_EQ(l.pick(8u << 20), "bulk_push_phased");
  EXPECT_THROW(l.pick((8u << 20) + 4), std::out_of_range);
}

TEST(Ladder, RejectsUnorderedBucketsAndUnknownTransports) {
  EXPECT_THROW((Ladder{"x", {{100, "full"}, {100, "pull"}}}.validate()), std::invalid_argument);
  EXPECT_THROW((Ladder{"x", {{100, "fulll"}}}.validate()), std::invalid_argument);
  EXPECT_THROW((Ladder{"x", {}}.validate()), std::invalid_argument);
}

// A candidate with a clean median but one millisecond outlier (pull across
// quadrants) wins the median race and loses the mean race.
TEST(Race, MedianHidesAStallThatTheMeanSees) {
  std::vector<double> pull(99, 12.2), phased(99, 12.5);
  pull.push_back(1400.0);
  phased.push_back(12.5);
  EXPECT_EQ(race_pick({pull, phased}, RaceBy::median), 0u);
  EXPECT_EQ(race_pick({pull, phased}, RaceBy::mean), 1u);
  EXPECT_EQ(race_pick({{}, phased}, RaceBy::median), 1u);  // no samples: never wins
  EXPECT_THROW(race_pick({{}, {}}, RaceBy::mean), std::invalid_argument);
}

TEST(Race, ReadModesCanBeDropped) {
  const auto c = without_peer_reads({"pull", "full", "bulk_pull", "nccl_simple_read", "nccl_shm", "write_ring"});
  EXPECT_EQ(c, (std::vector<std::string>{"full", "nccl_shm", "write_ring"}));
  EXPECT_EQ(parse_selection("race-mean"), Selection::race_mean);
  EXPECT_THROW(parse_selection("race"), std::invalid_argument);
}
