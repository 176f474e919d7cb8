#include "core/aten/cpu_alias.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>

namespace openreg {
namespace {

// Openreg tensors over a host array (any memory does for an alias table:
// device 0's execution offset is 0 here), built without the backend.
class CpuAliasesTest : public ::testing::Test {
 protected:
  CpuAliasesTest()
      : storage_(c10::Storage::use_byte_size_t(), sizeof(memory_),
                 c10::DataPtr(memory_.data(),
                              c10::Device(c10::DeviceType::PrivateUse1, 0)),
                 /*allocator=*/nullptr, /*resizable=*/false) {}

  // A 4x4 float tensor, or with `offset` a 2x2 view starting there.
  at::Tensor OpenregTensor(int64_t offset = -1) {
    at::Tensor tensor = at::detail::make_tensor<c10::TensorImpl>(
        c10::Storage(storage_),
        c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
        caffe2::TypeMeta::Make<float>());
    if (offset < 0) {
      tensor.unsafeGetTensorImpl()->set_sizes_contiguous({4, 4});
    } else {
      const std::array<int64_t, 2> sizes{2, 2};
      const std::array<int64_t, 2> strides{4, 1};
      tensor.unsafeGetTensorImpl()->set_sizes_and_strides(
          c10::IntArrayRef(sizes), c10::IntArrayRef(strides), offset);
    }
    return tensor;
  }

  std::array<float, 16> memory_{};
  c10::Storage storage_;
  const std::array<intptr_t, 1> execution_offsets_{0};
};

TEST_F(CpuAliasesTest, AnAliasIsACpuTensorOverTheSameMemory) {
  CpuAliases aliases(execution_offsets_);
  const at::Tensor tensor = OpenregTensor();
  const at::Tensor alias = aliases.Alias(tensor);
  EXPECT_TRUE(alias.is_cpu());
  EXPECT_EQ(alias.data_ptr(), memory_.data());
  EXPECT_EQ(alias.sizes(), tensor.sizes());
}

TEST_F(CpuAliasesTest, OneTensorGetsOneAliasHeldOrBorrowed) {
  for (CpuAliases::Originals originals :
       {CpuAliases::Originals::kHeld, CpuAliases::Originals::kBorrowed}) {
    CpuAliases aliases(execution_offsets_, originals);
    const at::Tensor tensor = OpenregTensor();
    at::Tensor first = aliases.Alias(tensor);
    const at::Tensor second = aliases.Alias(tensor);
    EXPECT_EQ(first.unsafeGetTensorImpl(), second.unsafeGetTensorImpl());
    // The second is an owner of its own: it outlives the first.
    first.reset();
    EXPECT_EQ(second.data_ptr(), memory_.data());
  }
}

TEST_F(CpuAliasesTest, ViewsOfOneStorageShareOneCpuStorage) {
  CpuAliases aliases(execution_offsets_, CpuAliases::Originals::kBorrowed);
  const at::Tensor whole = OpenregTensor();
  const at::Tensor corner = OpenregTensor(/*offset=*/10);
  const at::Tensor whole_alias = aliases.Alias(whole);
  const at::Tensor corner_alias = aliases.Alias(corner);
  EXPECT_NE(whole_alias.unsafeGetTensorImpl(),
            corner_alias.unsafeGetTensorImpl());
  EXPECT_EQ(whole_alias.storage().unsafeGetStorageImpl(),
            corner_alias.storage().unsafeGetStorageImpl());
  EXPECT_EQ(corner_alias.storage_offset(), 10);
  EXPECT_EQ(corner_alias.data_ptr(), memory_.data() + 10);
}

// What kBorrowed saves: the table keeps no reference to the aliases it hands
// out (the caller keeps them), where kHeld keeps one until
// ForgetOriginalTensors.
TEST_F(CpuAliasesTest, OnlyAHoldingTableKeepsAReferenceToTheAlias) {
  const at::Tensor tensor = OpenregTensor();
  {
    CpuAliases aliases(execution_offsets_, CpuAliases::Originals::kHeld);
    const at::Tensor alias = aliases.Alias(tensor);
    const size_t with_table = alias.use_count();
    aliases.ForgetOriginalTensors();
    EXPECT_EQ(alias.use_count(), with_table - 1);
  }
  {
    CpuAliases aliases(execution_offsets_, CpuAliases::Originals::kBorrowed);
    const at::Tensor alias = aliases.Alias(tensor);
    const size_t with_table = alias.use_count();
    aliases.ForgetOriginalTensors();
    EXPECT_EQ(alias.use_count(), with_table);
  }
}

// The same for the alias's CPU storage, which a holding table keeps until it
// is destroyed.
TEST_F(CpuAliasesTest, OnlyAHoldingTableKeepsAReferenceToTheCpuStorage) {
  const at::Tensor tensor = OpenregTensor();
  for (CpuAliases::Originals originals :
       {CpuAliases::Originals::kHeld, CpuAliases::Originals::kBorrowed}) {
    std::optional<CpuAliases> aliases(std::in_place, execution_offsets_,
                                      originals);
    const at::Tensor alias = aliases->Alias(tensor);
    // A second view is made over the first one's CPU storage.
    const at::Tensor corner = aliases->Alias(OpenregTensor(/*offset=*/10));
    EXPECT_EQ(corner.storage().unsafeGetStorageImpl(),
              alias.storage().unsafeGetStorageImpl());
    const c10::Storage* original = aliases->OriginalStorageOf(corner);
    ASSERT_NE(original, nullptr);
    EXPECT_EQ(original->unsafeGetStorageImpl(),
              storage_.unsafeGetStorageImpl());
    const size_t with_table = alias.storage().use_count();
    aliases.reset();
    const size_t table_references = with_table - alias.storage().use_count();
    EXPECT_EQ(table_references,
              originals == CpuAliases::Originals::kHeld ? 1u : 0u);
  }
}

// A storage whose memory the work's stream orders (WorkStreamOrder) gets no
// reference from the table, and OriginalStorageOf then has nothing to give;
// any other storage is held as before.
TEST_F(CpuAliasesTest, StoragesOrderedOnTheWorkStreamAreNotHeld) {
  const openreg_stream work_stream = reinterpret_cast<openreg_stream>(0x10);
  static const c10::StorageImpl* ordered = nullptr;
  ordered = storage_.unsafeGetStorageImpl();
  const auto ordered_on = [](const c10::Storage& storage,
                             openreg_stream stream) {
    return storage.unsafeGetStorageImpl() == ordered &&
           stream == reinterpret_cast<openreg_stream>(0x10);
  };
  for (const bool on_work_stream : {true, false}) {
    const size_t before = storage_.use_count();
    std::optional<CpuAliases> aliases(
        std::in_place, execution_offsets_, CpuAliases::Originals::kBorrowed,
        WorkStreamOrder{on_work_stream
                            ? work_stream
                            : reinterpret_cast<openreg_stream>(0x20),
                        ordered_on});
    const at::Tensor alias = aliases->Alias(OpenregTensor());
    aliases->ForgetOriginalTensors();
    EXPECT_EQ(storage_.use_count() - before, on_work_stream ? 0u : 1u);
    EXPECT_EQ(aliases->OriginalStorageOf(alias) == nullptr, on_work_stream);
  }
}

TEST_F(CpuAliasesTest, OriginalOfFindsTheHeldOriginal) {
  CpuAliases aliases(execution_offsets_, CpuAliases::Originals::kHeld);
  const at::Tensor tensor = OpenregTensor();
  const at::Tensor alias = aliases.Alias(tensor);
  const at::Tensor* original = aliases.OriginalOf(alias);
  ASSERT_NE(original, nullptr);
  EXPECT_EQ(original->unsafeGetTensorImpl(), tensor.unsafeGetTensorImpl());
  EXPECT_EQ(aliases.OriginalOf(OpenregTensor()), nullptr);
}

}  // namespace
}  // namespace openreg
