// An alternative receiver PSN reorder tracker, written for the user-RTL tests (docs/rtl_contract.md) from the
// contract alone: a different micro-architecture from rtl/reorder_tracker.sv.
//
// Instead of a bitmap addressed by PSN mod Window beside a head register, this block keeps a shift register
// `ahead_q` aligned to the head: bit k says PSN head + k has arrived out of order. Retiring the head shifts the
// register down by one, so the slot of every PSN moves with the head and no slot is ever recycled. The verdict
// is computed by a function from the offset and the register, and every output register has its own always_ff.
//
// The tests plant a bug by rewriting the line marked PLANTED-BUG-SITE (the window bound).

`default_nettype none

module psn_shift_tracker #(
  parameter int unsigned Window = 256
) (
  input  wire logic        clk_i,
  input  wire logic        rst_ni,
  input  wire logic        init_valid_i,
  input  wire logic [23:0] init_psn_i,
  input  wire logic        req_valid_i,
  output      logic        req_ready_o,
  input  wire logic [23:0] req_psn_i,
  output      logic        rsp_valid_o,
  output      logic [1:0]  rsp_verdict_o,
  output      logic [23:0] rsp_psn_o,
  output      logic [23:0] head_psn_o,
  output      logic        adv_valid_o,
  output      logic [23:0] adv_psn_o,
  output      logic        busy_o
);

  localparam logic [1:0] InOrder = 2'd0, OutOfOrder = 2'd1, Duplicate = 2'd2, OutOfWindow = 2'd3;

  logic [23:0]       head;
  logic [Window-1:0] ahead_q;  // bit k: PSN head + k arrived out of order (bit 0 set: head waits to retire)
  logic [23:0]       gap;     // offset of the presented PSN from the head, modulo 2^24
  logic              take;     // the presented PSN is accepted at this edge
  logic              retire;   // the head PSN is retired at this edge (it arrived earlier)
  logic [1:0]        verdict;

  assign gap   = req_psn_i - head;
  assign retire = ahead_q[0] && !init_valid_i;
  assign take   = req_valid_i && req_ready_o;

  function automatic logic [1:0] classify(input logic [23:0] d, input logic [Window-1:0] marks);
    if (d == 24'd0) return InOrder;
    if (d >= 24'h800000) return Duplicate;                     // the half of PSN space behind the head
    if (d >= 24'(Window)) return OutOfWindow;  // PLANTED-BUG-SITE
    if (marks[d[$clog2(Window)-1:0]]) return Duplicate;
    return OutOfOrder;
  endfunction

  assign verdict     = classify(gap, ahead_q);
  assign busy_o      = ahead_q[0];
  assign req_ready_o = rst_ni && !init_valid_i && !ahead_q[0];
  assign head_psn_o  = head;

  // The head and the shift register.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      head    <= 24'd0;
      ahead_q <= '0;
    end else if (init_valid_i) begin
      head    <= init_psn_i;
      ahead_q <= '0;
    end else if (retire || (take && verdict == InOrder)) begin
      // Bit 0 is the PSN leaving (stored or just arrived); everything else moves one place closer.
      head    <= head + 24'd1;
      ahead_q <= ahead_q >> 1;
    end else if (take && verdict == OutOfOrder) begin
      ahead_q[gap[$clog2(Window)-1:0]] <= 1'b1;
    end
  end

  // The result of an accepted PSN, for one cycle.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rsp_valid_o   <= 1'b0;
      rsp_verdict_o <= 2'd0;
      rsp_psn_o     <= 24'd0;
    end else begin
      rsp_valid_o   <= take;
      rsp_verdict_o <= take ? verdict : 2'd0;
      rsp_psn_o     <= take ? req_psn_i : 24'd0;
    end
  end

  // One pulse per PSN the head moves past.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      adv_valid_o <= 1'b0;
      adv_psn_o   <= 24'd0;
    end else begin
      adv_valid_o <= !init_valid_i && (retire || (take && verdict == InOrder));
      adv_psn_o   <= (!init_valid_i && (retire || (take && verdict == InOrder))) ? head : 24'd0;
    end
  end

endmodule

`default_nettype wire
