#include "core/distributed/borrowed_device_memory.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/complex.h>
#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace openreg {
namespace {

// Openreg tensors over a host array whose deleter counts its calls: what an
// owner of the memory would free.
class BorrowDeviceMemoryTest : public ::testing::Test {
 protected:
  static void CountFree(void* context) { ++*static_cast<int*>(context); }

  c10::Storage OwningStorage() {
    return c10::Storage(
        c10::Storage::use_byte_size_t(), sizeof(memory_),
        c10::DataPtr(memory_.data(), &frees_, &CountFree,
                     c10::Device(c10::DeviceType::PrivateUse1, 1)),
        /*allocator=*/nullptr, /*resizable=*/false);
  }

  // A 2x3 view with strides (1, 2) at offset 1 of an 8-element complex
  // storage.
  at::Tensor OpenregTensor(c10::Storage storage) {
    at::Tensor tensor = at::detail::make_tensor<c10::TensorImpl>(
        std::move(storage), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
        caffe2::TypeMeta::Make<c10::complex<float>>());
    const std::array<int64_t, 2> sizes{2, 3};
    const std::array<int64_t, 2> strides{1, 2};
    tensor.unsafeGetTensorImpl()->set_sizes_and_strides(
        c10::IntArrayRef(sizes), c10::IntArrayRef(strides), 1);
    return tensor;
  }

  std::array<c10::complex<float>, 8> memory_{};
  int frees_ = 0;
};

TEST_F(BorrowDeviceMemoryTest, SameMemoryGeometryDtypeDeviceAndBits) {
  at::Tensor original = OpenregTensor(OwningStorage());
  original._set_conj(true);
  original._set_neg(true);
  const at::Tensor borrowed = BorrowDeviceMemory(original);
  EXPECT_NE(borrowed.unsafeGetTensorImpl(), original.unsafeGetTensorImpl());
  EXPECT_NE(borrowed.storage().unsafeGetStorageImpl(),
            original.storage().unsafeGetStorageImpl());
  EXPECT_EQ(borrowed.storage().data(), memory_.data());
  EXPECT_EQ(borrowed.storage().nbytes(), sizeof(memory_));
  EXPECT_EQ(borrowed.device(), original.device());
  EXPECT_EQ(borrowed.dtype(), original.dtype());
  EXPECT_EQ(borrowed.sizes(), original.sizes());
  EXPECT_EQ(borrowed.strides(), original.strides());
  EXPECT_EQ(borrowed.storage_offset(), 1);
  EXPECT_TRUE(borrowed.is_conj());
  EXPECT_TRUE(borrowed.is_neg());
  EXPECT_FALSE(borrowed.storage().resizable());
}

TEST_F(BorrowDeviceMemoryTest, NeverOwnsTheMemory) {
  at::Tensor original = OpenregTensor(OwningStorage());
  at::Tensor borrowed = BorrowDeviceMemory(original);
  // Only the original's storage frees the memory, once, whichever goes
  // first.
  original.reset();
  EXPECT_EQ(frees_, 1);
  EXPECT_EQ(borrowed.storage().data(), memory_.data());
  borrowed.reset();
  EXPECT_EQ(frees_, 1);
}

TEST_F(BorrowDeviceMemoryTest, ListsKeepTheirShape) {
  const c10::Storage storage = OwningStorage();
  const std::vector<std::vector<at::Tensor>> lists{
      {OpenregTensor(storage), OpenregTensor(storage)}, {}};
  const std::vector<std::vector<at::Tensor>> borrowed =
      BorrowDeviceMemory(lists);
  ASSERT_EQ(borrowed.size(), 2u);
  ASSERT_EQ(borrowed[0].size(), 2u);
  EXPECT_TRUE(borrowed[1].empty());
  for (const at::Tensor& tensor : borrowed[0]) {
    EXPECT_EQ(tensor.storage().data(), memory_.data());
  }
}

TEST_F(BorrowDeviceMemoryTest, AnythingButAnOpenregTensorIsReturnedAsItIs) {
  const at::Tensor undefined;
  EXPECT_FALSE(BorrowDeviceMemory(undefined).defined());
  at::Tensor cpu = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(c10::Storage::use_byte_size_t(), sizeof(memory_),
                   c10::DataPtr(memory_.data(), c10::Device(c10::kCPU)),
                   /*allocator=*/nullptr, /*resizable=*/false),
      c10::DispatchKeySet(c10::DispatchKey::CPU),
      caffe2::TypeMeta::Make<float>());
  EXPECT_EQ(BorrowDeviceMemory(cpu).unsafeGetTensorImpl(),
            cpu.unsafeGetTensorImpl());
}

}  // namespace
}  // namespace openreg
