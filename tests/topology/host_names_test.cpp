// Host names h0 .. h(N-1): every reader of scenario host names goes through topology::host_index.
#include <gtest/gtest.h>

#include "sc_models/topology/fabric.h"

namespace fabricsim::topology {
namespace host_names_test {

TEST(host_names, index_of_each_name_and_nothing_else) {
  EXPECT_EQ(host_index("h0", 4), 0u);
  EXPECT_EQ(host_index("h3", 4), 3u);
  EXPECT_FALSE(host_index("h4", 4));                          // one past the last host
  EXPECT_FALSE(host_index("h01", 4));                         // not the name of host 1
  EXPECT_FALSE(host_index("h", 4));
  EXPECT_FALSE(host_index("x1", 4));
  EXPECT_FALSE(host_index("h-1", 4));
  EXPECT_FALSE(host_index("h99999999999999999999999", 4));    // more digits than any integer: no exception
  EXPECT_FALSE(host_index("h18446744073709551615", 4));
  EXPECT_EQ(host_names(4), "h0 .. h3");
  EXPECT_EQ(host_name(12), "h12");
}

}  // namespace host_names_test
}  // namespace fabricsim::topology
