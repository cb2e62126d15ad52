// Huge pages for the model's heap (testbench/huge_pages.h): when the binary restarts itself with glibc's
// tunable, and what the kernel then says of the running process (AnonHugePages in /proc/PID/smaps_rollup,
// the kernel's own count, read while the run is going); the run's results do not depend on the page size.
#include "testbench/huge_pages.h"

#include <gnu/libc-version.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

namespace huge_pages_test {

using fabricsim::testbench::huge_page_decision;

TEST(huge_pages, restarts_only_where_the_tunable_can_help_and_nobody_chose_otherwise) {
  const std::string madvise = "always [madvise] never";
  EXPECT_EQ(huge_page_decision(nullptr, nullptr, nullptr, madvise, "2.36"), "restart");
  EXPECT_EQ(huge_page_decision("1", "glibc.malloc.arena_max=2", "/usr/lib/libfoo.so", madvise, "2.35"), "restart");
  EXPECT_EQ(huge_page_decision("0", nullptr, nullptr, madvise, "2.36"), "FABRICSIM_HUGE_PAGES=0");
  // The user's own setting, or the restarted image (which carries it): no second restart.
  EXPECT_EQ(huge_page_decision(nullptr, "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0", nullptr, madvise, "2.36"),
            "GLIBC_TUNABLES already sets glibc.malloc.hugetlb");
  EXPECT_EQ(
      huge_page_decision(nullptr, nullptr, "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so", madvise, "2.36"),
      "run by valgrind");
  EXPECT_EQ(huge_page_decision(nullptr, nullptr, nullptr, "[always] madvise never", "2.36"),
            "the kernel's transparent huge pages are not \"madvise\" ([always] madvise never)");
  EXPECT_EQ(huge_page_decision(nullptr, nullptr, nullptr, "always madvise [never]", "2.36"),
            "the kernel's transparent huge pages are not \"madvise\" (always madvise [never])");
  EXPECT_EQ(huge_page_decision(nullptr, nullptr, nullptr, "", "2.36"),
            "the kernel's transparent huge pages are not \"madvise\" (not readable)");
  EXPECT_EQ(huge_page_decision(nullptr, nullptr, nullptr, madvise, "2.34"),
            "glibc 2.34 has no glibc.malloc.hugetlb (2.35 and later)");
}

// A fabricsim run watched from outside: the largest AnonHugePages the kernel reported for it, in KiB, the
// GLIBC_TUNABLES its image ran with, its exit status and its JSON report.
struct watched_run {
  int exit_code = -1;
  long max_huge_kib = -1;
  std::string tunables = "(never read)";
  nlohmann::json report;
};

long anon_huge_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
  return -1;
}

// GLIBC_TUNABLES of the image `pid` runs now ("" when unset); false when the environment could not be read (the
// process is exiting: a live process's environment is never empty here, the test's own variables are in it).
bool tunables_of(pid_t pid, std::string& out) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ");
  std::string var;
  bool any = false;
  out.clear();
  while (std::getline(in, var, '\0')) {
    any = true;
    if (var.rfind("GLIBC_TUNABLES=", 0) == 0) out = var.substr(15);
  }
  return any;
}

watched_run run_watched(const char* huge_pages, const std::string& json) {
  const std::string scenario = std::string(FABRICSIM_SOURCE_DIR) + "/testbench/scenarios/spectrum_x_permutation.yaml";
  const pid_t pid = fork();
  if (pid == 0) {
    if (huge_pages != nullptr) setenv("FABRICSIM_HUGE_PAGES", huge_pages, 1);
    unsetenv("GLIBC_TUNABLES");
    execl(FABRICSIM_BINARY, FABRICSIM_BINARY, "run", scenario.c_str(), "--quiet", "--json", json.c_str(), "--set",
          "switch.routing=adaptive", static_cast<char*>(nullptr));
    _exit(127);
  }
  watched_run r;
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, WNOHANG) == 0) {
    // The environment of the image now running (after a restart), when it can still be read.
    std::string t;
    if (tunables_of(pid, t)) r.tunables = t;
    const long kib = anon_huge_kib(pid);
    if (kib > r.max_huge_kib) r.max_huge_kib = kib;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(json);
  if (in) r.report = nlohmann::json::parse(in);
  return r;
}

void drop_machine_fields(nlohmann::json& j) {
  for (const char* k :
       {"wall_time_s", "packet_hops_per_s", "peak_rss_mib", "loop_wall_s", "setup_wall_s", "verify_wall_s"})
    j.erase(k);
}

TEST(huge_pages, the_heap_runs_on_huge_pages_unless_told_not_to_and_the_results_are_the_same) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(thp, mode);
  const std::string decision = huge_page_decision(nullptr, nullptr, nullptr, mode, gnu_get_libc_version());
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator is not glibc's: the binary does not restart";
#endif
  if (decision != "restart") GTEST_SKIP() << "this machine: " << decision;

  const watched_run on = run_watched(nullptr, testing::TempDir() + "huge_pages_on.json");
  const watched_run off = run_watched("0", testing::TempDir() + "huge_pages_off.json");
  ASSERT_EQ(on.exit_code, 0);
  ASSERT_EQ(off.exit_code, 0);
  EXPECT_EQ(on.tunables, "glibc.malloc.hugetlb=1");
  EXPECT_EQ(off.tunables, "");
  // 128 NICs and 16 switches hold tens of MiB of heap: some of it in 2 MiB pages when asked, none when not
  // (in "madvise" mode the kernel gives huge pages only to memory that asked for them).
  EXPECT_GE(on.max_huge_kib, 2048) << "AnonHugePages never reached one 2 MiB page";
  EXPECT_EQ(off.max_huge_kib, 0);
  // The model's results do not depend on where its objects were placed.
  nlohmann::json a = on.report, b = off.report;
  ASSERT_TRUE(a.contains("packet_hops") && a["packet_hops"].get<uint64_t>() > 0);
  drop_machine_fields(a);
  drop_machine_fields(b);
  EXPECT_EQ(a.dump(), b.dump());
}

}  // namespace huge_pages_test
