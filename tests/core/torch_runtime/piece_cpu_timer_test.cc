// PieceCpuTimer (Note [Timing driver work without a system call per piece])
// with fake clocks: how often it reads the CPU clock, and what it reports for
// short, long and preempted pieces.
#include "core/torch_runtime/piece_cpu_timer.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace openreg {
namespace {

// A thread that runs or is preempted: the wall clock always advances, its
// CPU clock only while it runs. Fake clocks are plain functions (the timer
// takes function pointers), so their state is global, reset by the fixture.
int64_t wall_ns = 0;
int64_t cpu_ns = 0;
int cpu_reads = 0;

int64_t FakeWall() { return wall_ns; }
int64_t FakeCpu() {
  ++cpu_reads;
  return cpu_ns;
}

void Running(int64_t ns) {
  wall_ns += ns;
  cpu_ns += ns;
}
void Preempted(int64_t ns) { wall_ns += ns; }

constexpr int64_t kMaxOvercountNs = 8'000;
constexpr int64_t kDecisiveNs = 125'000;

class PieceCpuTimerTest : public ::testing::Test {
 protected:
  PieceCpuTimerTest() {
    wall_ns = 1'000'000;
    cpu_ns = 500'000;
    cpu_reads = 0;
  }

  // One piece: `before` of the thread's own work outside any piece (the
  // worker's loop, its polling), then the piece's.
  int64_t Piece(int64_t before, int64_t run, int64_t preempted = 0) {
    Running(before);
    timer_.Start(kMaxOvercountNs);
    Running(run / 2);
    Preempted(preempted);
    Running(run - run / 2);
    return timer_.Stop(kDecisiveNs);
  }

  PieceCpuTimer timer_{FakeWall, FakeCpu};
};

TEST_F(PieceCpuTimerTest, TinyPiecesBackToBackReadTheCpuClockOncePerMaxOvercount) {
  for (int i = 0; i < 10'000; ++i) {
    EXPECT_EQ(Piece(/*before=*/100, /*run=*/300), 300);
  }
  // 4 ms of wall time, a reading per 8 us of it: ~500, where reading at
  // each piece's start and end took 20,000.
  EXPECT_GE(cpu_reads, 400);
  EXPECT_LE(cpu_reads, 600);
}

TEST_F(PieceCpuTimerTest, ALongPieceReportsItsCpuTime) {
  Piece(100, 300);
  EXPECT_EQ(Piece(100, 400'000), 400'000);
}

TEST_F(PieceCpuTimerTest, APreemptedShortPieceIsShort) {
  Piece(100, 300);
  // 40 us of its own work, a 4 ms time slice of another thread's in the
  // middle: its wall time says long, its CPU time (plus the over-count)
  // short.
  const int64_t reported = Piece(100, 40'000, /*preempted=*/4'000'000);
  EXPECT_GE(reported, 40'000);
  EXPECT_LT(reported, 40'000 + kMaxOvercountNs);
}

TEST_F(PieceCpuTimerTest, TheOvercountStaysBelowItsBound) {
  // Pieces right after a reading, and long after one (up to the bound's age):
  // each long piece reports at least its CPU time and less than that plus
  // kMaxOvercountNs, whatever ran since the last reading.
  for (int64_t since_reading : {0, 1'000, 7'999, 8'000, 50'000, 2'000'000}) {
    Piece(100, 300);
    const int64_t reported = Piece(/*before=*/since_reading, 200'000);
    EXPECT_GE(reported, 200'000) << since_reading;
    EXPECT_LT(reported, 200'000 + kMaxOvercountNs) << since_reading;
  }
}

TEST_F(PieceCpuTimerTest, ShortWallTimeNeverReadsTheCpuClockAtTheEnd) {
  Piece(0, 300);  // the first reading
  const int reads = cpu_reads;
  for (int i = 0; i < 20; ++i) Piece(0, 300);  // 6 us: under the bound's age
  EXPECT_EQ(cpu_reads, reads);
}

}  // namespace
}  // namespace openreg
