#include "core/aten/cpu_alias_pool.h"

#include <ATen/core/Tensor.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/intrusive_ptr.h>
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <vector>

namespace openreg {
namespace {

// Memory the aliases view; any host memory does for the pool.
struct Buffers {
  std::array<float, 64> first{};
  std::array<double, 64> second{};
  std::array<c10::complex<float>, 64> complex{};
};

// Takes pairs until the pool's ring comes round to where it started: the
// next Take then looks at the pair made first.
void GoRound(CpuAliasPool& pool, void* address, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    pool.Take(address, 4, caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false);
  }
}

// Each test uses a pool of its own, so the thread's pool is untouched.
class CpuAliasPoolTest : public ::testing::Test {
 protected:
  // The first pair of a fresh pool, released, and the ring brought round to
  // it again.
  c10::TensorImpl* FirstPairReleased() {
    at::Tensor first = pool_.Take(buffers_.first.data(), 256,
                                  caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false);
    c10::TensorImpl* impl = first.unsafeGetTensorImpl();
    first.reset();
    GoRound(pool_, buffers_.first.data(), kRing - 1);
    return impl;
  }

  static constexpr size_t kRing = 32;
  CpuAliasPool pool_;
  Buffers buffers_;
};

TEST_F(CpuAliasPoolTest, FreshPairViewsTheMemoryAsACpuTensor) {
  at::Tensor alias = pool_.Take(buffers_.first.data(), 256,
                                caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false);
  EXPECT_TRUE(alias.is_cpu());
  EXPECT_EQ(alias.storage().data(), buffers_.first.data());
  EXPECT_EQ(alias.storage().nbytes(), 256u);
  EXPECT_TRUE(alias.storage().resizable());
  EXPECT_EQ(alias.scalar_type(), at::kFloat);
}

TEST_F(CpuAliasPoolTest, ReleasedPairComesBackWithTheNewMemoryAndDtype) {
  c10::TensorImpl* first = FirstPairReleased();
  at::Tensor again = pool_.Take(buffers_.second.data(), 512,
                                caffe2::TypeMeta::Make<double>(), /*first_of_call=*/false);
  EXPECT_EQ(again.unsafeGetTensorImpl(), first);
  EXPECT_EQ(again.storage().data(), buffers_.second.data());
  EXPECT_EQ(again.storage().nbytes(), 512u);
  EXPECT_EQ(again.scalar_type(), at::kDouble);
}

TEST_F(CpuAliasPoolTest, CallStartsWhereTheLastOneDidOnceItsPairsAreFree) {
  // A synchronous driver: each call's pairs are released before the next.
  at::Tensor first = pool_.Take(buffers_.first.data(), 256,
                                caffe2::TypeMeta::Make<float>(),
                                /*first_of_call=*/true);
  at::Tensor second = pool_.Take(buffers_.second.data(), 512,
                                 caffe2::TypeMeta::Make<double>(),
                                 /*first_of_call=*/false);
  c10::TensorImpl* first_impl = first.unsafeGetTensorImpl();
  c10::TensorImpl* second_impl = second.unsafeGetTensorImpl();
  first.reset();
  second.reset();
  for (int call = 0; call < 3; ++call) {
    at::Tensor a = pool_.Take(buffers_.first.data(), 256,
                              caffe2::TypeMeta::Make<float>(),
                              /*first_of_call=*/true);
    at::Tensor b = pool_.Take(buffers_.second.data(), 512,
                              caffe2::TypeMeta::Make<double>(),
                              /*first_of_call=*/false);
    EXPECT_EQ(a.unsafeGetTensorImpl(), first_impl);
    EXPECT_EQ(b.unsafeGetTensorImpl(), second_impl);
  }
}

TEST_F(CpuAliasPoolTest, CallGoesOnRoundTheRingWhileTheLastOneIsInFlight) {
  // An asynchronous driver: the last call's work still holds its pair.
  at::Tensor in_flight = pool_.Take(buffers_.first.data(), 256,
                                    caffe2::TypeMeta::Make<float>(),
                                    /*first_of_call=*/true);
  at::Tensor next = pool_.Take(buffers_.second.data(), 512,
                               caffe2::TypeMeta::Make<double>(),
                               /*first_of_call=*/true);
  EXPECT_NE(next.unsafeGetTensorImpl(), in_flight.unsafeGetTensorImpl());
  EXPECT_EQ(in_flight.storage().data(), buffers_.first.data());
  EXPECT_EQ(in_flight.scalar_type(), at::kFloat);
}

TEST_F(CpuAliasPoolTest, PairStillHeldIsNotHandedOut) {
  at::Tensor held = pool_.Take(buffers_.first.data(), 256,
                               caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false);
  GoRound(pool_, buffers_.first.data(), kRing - 1);
  at::Tensor next = pool_.Take(buffers_.second.data(), 512,
                               caffe2::TypeMeta::Make<double>(), /*first_of_call=*/false);
  EXPECT_NE(next.unsafeGetTensorImpl(), held.unsafeGetTensorImpl());
  // The held one is untouched.
  EXPECT_EQ(held.storage().data(), buffers_.first.data());
  EXPECT_EQ(held.scalar_type(), at::kFloat);
}

TEST_F(CpuAliasPoolTest, PairWhoseStorageIsStillHeldIsNotHandedOut) {
  at::Tensor first = pool_.Take(buffers_.first.data(), 256,
                                caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false);
  c10::Storage kept = first.storage();  // as a view made by a kernel would
  c10::TensorImpl* impl = first.unsafeGetTensorImpl();
  first.reset();
  GoRound(pool_, buffers_.first.data(), kRing - 1);
  at::Tensor next = pool_.Take(buffers_.second.data(), 512,
                               caffe2::TypeMeta::Make<double>(), /*first_of_call=*/false);
  EXPECT_NE(next.unsafeGetTensorImpl(), impl);
  EXPECT_EQ(kept.data(), buffers_.first.data());
}

TEST_F(CpuAliasPoolTest, PairWithAWeakReferenceIsNotHandedOut) {
  at::Tensor first = pool_.Take(buffers_.first.data(), 256,
                                caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false);
  c10::weak_intrusive_ptr<c10::TensorImpl> weak(first.getIntrusivePtr());
  c10::TensorImpl* impl = first.unsafeGetTensorImpl();
  first.reset();
  GoRound(pool_, buffers_.first.data(), kRing - 1);
  at::Tensor next = pool_.Take(buffers_.second.data(), 512,
                               caffe2::TypeMeta::Make<double>(), /*first_of_call=*/false);
  EXPECT_NE(next.unsafeGetTensorImpl(), impl);
}

TEST_F(CpuAliasPoolTest, ConjugateAndNegativeBitsAreCleared) {
  at::Tensor first = pool_.Take(buffers_.complex.data(), 512,
                                caffe2::TypeMeta::Make<c10::complex<float>>(), /*first_of_call=*/false);
  first._set_conj(true);
  first._set_neg(true);
  // Kept by a recycled pair, not by a fresh one (the caller sets sizes).
  first.unsafeGetTensorImpl()->set_sizes_contiguous({3, 7});
  first.reset();
  GoRound(pool_, buffers_.first.data(), kRing - 1);
  at::Tensor again = pool_.Take(buffers_.first.data(), 256,
                                caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false);
  ASSERT_EQ(again.sizes(), at::IntArrayRef({3, 7}));
  EXPECT_FALSE(again.is_conj());
  EXPECT_FALSE(again.is_neg());
  EXPECT_EQ(again.scalar_type(), at::kFloat);
}

// Changes a kernel could make to a tensor it was given that a fresh alias
// would not have: such a pair is dropped and a fresh one made in its place.
void MakeWrappedNumber(at::Tensor& t) {
  t.unsafeGetTensorImpl()->set_sizes_contiguous({});
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  t.unsafeGetTensorImpl()->set_sizes_contiguous({3, 7});  // still wrapped
}
void RequireGrad(at::Tensor& t) { t.set_requires_grad(true); }
void MakeStorageFixedSize(at::Tensor& t) {
  t.storage().unsafeGetStorageImpl()->set_resizable(false);
}

class ChangedPairTest : public CpuAliasPoolTest,
                        public ::testing::WithParamInterface<void (*)(
                            at::Tensor&)> {};

TEST_P(ChangedPairTest, IsReplacedNotRecycled) {
  at::Tensor first = pool_.Take(buffers_.first.data(), 256,
                                caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false);
  // Sizes a recycled pair would keep (the caller sets them) and a fresh
  // one does not have: the dropped pair's memory may be reused for the new
  // one, so addresses cannot tell them apart.
  first.unsafeGetTensorImpl()->set_sizes_contiguous({3, 7});
  GetParam()(first);
  first.reset();
  GoRound(pool_, buffers_.first.data(), kRing - 1);
  at::Tensor next = pool_.Take(buffers_.second.data(), 512,
                               caffe2::TypeMeta::Make<double>(), /*first_of_call=*/false);
  EXPECT_NE(next.sizes(), at::IntArrayRef({3, 7}));
  EXPECT_FALSE(next.unsafeGetTensorImpl()->is_wrapped_number());
  EXPECT_FALSE(next.requires_grad());
  EXPECT_TRUE(next.storage().resizable());
  // The new pair took the old one's place in the ring: released, it comes
  // back.
  c10::TensorImpl* replacement = next.unsafeGetTensorImpl();
  next.reset();
  GoRound(pool_, buffers_.first.data(), kRing - 1);
  EXPECT_EQ(pool_.Take(buffers_.first.data(), 256,
                       caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false)
                .unsafeGetTensorImpl(),
            replacement);
}

INSTANTIATE_TEST_SUITE_P(Changes, ChangedPairTest,
                         ::testing::Values(&MakeWrappedNumber,
                                           &RequireGrad,
                                           &MakeStorageFixedSize));

TEST_F(CpuAliasPoolTest, StorageAKernelGrewIsFreedAndPointedAtTheNewMemory) {
  at::Tensor first = pool_.Take(buffers_.first.data(), 4,
                                caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false);
  first.unsafeGetTensorImpl()->set_sizes_contiguous({1});
  // What an out= kernel does to an output too small for its result: the
  // storage gets memory of the CPU allocator.
  first.resize_({1024});
  ASSERT_NE(first.storage().data(), buffers_.first.data());
  c10::TensorImpl* impl = first.unsafeGetTensorImpl();
  first.reset();
  GoRound(pool_, buffers_.first.data(), kRing - 1);
  at::Tensor again = pool_.Take(buffers_.second.data(), 512,
                                caffe2::TypeMeta::Make<double>(), /*first_of_call=*/false);
  ASSERT_EQ(again.unsafeGetTensorImpl(), impl);
  EXPECT_EQ(again.storage().data(), buffers_.second.data());
  EXPECT_EQ(again.storage().nbytes(), 512u);
}

TEST_F(CpuAliasPoolTest, InferenceModeGetsPairsOfItsOwnKind) {
  c10::TensorImpl* normal = FirstPairReleased();
  at::Tensor inference;
  {
    c10::InferenceMode guard;
    inference = pool_.Take(buffers_.first.data(), 256,
                           caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false);
  }
  EXPECT_NE(inference.unsafeGetTensorImpl(), normal);
  EXPECT_TRUE(inference.is_inference());
  // Outside inference mode, the released normal pair comes back.
  at::Tensor again = pool_.Take(buffers_.first.data(), 256,
                                caffe2::TypeMeta::Make<float>(), /*first_of_call=*/false);
  EXPECT_EQ(again.unsafeGetTensorImpl(), normal);
  EXPECT_FALSE(again.is_inference());
}

}  // namespace
}  // namespace openreg
