// A training step read from MLCommons Chakra execution traces (`training.chakra`, issue 21 item 6): one
// trace per GPU rank (traces/chakra_reader.h), mapped onto the training task graph of
// testbench/training_graph.h and run by the same executor (docs/workloads.md#chakra-execution-traces).
//  - COMP_NODE, MEM_LOAD_NODE, MEM_STORE_NODE: a compute task on the rank's GPU lasting duration_micros, or
//    num_ops at the GPU's rate (training.gpu_tflops x compute_efficiency) when the duration is 0;
//    METADATA_NODE: a compute task of no time (it only passes its dependencies on);
//  - COMM_COLL_NODE: the k-th collective of a process group on every member rank is one communication task
//    over the group (comm_type ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL or BROADCAST from comm_src,
//    comm_size bytes); the group is the ranks whose traces hold collectives with that pg_name, or every rank
//    for collectives without one;
//  - COMM_SEND_NODE (comm_dst) and COMM_RECV_NODE (comm_src): the k-th send from a to b with a comm_tag and
//    the k-th receive at b from a with that tag are one point-to-point transfer of comm_size bytes, which
//    starts when both sides' dependencies have ended;
//  - data_deps and ctrl_deps are both dependencies (within the rank's file).
// Anything else is refused naming the file, the node (id and name) and the field.
#pragma once

#include <string>
#include <vector>

#include "testbench/training_graph.h"
#include "traces/chakra_reader.h"

namespace fabricsim::testbench {

// The files of `training.chakra`: `<prefix>.0.et`, `<prefix>.1.et`, ... while they exist; or, for a
// directory, the one prefix of the `*.<rank>.et` files inside it. A relative path is relative to the
// scenario file `source`. Refused: no rank-0 file, files of more than one prefix in a directory.
std::vector<std::string> chakra_files(const std::string& spec, const std::string& source);

// The task graph of one trace per rank (`files[r]` names trace r in errors); compute tasks that give
// num_ops and no duration take num_ops / flops_per_s seconds. Tasks are in a dependency order that keeps each
// rank's file order where the dependencies allow (the executor runs a GPU's compute tasks in task order).
training_graph chakra_graph(const std::vector<traces::chakra_trace>& traces, const std::vector<std::string>& files,
                            double flops_per_s);

// Reads the files and builds the graph.
training_graph load_chakra_graph(const std::vector<std::string>& files, double flops_per_s);

}  // namespace fabricsim::testbench
