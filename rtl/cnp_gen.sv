// DCQCN notification point of a RoCEv2 NIC receiver: decides, per ECN-CE-marked arrival, whether to send a
// CNP to the flow's sender now, at most one per flow (or per port) per minimum interval.
//
// Rule, for an arrival of flow (QPN) q at time t (TimeWidth-bit free-running cycle count):
//   context c = q mod Flows (per-flow mode) or the single port context (per-port mode)
//   emit     = !sent[c] || ((t - last[c]) mod 2^TimeWidth) >= interval
//   on emit: sent[c] = 1, last[c] = t
// The modular difference is exact across the wrap of the time field as long as fewer than 2^TimeWidth cycles
// pass between two arrivals of one context: a context silent for k * 2^TimeWidth + e cycles (k >= 1) looks
// e cycles old. At TimeWidth 32 and 1 GHz that takes 4.3 s of silence; the emitted CNP is then only late.
// QPNs that agree modulo Flows share one context (aliasing): a CNP for one holds back CNPs for the others.
//
// Ports
//   clk_i, rst_ni                    clock, asynchronous active-low reset (interval 0, per-flow mode,
//                                    counters 0, then the table clear below)
//   init_valid_i, init_interval_i,   load the interval (cycles) and the mode, zero the counters, forget every
//   init_per_port_i                  CNP sent (table clear); wins over everything else
//   req_valid_i, req_ready_o,        one marked arrival: QPN (24 bit) and its arrival time; accepted at a
//   req_flow_i, req_now_i            rising edge where req_valid_i && req_ready_o
//   rsp_valid_o, rsp_emit_o,         one result per accepted arrival: emit a CNP to rsp_flow_o or not
//   rsp_flow_o
//   cnp_count_o, suppressed_count_o  CNPs emitted and arrivals suppressed since init (32 bit, wrapping)
//   busy_o                           the table is being cleared (back-pressure on req_*)
//
// Handshake (the one scheme of every fabricsim block, docs/verification.md): a request is taken at a rising
// edge where req_valid_i && req_ready_o; its response is on rsp_*_o, qualified by rsp_valid_o, in a later
// cycle, for one cycle (the NIC always takes it: there is no rsp_ready_i); busy_o says the block is working.
//
// Cycle timing (every output except req_ready_o is a register)
//   - An arrival accepted at edge N yields rsp_valid_o in cycle N+1, with the counters already updated; the
//     table entry is written at edge N, so back-to-back arrivals of one flow see each other: one per clock.
//   - The table is a single-port RAM without reset: after rst_ni and after every init it is cleared one entry
//     per clock, Flows cycles with busy_o high and req_ready_o low (the port context is a register, cleared
//     at once, but waits for the sweep too so both modes time alike).
//   - req_ready_o = rst_ni && !init_valid_i && !busy_o.
//   - rsp_flow_o is zero while rsp_valid_o is low; rsp_emit_o likewise.

`default_nettype none

module cnp_gen #(
  parameter int unsigned Flows     = 64,  // flow contexts: power of two, 2..65536
  parameter int unsigned TimeWidth = 32   // bits of the time input and of each stored time, 8..32
) (
  input  wire logic                 clk_i,
  input  wire logic                 rst_ni,

  input  wire logic                 init_valid_i,
  input  wire logic [TimeWidth-1:0] init_interval_i,
  input  wire logic                 init_per_port_i,

  input  wire logic                 req_valid_i,
  output      logic                 req_ready_o,
  input  wire fabricsim_pkg::qpn_t  req_flow_i,
  input  wire logic [TimeWidth-1:0] req_now_i,

  output      logic                 rsp_valid_o,
  output      logic                 rsp_emit_o,
  output      fabricsim_pkg::qpn_t  rsp_flow_o,

  output      fabricsim_pkg::stat_t cnp_count_o,
  output      fabricsim_pkg::stat_t suppressed_count_o,
  output      logic                 busy_o
);

  localparam int unsigned IdxW = $clog2(Flows);
  localparam int unsigned StatW = fabricsim_pkg::StatW;
  typedef fabricsim_pkg::qpn_t qpn_t;
  typedef fabricsim_pkg::stat_t stat_t;

  // One context: {sent, time of the last CNP}. A plain vector rather than a packed struct: yosys 0.23 drops
  // struct members of an unpacked array's elements.
  localparam int unsigned EntryW = TimeWidth + 1;

  // Table RAM: one write port, asynchronous read (flops or a latch-free register file in synthesis).
  logic [EntryW-1:0] table_mem [Flows];
  logic              table_we;
  logic [IdxW-1:0]   table_waddr;
  logic [EntryW-1:0] table_wdata;

  logic [TimeWidth-1:0] interval_d, interval_q;
  logic                 per_port_d, per_port_q;
  logic [EntryW-1:0]    port_d, port_q;
  logic                 clearing_d, clearing_q;
  logic [IdxW-1:0]      clear_idx_d, clear_idx_q;
  logic                 rsp_valid_d, rsp_valid_q;
  logic                 rsp_emit_d, rsp_emit_q;
  qpn_t                 rsp_flow_d, rsp_flow_q;
  stat_t                cnp_count_d, cnp_count_q;
  stat_t                suppressed_count_d, suppressed_count_q;

  logic                 accept;
  logic [IdxW-1:0]      req_idx;
  logic                 ctx_sent;
  logic [TimeWidth-1:0] ctx_last;
  logic [TimeWidth-1:0] elapsed;
  logic                 emit;

  assign req_ready_o = rst_ni & ~init_valid_i & ~clearing_q;
  assign accept     = req_valid_i & req_ready_o;
  assign req_idx     = req_flow_i[IdxW-1:0];
  assign {ctx_sent, ctx_last} = per_port_q ? port_q : table_mem[req_idx];
  // The TimeWidth-bit subtraction wraps exactly as the time field does.
  assign elapsed    = req_now_i - ctx_last;
  assign emit       = ~ctx_sent | (elapsed >= interval_q);

  always_comb begin
    interval_d         = interval_q;
    per_port_d         = per_port_q;
    port_d             = port_q;
    clearing_d         = clearing_q;
    clear_idx_d        = clear_idx_q;
    rsp_valid_d        = 1'b0;
    rsp_emit_d         = 1'b0;
    rsp_flow_d         = '0;
    cnp_count_d        = cnp_count_q;
    suppressed_count_d = suppressed_count_q;
    table_we           = 1'b0;
    table_waddr        = req_idx;
    table_wdata        = {1'b1, req_now_i};

    if (init_valid_i) begin
      interval_d         = init_interval_i;
      per_port_d         = init_per_port_i;
      port_d             = '0;
      clearing_d         = 1'b1;
      clear_idx_d        = '0;
      cnp_count_d        = '0;
      suppressed_count_d = '0;
    end else if (clearing_q) begin
      table_we    = 1'b1;
      table_waddr = clear_idx_q;
      table_wdata = '0;
      clear_idx_d = clear_idx_q + 1'b1;
      clearing_d  = (clear_idx_q != '1);
    end else if (accept) begin
      rsp_valid_d = 1'b1;
      rsp_emit_d  = emit;
      rsp_flow_d  = req_flow_i;
      if (emit) begin
        cnp_count_d = cnp_count_q + StatW'(1);
        if (per_port_q) begin
          port_d = {1'b1, req_now_i};
        end else begin
          table_we = 1'b1;
        end
      end else begin
        suppressed_count_d = suppressed_count_q + StatW'(1);
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      interval_q         <= '0;
      per_port_q         <= 1'b0;
      port_q             <= '0;
      clearing_q         <= 1'b1;
      clear_idx_q        <= '0;
      rsp_valid_q        <= 1'b0;
      rsp_emit_q         <= 1'b0;
      rsp_flow_q         <= '0;
      cnp_count_q        <= '0;
      suppressed_count_q <= '0;
    end else begin
      interval_q         <= interval_d;
      per_port_q         <= per_port_d;
      port_q             <= port_d;
      clearing_q         <= clearing_d;
      clear_idx_q        <= clear_idx_d;
      rsp_valid_q        <= rsp_valid_d;
      rsp_emit_q         <= rsp_emit_d;
      rsp_flow_q         <= rsp_flow_d;
      cnp_count_q        <= cnp_count_d;
      suppressed_count_q <= suppressed_count_d;
    end
  end

  // RAM write port: no reset, as a RAM has none (the clear sweep stands in for it).
  always_ff @(posedge clk_i) begin
    if (table_we) begin
      table_mem[table_waddr] <= table_wdata;
    end
  end

  assign rsp_valid_o        = rsp_valid_q;
  assign rsp_emit_o         = rsp_emit_q;
  assign rsp_flow_o         = rsp_flow_q;
  assign cnp_count_o        = cnp_count_q;
  assign suppressed_count_o = suppressed_count_q;
  assign busy_o             = clearing_q;

  // Parameter legality, checked at elaboration: the context index is the low bits of the QPN, so Flows is a
  // power of two of at least 2 (a one-context table is what per-port mode already provides) and no more
  // QPNs than the 24-bit field can name; the time field fits the 32-bit adapter ports.
  if (!(Flows >= 2 && Flows <= 65536 && (Flows & (Flows - 1)) == 0)) begin : gen_bad_flows
    $error("cnp_gen: Flows %0d must be a power of two in 2..65536", Flows);
  end
  if (!(TimeWidth >= 8 && TimeWidth <= 32)) begin : gen_bad_time_width
    $error("cnp_gen: TimeWidth %0d must be in 8..32", TimeWidth);
  end

`ifndef SYNTHESIS
  // Every accepted arrival produces a result in the next cycle.
  a_result_follows_accept: assert property (@(posedge clk_i) disable iff (!rst_ni)
      accept |=> rsp_valid_o);
  // Back-pressure: nothing is accepted while the table is being cleared.
  a_no_accept_while_busy: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !(accept && busy_o));
  // Each result moves exactly one counter by one.
  a_one_count_per_result: assert property (@(posedge clk_i) disable iff (!rst_ni)
      (accept && !init_valid_i) |=>
      ((cnp_count_o - $past(cnp_count_o)) + (suppressed_count_o - $past(suppressed_count_o)) == StatW'(1)));
  // The first arrival after an init always gets a CNP.
  a_first_after_init_emits: assert property (@(posedge clk_i) disable iff (!rst_ni)
      (accept && cnp_count_q == '0 && suppressed_count_q == '0) |=> rsp_emit_o);
`endif

endmodule

`default_nettype wire
