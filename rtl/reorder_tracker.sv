// Receiver PSN reorder tracker of a RoCEv2 NIC: expected-PSN register plus a bitmap of out-of-order arrivals.
//
// PSNs are 24 bit and wrap at 2^24. For an arriving PSN p, d = (p - head) mod 2^24:
//   d == 0                  in order: the head moves past p and then past every consecutive PSN already marked
//   0 < d < Window          out of order (marked), or duplicate if already marked
//   d >= 2^23               duplicate: p lies in the half of PSN space behind the head, so it was delivered
//   Window <= d < 2^23      out of window: dropped, not marked
//
// Ports
//   clk_i, rst_ni                  clock, asynchronous active-low reset (head 0, nothing marked)
//   init_valid_i, init_psn_i       set head to init_psn_i and clear all marks; wins over everything else
//   req_valid_i, req_ready_o,      arriving PSN; accepted at a rising edge where req_valid_i && req_ready_o
//   req_psn_i
//   rsp_valid_o, rsp_verdict_o,    one result per accepted PSN (verdict encoding: fabricsim_pkg::verdict_e)
//   rsp_psn_o
//   head_psn_o                     expected PSN (registered)
//   adv_valid_o, adv_psn_o         one pulse per PSN the head moved past, naming the retired PSN
//   busy_o                         the head is retiring already-marked PSNs (back-pressure on req_*)
//
// Handshake (the one scheme of every fabricsim block, docs/verification.md): a request is taken at a rising
// edge where req_valid_i && req_ready_o; its response is on rsp_*_o, qualified by rsp_valid_o, in a later
// cycle, for one cycle (the NIC always takes it: there is no rsp_ready_i); busy_o says the block is working.
//
// Cycle timing (every output except req_ready_o is a register or a function of registers only)
//   - A PSN accepted at edge N yields rsp_valid_o in cycle N+1. If it was in order, head_psn_o already
//     shows p + 1 in that cycle and adv_valid_o/adv_psn_o report p: the arriving PSN itself is retired at
//     the accepting edge, so an in-order stream runs at one PSN per clock.
//   - While the bit at the head is set (a PSN that arrived earlier out of order), busy_o is high,
//     req_ready_o is low, and each edge retires one PSN: head_psn_o rises by one in the next cycle and
//     adv_valid_o/adv_psn_o report the retired PSN there. An in-order arrival that releases m stored PSNs
//     therefore keeps the block busy for m cycles.
//   - req_ready_o = rst_ni && !init_valid_i && !busy_o: a PSN is never taken in the cycle its context is
//     being reset, so the valid/ready handshake never loses one.
//   - init_valid_i at edge N: from cycle N+1 head_psn_o = init_psn_i, nothing marked, retiring abandoned,
//     rsp_valid_o and adv_valid_o low.
//   - rsp_verdict_o, rsp_psn_o and adv_psn_o are zero while their valid is low.

`default_nettype none

module reorder_tracker #(
  parameter int unsigned Window = 256  // bitmap size in PSNs: power of two, 16..4096
) (
  input  wire logic                clk_i,
  input  wire logic                rst_ni,

  input  wire logic                init_valid_i,
  input  wire fabricsim_pkg::psn_t init_psn_i,

  input  wire logic                req_valid_i,
  output      logic                req_ready_o,
  input  wire fabricsim_pkg::psn_t req_psn_i,

  output      logic                rsp_valid_o,
  output      logic [1:0]          rsp_verdict_o,  // fabricsim_pkg::verdict_e
  output      fabricsim_pkg::psn_t rsp_psn_o,

  output      fabricsim_pkg::psn_t head_psn_o,
  output      logic                adv_valid_o,
  output      fabricsim_pkg::psn_t adv_psn_o,
  output      logic                busy_o
);

  // Slot of PSN p in the bitmap is p mod Window. Window divides 2^24, so the mapping is continuous
  // across the PSN wrap, and the slot of the head is recycled for head + Window once the head retires it.
  localparam int unsigned IdxW = $clog2(Window);
  localparam int unsigned PsnW = fabricsim_pkg::PsnW;
  typedef fabricsim_pkg::psn_t psn_t;
  typedef fabricsim_pkg::verdict_e verdict_e;

  psn_t              head_d, head_q;
  logic [Window-1:0] marked_q;  // PSNs in [head, head + Window) that arrived out of order
  // The bitmap's one write per clock (a flash clear at an init, else one bit): written in place, never
  // computed as a whole next state, so a simulator copies no Window-bit vector per clock.
  logic              clear_all, clear_head, mark_req;
  logic              rsp_valid_d, rsp_valid_q;
  verdict_e          rsp_verdict_d, rsp_verdict_q;
  psn_t              rsp_psn_d, rsp_psn_q;
  logic              adv_valid_d, adv_valid_q;
  psn_t              adv_psn_d, adv_psn_q;

  logic [IdxW-1:0] head_idx, req_idx;
  logic            head_marked;
  logic            accept;
  psn_t            psn_offset;
  logic            offset_behind, offset_in_window;

  assign head_idx    = head_q[IdxW-1:0];
  assign req_idx      = req_psn_i[IdxW-1:0];
  assign head_marked = marked_q[head_idx];
  assign req_ready_o  = rst_ni & ~init_valid_i & ~head_marked;
  assign accept      = req_valid_i & req_ready_o;

  // d = (p - head) mod 2^24: the PsnW-bit subtraction wraps exactly as PSN space does.
  assign psn_offset       = req_psn_i - head_q;
  assign offset_behind    = psn_offset[PsnW-1];
  assign offset_in_window = (psn_offset[PsnW-1:IdxW] == '0);

  always_comb begin
    head_d        = head_q;
    clear_all     = 1'b0;
    clear_head    = 1'b0;
    mark_req      = 1'b0;
    rsp_valid_d   = 1'b0;
    rsp_verdict_d = fabricsim_pkg::VerdictInOrder;
    rsp_psn_d     = '0;
    adv_valid_d   = 1'b0;
    adv_psn_d     = '0;

    if (init_valid_i) begin
      head_d    = init_psn_i;
      clear_all = 1'b1;
    end else if (head_marked) begin
      // Retire one stored PSN per clock; its slot becomes the slot of head + Window, so clear it.
      clear_head  = 1'b1;
      head_d      = head_q + PsnW'(1);
      adv_valid_d = 1'b1;
      adv_psn_d   = head_q;
    end else if (accept) begin
      rsp_valid_d = 1'b1;
      rsp_psn_d   = req_psn_i;
      if (psn_offset == '0) begin
        // The head slot is clear whenever we accept, so the in-order PSN is retired without marking it.
        rsp_verdict_d = fabricsim_pkg::VerdictInOrder;
        head_d        = head_q + PsnW'(1);
        adv_valid_d   = 1'b1;
        adv_psn_d     = head_q;
      end else if (offset_behind) begin
        rsp_verdict_d = fabricsim_pkg::VerdictDuplicate;
      end else if (offset_in_window) begin
        if (marked_q[req_idx]) begin
          rsp_verdict_d = fabricsim_pkg::VerdictDuplicate;
        end else begin
          rsp_verdict_d = fabricsim_pkg::VerdictOutOfOrder;
          mark_req      = 1'b1;
        end
      end else begin
        rsp_verdict_d = fabricsim_pkg::VerdictOutOfWindow;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      head_q        <= '0;
      marked_q      <= '0;
      rsp_valid_q   <= 1'b0;
      rsp_verdict_q <= fabricsim_pkg::VerdictInOrder;
      rsp_psn_q     <= '0;
      adv_valid_q   <= 1'b0;
      adv_psn_q     <= '0;
    end else begin
      head_q        <= head_d;
      rsp_valid_q   <= rsp_valid_d;
      rsp_verdict_q <= rsp_verdict_d;
      rsp_psn_q     <= rsp_psn_d;
      adv_valid_q   <= adv_valid_d;
      adv_psn_q     <= adv_psn_d;
      if (clear_all)       marked_q           <= '0;
      else if (clear_head) marked_q[head_idx] <= 1'b0;
      else if (mark_req)   marked_q[req_idx]  <= 1'b1;
    end
  end

  assign rsp_valid_o   = rsp_valid_q;
  assign rsp_verdict_o = rsp_verdict_q;
  assign rsp_psn_o     = rsp_psn_q;
  assign head_psn_o    = head_q;
  assign adv_valid_o   = adv_valid_q;
  assign adv_psn_o     = adv_psn_q;
  assign busy_o        = head_marked;

  // Parameter legality, checked at elaboration: the slot mapping needs a power of two, and the
  // out-of-window test needs Window <= 2^23 (4096 is the largest bitmap we budget flops for).
  if (!(Window >= 16 && Window <= 4096 && (Window & (Window - 1)) == 0)) begin : gen_bad_window
    $error("reorder_tracker: Window %0d must be a power of two in 16..4096", Window);
  end

`ifndef SYNTHESIS
  // Every accepted PSN produces a result in the next cycle.
  a_result_follows_accept: assert property (@(posedge clk_i) disable iff (!rst_ni)
      accept |=> rsp_valid_o);
  // Back-pressure: no PSN is accepted while the head is retiring stored PSNs.
  a_no_accept_while_busy: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !(accept && busy_o));
  // Only init, in-order arrivals and retirements move the head.
  a_head_still_when_idle: assert property (@(posedge clk_i) disable iff (!rst_ni)
      (!init_valid_i && !busy_o && !accept) |=> (head_psn_o == $past(head_psn_o)));
  // A retirement pulse always names the PSN just behind the new head.
  a_adv_behind_head: assert property (@(posedge clk_i) disable iff (!rst_ni)
      adv_valid_o |-> (adv_psn_o + PsnW'(1) == head_psn_o));
`endif

endmodule

`default_nettype wire
