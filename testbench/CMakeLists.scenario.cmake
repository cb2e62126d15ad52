# The scenario loader: YAML scenario files and `--set` overrides mapped onto the models' params structs.
# Included from testbench/CMakeLists.txt.
add_library(fabricsim_scenario STATIC
  ${CMAKE_CURRENT_LIST_DIR}/config_yaml.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scenario.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collective_params.cpp
  ${CMAKE_CURRENT_LIST_DIR}/training_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cli_errors.cpp
  ${CMAKE_CURRENT_LIST_DIR}/switch_selection.cpp
  ${CMAKE_CURRENT_LIST_DIR}/system_preset.cpp
  ${CMAKE_CURRENT_LIST_DIR}/failed_cables.cpp
  ${CMAKE_CURRENT_LIST_DIR}/jobs.cpp
)
target_include_directories(fabricsim_scenario PUBLIC ${PROJECT_SOURCE_DIR})
# Public: config_yaml.h exposes YAML::Node, scenario.h the models' params structs (their visit() lives there).
target_link_libraries(fabricsim_scenario PUBLIC yaml-cpp fabricsim_models PRIVATE fabricsim_options CLI11::CLI11 fmt::fmt)

# Every shipped scenario, embedded for `fabricsim list-scenarios` and `fabricsim explain NAME`. The glob is
# re-read at configure time; CONFIGURE_DEPENDS re-runs it when a scenario is added.
file(GLOB fabricsim_shipped_scenarios CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/scenarios/*.yaml)
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/shipped_scenarios.cpp
  COMMAND ${CMAKE_COMMAND} -DDIR=${CMAKE_CURRENT_LIST_DIR}/scenarios
          -DOUT=${CMAKE_CURRENT_BINARY_DIR}/shipped_scenarios.cpp -P ${CMAKE_CURRENT_LIST_DIR}/embed_scenarios.cmake
  DEPENDS ${fabricsim_shipped_scenarios} ${CMAKE_CURRENT_LIST_DIR}/embed_scenarios.cmake)
target_sources(fabricsim_scenario PRIVATE ${CMAKE_CURRENT_LIST_DIR}/explain.cpp
               ${CMAKE_CURRENT_BINARY_DIR}/shipped_scenarios.cpp)
