// Transparent huge pages for the model's heap: a restart with glibc's tunable set.
#include "testbench/huge_pages.h"

#include <gnu/libc-version.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace fabricsim::testbench {

namespace {

constexpr const char* tunable = "glibc.malloc.hugetlb";

// glibc's version as major * 1000 + minor ("2.36" -> 2036); 0 when it cannot be read.
int glibc_version(const std::string& v) {
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) != 2) return 0;
  return major * 1000 + minor;
}

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::string huge_page_decision(const char* opt_out, const char* tunables, const char* ld_preload,
                               const std::string& thp_enabled, const std::string& glibc) {
  if (opt_out != nullptr && std::strcmp(opt_out, "0") == 0) return "FABRICSIM_HUGE_PAGES=0";
  if (tunables != nullptr && std::strstr(tunables, tunable) != nullptr)
    return std::string("GLIBC_TUNABLES already sets ") + tunable;
  if (ld_preload != nullptr && std::strstr(ld_preload, "vgpreload") != nullptr) return "run by valgrind";
  if (thp_enabled.find("[madvise]") == std::string::npos)
    return "the kernel's transparent huge pages are not \"madvise\" (" +
           (thp_enabled.empty() ? std::string("not readable") : thp_enabled) + ")";
  if (glibc_version(glibc) < 2035) return "glibc " + glibc + " has no " + tunable + " (2.35 and later)";
  return "restart";
}

void restart_with_huge_pages(char** argv) {
#if defined(__SANITIZE_ADDRESS__)
  (void)argv;
#else
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string decision =
      huge_page_decision(std::getenv("FABRICSIM_HUGE_PAGES"), tunables, std::getenv("LD_PRELOAD"),
                         read_first_line("/sys/kernel/mm/transparent_hugepage/enabled"), gnu_get_libc_version());
  if (decision != "restart") return;
  const std::string before = tunables != nullptr ? tunables : "";
  const std::string with = (before.empty() ? "" : before + ":") + tunable + "=1";
  setenv("GLIBC_TUNABLES", with.c_str(), 1);
  execv("/proc/self/exe", argv);
  // Still here: no /proc, or the binary is gone. Run as we are, with the environment as it was.
  if (tunables != nullptr)
    setenv("GLIBC_TUNABLES", before.c_str(), 1);
  else
    unsetenv("GLIBC_TUNABLES");
#endif
}

}  // namespace fabricsim::testbench
