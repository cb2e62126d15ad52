// Types, widths and encodings shared by the fabricsim RTL blocks (RoCEv2 NIC receive and rate engines) and
// written once here, so a block, a user's replacement block and the C++ adapters agree on them.
//
// Blocks name these by scope (fabricsim_pkg::psn_t), never by `import`: yosys 0.23, which the synthesis tests
// use, accepts package-scoped names but neither a header import nor an import inside a module body.
// Read this file before any block (Verilator and yosys both need the package first).
//
// The C++ mirrors of each item are named beside it; the adapters check the widths at compile time where the
// generated headers carry them.

`default_nettype none

// Each block uses a subset of the package, so an unused item here is expected, not a slip.
/* verilator lint_off UNUSEDPARAM */
package fabricsim_pkg;

  // ---- Transport header fields (InfiniBand BTH, RoCEv2).
  // BTH PSN: 24 bits, wraps at 2^24 (psn_bits in sc_models/nic/reorder_tracker.h).
  localparam int unsigned PsnW = 24;
  typedef logic [PsnW-1:0] psn_t;
  // BTH destination QP: 24 bits (qpn_mask in sc_models/nic/cnp_gen.h).
  localparam int unsigned QpnW = 24;
  typedef logic [QpnW-1:0] qpn_t;

  // ---- Statistics counters on block ports: 32 bits, wrapping (widened to 64 in C++, cnp_gen_counters).
  localparam int unsigned StatW = 32;
  typedef logic [StatW-1:0] stat_t;

  // ---- Reorder tracker verdict (psn_verdict in sc_models/nic/reorder_tracker.h, same encoding).
  typedef enum logic [1:0] {
    VerdictInOrder     = 2'd0,
    VerdictOutOfOrder  = 2'd1,
    VerdictDuplicate   = 2'd2,
    VerdictOutOfWindow = 2'd3
  } verdict_e;

  // ---- DCQCN reaction point request kinds (req_kind_e; the adapter's constants in dcqcn_rp_rtl.cpp).
  localparam int unsigned DcqcnReqW = 2;
  typedef enum logic [DcqcnReqW-1:0] {
    ReqAdvance = 2'd0,
    ReqCnp     = 2'd1,
    ReqSent    = 2'd2,
    ReqInit    = 2'd3
  } dcqcn_req_e;

  // Bit positions of the DCQCN reaction point's events output (dcqcn_event in sc_models/nic/dcqcn_rp.h).
  localparam int unsigned DcqcnEventW = 10;
  typedef enum int unsigned {
    EvCut          = 0,
    EvCnpSuppress  = 1,
    EvAlphaDecay   = 2,
    EvTimer        = 3,
    EvByte         = 4,
    EvFastRecovery = 5,
    EvAdditive     = 6,
    EvHyper        = 7,
    EvMinDecClamp  = 8,
    EvMinRateClamp = 9
  } dcqcn_event_e;

endpackage
/* verilator lint_on UNUSEDPARAM */

`default_nettype wire
