#include "core/aten/cpu_alias_pool.h"

#include <ATen/core/Tensor.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/complex.h>
#include <c10/util/intrusive_ptr.h>
#include <gtest/gtest.h>

#include <array>
#include <cstddef>

namespace openreg {
namespace {

// Each test uses a pool of its own, so the thread's pool is untouched. Its
// aliases view host arrays: any memory does for the pool.
class CpuAliasPoolTest : public ::testing::Test {
 protected:
  static constexpr size_t kRing = 32;

  // A pair over `floats_`, and one over `doubles_`.
  at::Tensor TakeFloats(bool first_of_call = false) {
    return pool_.Take(floats_.data(), 256, caffe2::TypeMeta::Make<float>(),
                      first_of_call);
  }
  at::Tensor TakeDoubles(bool first_of_call = false) {
    return pool_.Take(doubles_.data(), 512, caffe2::TypeMeta::Make<double>(),
                      first_of_call);
  }

  // Drops the test's reference to `pair` (unless `keep`) and takes pairs
  // until the ring comes round to it: the next Take looks at it again.
  void ComeRound(at::Tensor& pair, bool keep = false) {
    if (!keep) pair.reset();
    for (size_t i = 0; i < kRing - 1; ++i) TakeFloats();
  }

  // Sizes a recycled pair keeps (the caller sets them) and a fresh one does
  // not have: a dropped pair's memory may be reused for a new one, so
  // addresses cannot tell them apart.
  static void Mark(at::Tensor& pair) {
    pair.unsafeGetTensorImpl()->set_sizes_contiguous({3, 7});
  }
  static bool Marked(const at::Tensor& pair) {
    return pair.sizes() == at::IntArrayRef({3, 7});
  }

  CpuAliasPool pool_;
  std::array<float, 64> floats_{};
  std::array<double, 64> doubles_{};
};

TEST_F(CpuAliasPoolTest, FreshPairViewsTheMemoryAsACpuTensor) {
  at::Tensor alias = TakeFloats();
  EXPECT_TRUE(alias.is_cpu());
  EXPECT_EQ(alias.storage().data(), floats_.data());
  EXPECT_EQ(alias.storage().nbytes(), 256u);
  EXPECT_TRUE(alias.storage().resizable());
  EXPECT_EQ(alias.scalar_type(), at::kFloat);
}

TEST_F(CpuAliasPoolTest, ReleasedPairComesBackWithTheNewMemoryAndDtype) {
  at::Tensor first = TakeFloats();
  c10::TensorImpl* impl = first.unsafeGetTensorImpl();
  ComeRound(first);
  at::Tensor again = TakeDoubles();
  EXPECT_EQ(again.unsafeGetTensorImpl(), impl);
  EXPECT_EQ(again.storage().data(), doubles_.data());
  EXPECT_EQ(again.storage().nbytes(), 512u);
  EXPECT_EQ(again.scalar_type(), at::kDouble);
}

TEST_F(CpuAliasPoolTest, CallStartsWhereTheLastOneDidOnceItsPairsAreFree) {
  // A synchronous driver: each call's pairs are released before the next.
  at::Tensor first = TakeFloats(/*first_of_call=*/true);
  at::Tensor second = TakeDoubles();
  c10::TensorImpl* first_impl = first.unsafeGetTensorImpl();
  c10::TensorImpl* second_impl = second.unsafeGetTensorImpl();
  first.reset();
  second.reset();
  for (int call = 0; call < 3; ++call) {
    EXPECT_EQ(TakeFloats(/*first_of_call=*/true).unsafeGetTensorImpl(),
              first_impl);
    EXPECT_EQ(TakeDoubles().unsafeGetTensorImpl(), second_impl);
  }
}

TEST_F(CpuAliasPoolTest, CallGoesOnRoundTheRingWhileTheLastOneIsInFlight) {
  // An asynchronous driver: the last call's work still holds its pair.
  at::Tensor in_flight = TakeFloats(/*first_of_call=*/true);
  at::Tensor next = TakeDoubles(/*first_of_call=*/true);
  EXPECT_NE(next.unsafeGetTensorImpl(), in_flight.unsafeGetTensorImpl());
  EXPECT_EQ(in_flight.storage().data(), floats_.data());
  EXPECT_EQ(in_flight.scalar_type(), at::kFloat);
}

TEST_F(CpuAliasPoolTest, PairStillHeldIsNotHandedOut) {
  at::Tensor held = TakeFloats();
  ComeRound(held, /*keep=*/true);
  EXPECT_NE(TakeDoubles().unsafeGetTensorImpl(), held.unsafeGetTensorImpl());
  EXPECT_EQ(held.storage().data(), floats_.data());
  EXPECT_EQ(held.scalar_type(), at::kFloat);
}

TEST_F(CpuAliasPoolTest, PairWhoseStorageIsStillHeldIsNotHandedOut) {
  at::Tensor first = TakeFloats();
  c10::Storage kept = first.storage();  // as a view made by a kernel would
  c10::TensorImpl* impl = first.unsafeGetTensorImpl();
  ComeRound(first);
  EXPECT_NE(TakeDoubles().unsafeGetTensorImpl(), impl);
  EXPECT_EQ(kept.data(), floats_.data());
}

TEST_F(CpuAliasPoolTest, PairWithAWeakReferenceIsNotHandedOut) {
  at::Tensor first = TakeFloats();
  c10::weak_intrusive_ptr<c10::TensorImpl> weak(first.getIntrusivePtr());
  c10::TensorImpl* impl = first.unsafeGetTensorImpl();
  ComeRound(first);
  EXPECT_NE(TakeDoubles().unsafeGetTensorImpl(), impl);
}

TEST_F(CpuAliasPoolTest, ConjugateAndNegativeBitsAreCleared) {
  std::array<c10::complex<float>, 64> complex{};
  at::Tensor first = pool_.Take(complex.data(), 512,
                                caffe2::TypeMeta::Make<c10::complex<float>>(),
                                /*first_of_call=*/false);
  first._set_conj(true);
  first._set_neg(true);
  Mark(first);
  ComeRound(first);
  at::Tensor again = TakeFloats();
  ASSERT_TRUE(Marked(again));
  EXPECT_FALSE(again.is_conj());
  EXPECT_FALSE(again.is_neg());
  EXPECT_EQ(again.scalar_type(), at::kFloat);
}

TEST_F(CpuAliasPoolTest, StorageAKernelGrewIsFreedAndPointedAtTheNewMemory) {
  at::Tensor first = pool_.Take(floats_.data(), 4,
                                caffe2::TypeMeta::Make<float>(),
                                /*first_of_call=*/false);
  first.unsafeGetTensorImpl()->set_sizes_contiguous({1});
  // What an out= kernel does to an output too small for its result: the
  // storage gets memory of the CPU allocator.
  first.resize_({1024});
  ASSERT_NE(first.storage().data(), floats_.data());
  c10::TensorImpl* impl = first.unsafeGetTensorImpl();
  ComeRound(first);
  at::Tensor again = TakeDoubles();
  ASSERT_EQ(again.unsafeGetTensorImpl(), impl);
  EXPECT_EQ(again.storage().data(), doubles_.data());
  EXPECT_EQ(again.storage().nbytes(), 512u);
}

TEST_F(CpuAliasPoolTest, InferenceModeGetsPairsOfItsOwnKind) {
  at::Tensor first = TakeFloats();
  c10::TensorImpl* normal = first.unsafeGetTensorImpl();
  ComeRound(first);
  at::Tensor inference;
  {
    c10::InferenceMode guard;
    inference = TakeFloats();
  }
  EXPECT_NE(inference.unsafeGetTensorImpl(), normal);
  EXPECT_TRUE(inference.is_inference());
  // Outside inference mode, the released normal pair comes back.
  at::Tensor again = TakeFloats();
  EXPECT_EQ(again.unsafeGetTensorImpl(), normal);
  EXPECT_FALSE(again.is_inference());
}

// Changes a kernel could make to a tensor it was given that a fresh alias
// would not have: such a pair is dropped and a fresh one made in its place.
void MakeWrappedNumber(at::Tensor& t) {
  t.unsafeGetTensorImpl()->set_sizes_contiguous({});
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
}
void RequireGrad(at::Tensor& t) { t.set_requires_grad(true); }
void MakeStorageFixedSize(at::Tensor& t) {
  t.storage().unsafeGetStorageImpl()->set_resizable(false);
}

class ChangedPairTest : public CpuAliasPoolTest,
                        public ::testing::WithParamInterface<void (*)(
                            at::Tensor&)> {};

TEST_P(ChangedPairTest, IsReplacedNotRecycled) {
  at::Tensor first = TakeFloats();
  GetParam()(first);
  Mark(first);  // after the change: a wrapped number stays wrapped
  ComeRound(first);
  at::Tensor next = TakeDoubles();
  EXPECT_FALSE(Marked(next));
  EXPECT_FALSE(next.unsafeGetTensorImpl()->is_wrapped_number());
  EXPECT_FALSE(next.requires_grad());
  EXPECT_TRUE(next.storage().resizable());
  // The new pair took the old one's place in the ring: released, it comes
  // back.
  Mark(next);
  ComeRound(next);
  EXPECT_TRUE(Marked(TakeFloats()));
}

INSTANTIATE_TEST_SUITE_P(Changes, ChangedPairTest,
                         ::testing::Values(&MakeWrappedNumber, &RequireGrad,
                                           &MakeStorageFixedSize));

}  // namespace
}  // namespace openreg
