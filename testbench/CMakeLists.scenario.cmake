# The scenario loader: YAML scenario files and `--set` overrides mapped onto the models' params structs.
# Included from testbench/CMakeLists.txt.
add_library(fabricsim_scenario STATIC
  ${CMAKE_CURRENT_LIST_DIR}/config_yaml.cpp
  ${CMAKE_CURRENT_LIST_DIR}/scenario.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collective_params.cpp
)
target_include_directories(fabricsim_scenario PUBLIC ${PROJECT_SOURCE_DIR})
# Public: config_yaml.h exposes YAML::Node, scenario.h the models' params structs (their visit() lives there).
target_link_libraries(fabricsim_scenario PUBLIC yaml-cpp fabricsim_models PRIVATE fabricsim_options)
