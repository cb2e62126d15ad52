// Transparent huge pages for the model's heap. The simulation loop reads a few dozen scattered cache lines per
// packet-hop (docs/performance.md, "Where the wall time goes"); with 4 KiB pages most of those lines sit on a
// page of their own, and at thousands of NICs the page walks of the translation misses cost as much as the
// misses themselves. glibc (2.35 and later) can ask the kernel for 2 MiB pages for every arena it grows
// (the tunable glibc.malloc.hugetlb=1: madvise(MADV_HUGEPAGE) on each heap extension), but reads its tunables
// only when a process starts. So fabricsim's main() starts its image once more with the tunable set, when
// that can help: the kernel hands out huge pages on request ("madvise" in
// /sys/kernel/mm/transparent_hugepage/enabled), glibc knows the tunable, nobody has set it already, and the
// process is not run by valgrind (whose execve would leave the restarted image unprofiled) or built with
// AddressSanitizer (whose allocator is not glibc's). FABRICSIM_HUGE_PAGES=0 in the environment keeps 4 KiB
// pages. Nothing the model computes depends on it: only wall time and a little resident memory.
#pragma once

#include <string>

namespace fabricsim::testbench {

// Why the process keeps (or would restart) its image: "restart" when it would set the tunable, otherwise the
// reason it does not (e.g. "FABRICSIM_HUGE_PAGES=0", "GLIBC_TUNABLES already sets glibc.malloc.hugetlb").
// `thp_enabled`: the contents of /sys/kernel/mm/transparent_hugepage/enabled; `glibc`: gnu_get_libc_version().
std::string huge_page_decision(const char* opt_out, const char* tunables, const char* ld_preload,
                               const std::string& thp_enabled, const std::string& glibc);

// Called first in main(): execs /proc/self/exe with argv and GLIBC_TUNABLES extended by
// glibc.malloc.hugetlb=1 when huge_page_decision says "restart"; returns (leaving the environment as it was)
// when it does not, or when the exec fails.
void restart_with_huge_pages(char** argv);

}  // namespace fabricsim::testbench
