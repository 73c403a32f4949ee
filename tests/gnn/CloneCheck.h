// The check every clone test shares: a deep copy of a module, for replicas.
#pragma once
#include <gtest/gtest.h>

#include <typeinfo>

#include "gnn/nn/Module.h"

namespace gnn::testing {

/// Same class, every parameter equal in value, name, shape and requires-grad flag, none sharing storage, no
/// gradient carried over, the same training flag.
inline void expectDeepCopy(const Module& original, const Module& copy) {
  EXPECT_EQ(typeid(original), typeid(copy));
  auto a = original.namedParameters(), b = copy.namedParameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_TRUE(a[i].second.value().bitEqual(b[i].second.value())) << a[i].first;
    EXPECT_NE(a[i].second.value().storageId(), b[i].second.value().storageId()) << a[i].first;
    EXPECT_EQ(a[i].second.requiresGrad(), b[i].second.requiresGrad()) << a[i].first;
    EXPECT_FALSE(b[i].second.hasGrad()) << a[i].first;
  }
  EXPECT_EQ(original.isTraining(), copy.isTraining());
}

}  // namespace gnn::testing
