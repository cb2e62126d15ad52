// fabricsim: builds a fabric from a scenario file, runs its workload and reports what the models did. The
// command line itself is testbench/cli.cpp.
#include <cstdlib>
#include <systemc>

#include "testbench/cli.h"
#include "testbench/huge_pages.h"

// The kernel prints its banner before sc_main() runs; silence it first, then hand over as libsystemc would. First
// of all, the model's heap asks for huge pages (testbench/huge_pages.h): that may start the image once more.
int main(int argc, char* argv[]) {
  fabricsim::testbench::restart_with_huge_pages(argv);
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[]) { return fabricsim_cli(argc, argv, false); }
