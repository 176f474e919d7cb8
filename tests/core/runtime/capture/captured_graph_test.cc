// The recording and replay plan of CapturedGraph, without a driver: the
// plan's steps are checked, and segments are run directly.
#include "core/runtime/capture/captured_graph.h"

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/runtime/capture/capture_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace openreg {
namespace {

using ::testing::HasSubstr;

// Stand-ins for driver handles: the recorder only compares them.
openreg_stream FakeStream(int i) {
  return reinterpret_cast<openreg_stream>(static_cast<intptr_t>(0x1000 + i));
}
openreg_event FakeEvent(int i) {
  return reinterpret_cast<openreg_event>(static_cast<intptr_t>(0x2000 + i));
}

TEST(CapturedGraphTest, SingleStreamWorkIsOneLaunchRunInOrder) {
  CapturedGraph graph(FakeStream(0), 0, {1, 0});
  std::vector<int> ran;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        graph.AddWork(FakeStream(0), "op", [&ran, i] { ran.push_back(i); })
            .ok());
  }
  int src = 7, dst = 0;
  ASSERT_TRUE(graph.AddCopy(FakeStream(0), {&dst, &src, sizeof(int)}).ok());
  ASSERT_TRUE(graph.Finish().ok());
  ASSERT_EQ(graph.steps().size(), 1u);
  EXPECT_EQ(graph.launch_count(), 1);
  EXPECT_EQ(graph.node_count(), 6);
  auto& launch = std::get<CapturedGraph::Launch>(graph.steps()[0]);
  int works_run = 0;
  for (int replay = 0; replay < 2; ++replay) {
    RunSegment(*launch.segment, [&works_run](CapturedWork& work) {
      ++works_run;
      work.run();
    });
  }
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4}));
  // Work, not copies, goes through the caller's runner.
  EXPECT_EQ(works_run, 10);
  EXPECT_EQ(dst, 7);
  EXPECT_THAT(graph.DebugString(), HasSubstr("1 launch(es) per replay"));
}

TEST(CapturedGraphTest, JoinedStreamsSplitIntoSegmentsInCaptureOrder) {
  CapturedGraph graph(FakeStream(0), 0, {1, 0});
  auto nothing = [] {};
  ASSERT_TRUE(graph.AddWork(FakeStream(0), "a", nothing).ok());
  ASSERT_TRUE(graph.AddEventRecord(FakeStream(0), FakeEvent(0)).ok());
  ASSERT_TRUE(graph.AddEventWait(FakeStream(1), 0, FakeEvent(0)).ok());
  ASSERT_TRUE(graph.AddWork(FakeStream(1), "b", nothing).ok());
  ASSERT_TRUE(graph.AddWork(FakeStream(0), "c", nothing).ok());
  ASSERT_TRUE(graph.AddEventRecord(FakeStream(1), FakeEvent(1)).ok());
  ASSERT_TRUE(graph.AddEventWait(FakeStream(0), 0, FakeEvent(1)).ok());
  ASSERT_TRUE(graph.AddWork(FakeStream(0), "d", nothing).ok());
  ASSERT_TRUE(graph.Finish().ok());
  EXPECT_EQ(graph.streams().size(), 2u);
  EXPECT_EQ(graph.event_count(), 2);
  // A stream's work is launched when that stream next records or waits:
  // launch(0: a), record 0 on 0, 1 waits for 0, launch(1: b), record 1 on 1,
  // launch(0: c), 0 waits for 1, launch(0: d).
  const auto& steps = graph.steps();
  ASSERT_EQ(steps.size(), 8u);
  EXPECT_EQ(std::get<CapturedGraph::Launch>(steps[0]).stream, 0);
  EXPECT_EQ(std::get<CapturedGraph::RecordEvent>(steps[1]).event, 0);
  EXPECT_EQ(std::get<CapturedGraph::WaitEvent>(steps[2]).stream, 1);
  EXPECT_EQ(std::get<CapturedGraph::Launch>(steps[3]).stream, 1);
  EXPECT_EQ(std::get<CapturedGraph::RecordEvent>(steps[4]).stream, 1);
  EXPECT_EQ(std::get<CapturedGraph::Launch>(steps[5]).stream, 0);
  EXPECT_EQ(std::get<CapturedGraph::WaitEvent>(steps[6]).event, 1);
  EXPECT_EQ(std::get<CapturedGraph::Launch>(steps[7]).stream, 0);
  EXPECT_EQ(graph.launch_count(), 4);
}

TEST(CapturedGraphTest, AStreamThatNeverRejoinsFailsFinish) {
  CapturedGraph graph(FakeStream(0), 0, {1, 0});
  ASSERT_TRUE(graph.AddEventRecord(FakeStream(0), FakeEvent(0)).ok());
  ASSERT_TRUE(graph.AddEventWait(FakeStream(1), 0, FakeEvent(0)).ok());
  ASSERT_TRUE(graph.AddWork(FakeStream(1), "b", [] {}).ok());
  const absl::Status status = graph.Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("did not wait for that stream"));
}

TEST(CapturedGraphTest, WaitingOnAnEventFromOutsideTheCaptureIsRefused) {
  CapturedGraph graph(FakeStream(0), 0, {1, 0});
  EXPECT_EQ(graph.AddEventWait(FakeStream(0), 0, FakeEvent(9)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CapturedGraphTest, AbandonDropsTheRecordingAndRefusesMore) {
  CapturedGraph graph(FakeStream(0), 0, {1, 0});
  auto owned = std::make_shared<int>(1);
  ASSERT_TRUE(graph.AddWork(FakeStream(0), "a", [owned] {}).ok());
  EXPECT_EQ(owned.use_count(), 2);
  graph.Abandon("because");
  EXPECT_EQ(owned.use_count(), 1);
  EXPECT_EQ(graph.abandoned_reason(), "because");
  EXPECT_THAT(std::string(graph.AddWork(FakeStream(0), "b", [] {}).message()),
              HasSubstr("abandoned: because"));
  EXPECT_FALSE(graph.Finish().ok());
}

TEST(CapturedGraphTest, RandomnessIsDrawnPerReplayAndAppliedByTheFirstLaunch) {
  CapturedGraph graph(FakeStream(0), 0, {1, 0});
  uint64_t next = 100;
  std::vector<uint64_t> applied;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(
        graph
            .AddRandomness({[&next] { return next++; },
                            [&applied](uint64_t s) { applied.push_back(s); }})
            .ok());
  }
  ASSERT_TRUE(graph.Finish().ok());
  // No work recorded: the plan still starts with a launch on the origin.
  ASSERT_EQ(graph.steps().size(), 1u);
  graph.DrawRandomness()();
  graph.DrawRandomness()();
  EXPECT_EQ(applied, (std::vector<uint64_t>{100, 101, 102, 103}));
}

TEST(CapturedGraphTest, ReplayIssuesRunAtEveryReplayInCaptureOrder) {
  CapturedGraph graph(FakeStream(0), 0, {1, 0});
  std::vector<int> issued;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(graph.AddReplayIssue([&issued, i] { issued.push_back(i); }).ok());
  }
  EXPECT_TRUE(issued.empty()) << "issued while recording";
  ASSERT_TRUE(graph.Finish().ok());
  graph.IssueForReplay();
  graph.IssueForReplay();
  EXPECT_EQ(issued, (std::vector<int>{0, 1, 2, 0, 1, 2}));
  EXPECT_THAT(graph.DebugString(), HasSubstr("3 host step(s) issued per replay"));
}

TEST(CapturedGraphTest, ReplayIssuesAreRefusedOnceAbandoned) {
  CapturedGraph graph(FakeStream(0), 0, {1, 0});
  graph.Abandon("because");
  EXPECT_THAT(std::string(graph.AddReplayIssue([] {}).message()),
              HasSubstr("abandoned: because"));
}

TEST(CaptureRegistryTest, StreamsCaptureJoinAndStop) {
  CaptureRegistry& registry = CaptureRegistry::Get();
  auto graph = std::make_shared<CapturedGraph>(
      FakeStream(0), 3, std::make_pair(uint64_t{1}, uint64_t{0}));
  EXPECT_FALSE(registry.AnyCapturing());
  ASSERT_TRUE(registry.Begin(FakeStream(0), 3, graph).ok());
  EXPECT_EQ(registry.Begin(FakeStream(0), 3, graph).code(),
            absl::StatusCode::kFailedPrecondition);
  registry.Join(FakeStream(1), 3, graph);
  EXPECT_EQ(registry.GraphOf(FakeStream(1)), graph);
  EXPECT_EQ(registry.GraphOnDevice(3), graph);
  EXPECT_EQ(registry.GraphOnDevice(2), nullptr);
  EXPECT_TRUE(registry.AbandonCapturesOn(3, "sync"));
  EXPECT_FALSE(registry.AnyCapturing());
  EXPECT_EQ(graph->abandoned_reason(), "sync");
}

}  // namespace
}  // namespace openreg
