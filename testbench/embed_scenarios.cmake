# Embeds every shipped scenario (testbench/scenarios/*.yaml) into a C++ source as a table of
# {file name, text}, for `fabricsim list-scenarios` and `fabricsim explain NAME`: -DDIR=... -DOUT=...
file(GLOB files RELATIVE "${DIR}" "${DIR}/*.yaml")
list(SORT files)
set(body "// Generated from ${DIR}/*.yaml by embed_scenarios.cmake; do not edit.\n#include <cstddef>\nnamespace fabricsim::testbench {\nstruct embedded_scenario { const char* file; const char* text; };\nextern const embedded_scenario shipped_scenario_files[];\nextern const std::size_t shipped_scenario_count;\nconst embedded_scenario shipped_scenario_files[] = {\n")
foreach(f IN LISTS files)
  file(READ "${DIR}/${f}" content)
  string(APPEND body "  {\"${f}\", R\"fabricsim_embed(${content})fabricsim_embed\"},\n")
endforeach()
list(LENGTH files n)
string(APPEND body "};\nconst std::size_t shipped_scenario_count = ${n};\n}\n")
file(WRITE "${OUT}.tmp" "${body}")
# Only touch the output when it changed, so that an unchanged set does not rebuild.
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
