// Simulated device memory's retained execution pages (Note [Retained
// execution pages] in device_memory.h), on a DeviceMemory linked in directly:
// a freed and reallocated range is still inaccessible at its device address
// and accessible at its execution address; retained bytes are free bytes;
// frees past the bound really give their pages back (mincore), and with
// retention off a freed execution page faults again. Under TSan, threads
// allocate and free concurrently.
#include "plugins/sim_support/device_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/conformance/host_read_fault.h"

namespace openreg::sim {
namespace {

using ::openreg::conformance::ExpectHostReadFaults;

constexpr uint64_t kCapacity = uint64_t{64} << 20;

uint64_t Page() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

unsigned char* Execution(const DeviceMemory& memory, void* device) {
  return static_cast<unsigned char*>(device) + memory.execution_offset();
}

// How many of the pages of [address, address + bytes) are in memory.
size_t ResidentPages(const void* address, uint64_t bytes) {
  std::vector<unsigned char> pages(bytes / Page());
  EXPECT_EQ(mincore(const_cast<void*>(address), bytes, pages.data()), 0)
      << std::strerror(errno);
  size_t resident = 0;
  for (unsigned char page : pages) resident += page & 1;
  return resident;
}

void* MustAllocate(DeviceMemory& memory, size_t size) {
  void* ptr = nullptr;
  EXPECT_EQ(memory.Allocate(size, &ptr), OPENREG_SUCCESS);
  return ptr;
}

TEST(DeviceMemoryTest, ReallocatedRetainedPagesKeepBothViews) {
  DeviceMemory memory(0, kCapacity);
  void* first = MustAllocate(memory, 4096);
  std::memset(Execution(memory, first), 0x11, 4096);
  ASSERT_EQ(memory.Free(first), OPENREG_SUCCESS);
  // Free, not allocated: nothing in use, the page retained.
  EXPECT_EQ(memory.bytes_in_use(), 0u);
  EXPECT_EQ(memory.retained_bytes(), Page());
  EXPECT_FALSE(memory.Find(first).has_value());

  // First fit hands the same page out again, without a system call.
  void* again = MustAllocate(memory, 4096);
  ASSERT_EQ(again, first);
  EXPECT_EQ(memory.retained_bytes(), 0u);
  EXPECT_EQ(memory.bytes_in_use(), 4096u);
  // The ABI promises nothing about the contents of new device memory, so
  // only access is checked: the execution view reads and writes...
  unsigned char* execution = Execution(memory, again);
  std::memset(execution, 0x22, 4096);
  EXPECT_EQ(execution[4095], 0x22);
  // ...and the device address still faults.
  ExpectHostReadFaults(again);
  ASSERT_EQ(memory.Free(again), OPENREG_SUCCESS);
}

TEST(DeviceMemoryTest, FreesPastTheBoundGiveTheirPagesBack) {
  const uint64_t limit = 16 * Page();
  DeviceMemory memory(0, kCapacity, limit);
  const uint64_t small = 12 * Page();
  void* kept = MustAllocate(memory, small);
  void* dropped = MustAllocate(memory, small);
  void* large = MustAllocate(memory, 64 * Page());
  for (void* ptr : {kept, dropped})
    std::memset(Execution(memory, ptr), 1, small);
  std::memset(Execution(memory, large), 1, 64 * Page());
  ASSERT_EQ(ResidentPages(Execution(memory, large), 64 * Page()), 64u);

  // Larger than the bound: dropped, its pages out of memory.
  ASSERT_EQ(memory.Free(large), OPENREG_SUCCESS);
  EXPECT_EQ(memory.retained_bytes(), 0u);
  EXPECT_EQ(ResidentPages(Execution(memory, large), 64 * Page()), 0u);
  // Within the bound: retained, pages still resident.
  ASSERT_EQ(memory.Free(kept), OPENREG_SUCCESS);
  EXPECT_EQ(memory.retained_bytes(), small);
  EXPECT_EQ(ResidentPages(Execution(memory, kept), small), 12u);
  // Would pass the bound (12 + 12 > 16 pages): dropped.
  ASSERT_EQ(memory.Free(dropped), OPENREG_SUCCESS);
  EXPECT_EQ(memory.retained_bytes(), small);
  EXPECT_EQ(ResidentPages(Execution(memory, dropped), small), 0u);
  EXPECT_EQ(memory.bytes_in_use(), 0u);
  // A dropped execution page is inaccessible again.
  ExpectHostReadFaults(Execution(memory, dropped));

  // An allocation over retained and dropped pages alike: all accessible.
  void* both = MustAllocate(memory, 2 * small);
  ASSERT_EQ(both, kept);
  EXPECT_EQ(memory.retained_bytes(), 0u);
  std::memset(Execution(memory, both), 2, 2 * small);
  ASSERT_EQ(memory.Free(both), OPENREG_SUCCESS);
}

TEST(DeviceMemoryTest, WithoutRetentionAFreedExecutionPageFaults) {
  DeviceMemory memory(0, kCapacity, /*retain_limit=*/0);
  void* ptr = MustAllocate(memory, 4096);
  std::memset(Execution(memory, ptr), 3, 4096);
  ASSERT_EQ(memory.Free(ptr), OPENREG_SUCCESS);
  EXPECT_EQ(memory.retained_bytes(), 0u);
  EXPECT_EQ(ResidentPages(Execution(memory, ptr), Page()), 0u);
  ExpectHostReadFaults(Execution(memory, ptr));
}

TEST(DeviceMemoryTest, ConcurrentAllocationsAndFrees) {
  DeviceMemory memory(0, kCapacity, /*retain_limit=*/8 * Page());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&memory, t] {
      for (int i = 0; i < 500; ++i) {
        const size_t size = (1 + (i + t) % 5) * 3000;
        void* ptr = nullptr;
        ASSERT_EQ(memory.Allocate(size, &ptr), OPENREG_SUCCESS);
        unsigned char* execution = Execution(memory, ptr);
        std::memset(execution, t, size);
        ASSERT_EQ(execution[size - 1], t);
        ASSERT_EQ(memory.Free(ptr), OPENREG_SUCCESS);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(memory.bytes_in_use(), 0u);
  EXPECT_LE(memory.retained_bytes(), 8 * Page());
}

}  // namespace
}  // namespace openreg::sim
