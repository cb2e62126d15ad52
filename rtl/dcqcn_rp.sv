// DCQCN reaction point of a RoCEv2 NIC: the per-flow rate engine (rate cut on CNP, alpha estimate,
// recovery on a rate-increase timer and a byte counter). The algorithm, its fixed-point formats and the
// ordering rules are specified in sc_models/nic/dcqcn_rp.h; the C++ reference model follows that text.
//
// There is no free-running timer inside: time is an input (req_now_i, a free-running cycle count shared by
// the NIC) carried by every request, and the block reports the earliest deadline it waits for, so the owner
// can step it only when a request or a deadline comes.
//
// Ports
//   clk_i, rst_ni              clock, asynchronous active-low reset (all state 0, no timer armed)
//   cfg_*_i                    configuration in datapath formats; quasi-static: change only with an init
//   req_valid_i, req_ready_o,  one request: kind (req_kind_e), time, sent bytes; accepted at a rising edge
//   req_kind_i, req_now_i,     where req_valid_i && req_ready_o
//   req_bytes_i
//   rate_o, target_o           current and target rate, kb/s (registered)
//   alpha_o                    alpha, unsigned Q0.AlphaW (registered)
//   deadline_valid_o,          the earliest armed timer deadline, in cycles of req_now_i (registered)
//   deadline_o
//   timer_count_o,             rate-increase events since the last cut, from the timer and from the byte
//   byte_count_o               counter (saturating)
//   events_o                   what the last request did, OR over its steps (event_e bit positions);
//                              cleared when a request is accepted
//   rsp_valid_o                the request accepted last is done: the outputs above are its results (one
//                              cycle, registered)
//   busy_o                     a request is being processed (req_ready_o is low)
//
// Handshake (the one scheme of every fabricsim block, docs/verification.md): a request is taken at a rising
// edge where req_valid_i && req_ready_o; its response is on the outputs, qualified by rsp_valid_o, in a later
// cycle, for one cycle (the NIC always takes it: there is no rsp_ready_i); busy_o says the block is working.
//
// Cycle timing
//   - An init is done at its accepting edge: outputs show the reset flow in the next cycle, with rsp_valid_o
//     high and busy_o low.
//   - Any other request is latched at its accepting edge; then each busy cycle fires the earliest due timer
//     (alpha timer before rate timer on equal deadlines), one per edge, and the first cycle with no timer
//     due at or before req_now applies the request itself and ends busy. A request that finds k timers due
//     therefore takes k + 2 edges: rsp_valid_o rises, and busy_o falls, in the cycle after the last.
//   - Deadlines compare by the sign of the TimeW-bit difference, so the count may wrap as long as no two
//     compared times are 2^(TimeW-1) cycles apart.

`default_nettype none

module dcqcn_rp #(
  parameter int unsigned RateW   = 32,  // rates in kb/s: 16..40
  parameter int unsigned AlphaW  = 16,  // alpha fraction bits: 10..24
  parameter int unsigned TimeW   = 64,  // time in cycles: 32..64
  parameter int unsigned PeriodW = 32,  // timer periods in cycles: 8..TimeW-1
  parameter int unsigned BytesW  = 16,  // bytes per sent request: 8..24
  parameter int unsigned AccW    = 32,  // byte accumulator and cfg_byte_reset_i: BytesW+1..40
  parameter int unsigned CountW  = 8    // event counters: 6..16 (cfg_threshold_i must stay below 2^CountW-1)
) (
  input  wire logic               clk_i,
  input  wire logic               rst_ni,

  input  wire logic [RateW-1:0]   cfg_line_rate_i,
  input  wire logic [RateW-1:0]   cfg_min_rate_i,
  input  wire logic [RateW-1:0]   cfg_ai_rate_i,
  input  wire logic [RateW-1:0]   cfg_hai_rate_i,
  input  wire logic [10:0]        cfg_min_dec_i,          // Q0.10 share of the rate a cut keeps, 0..1024
  input  wire logic [5:0]         cfg_cut_shift_i,        // cut = rate * alpha >> shift; AlphaW..AlphaW+5
  input  wire logic [9:0]         cfg_alpha_keep_i,       // 1 - g, Q0.10
  input  wire logic [AlphaW-1:0]  cfg_initial_alpha_i,
  input  wire logic [CountW-1:0]  cfg_threshold_i,        // fast-recovery stages F
  input  wire logic [AccW-1:0]    cfg_byte_reset_i,       // bytes per byte-counter event, >= 1
  input  wire logic [PeriodW-1:0] cfg_alpha_period_i,     // >= 1
  input  wire logic [PeriodW-1:0] cfg_increase_period_i,  // >= 1
  input  wire logic [PeriodW-1:0] cfg_monitor_period_i,

  input  wire logic               req_valid_i,
  output      logic               req_ready_o,
  input  wire logic [fabricsim_pkg::DcqcnReqW-1:0] req_kind_i,  // fabricsim_pkg::dcqcn_req_e
  input  wire logic [TimeW-1:0]   req_now_i,
  input  wire logic [BytesW-1:0]  req_bytes_i,

  output      logic [RateW-1:0]   rate_o,
  output      logic [RateW-1:0]   target_o,
  output      logic [AlphaW-1:0]  alpha_o,
  output      logic               deadline_valid_o,
  output      logic [TimeW-1:0]   deadline_o,
  output      logic [CountW-1:0]  timer_count_o,
  output      logic [CountW-1:0]  byte_count_o,
  output      logic [fabricsim_pkg::DcqcnEventW-1:0] events_o,  // bits: fabricsim_pkg::dcqcn_event_e
  output      logic               rsp_valid_o,
  output      logic               busy_o
);

  // Request kinds and event bit positions: fabricsim_pkg (dcqcn_req_e, dcqcn_event_e).
  localparam int unsigned EventW = fabricsim_pkg::DcqcnEventW;

  // Request latched for the busy cycles.
  logic             busy_d, busy_q;
  // fabricsim_pkg::dcqcn_req_e, as a plain vector: yosys 0.23 has no enum casts.
  logic [fabricsim_pkg::DcqcnReqW-1:0] kind_d, kind_q;
  logic [TimeW-1:0] now_d, now_q;
  logic [BytesW-1:0] bytes_d, bytes_q;

  // Flow state.
  logic [RateW-1:0]  rate_d, rate_q;
  logic [RateW-1:0]  target_d, target_q;
  logic [AlphaW-1:0] alpha_d, alpha_q;
  logic              alpha_armed_d, alpha_armed_q;
  logic [TimeW-1:0]  alpha_dl_d, alpha_dl_q;
  logic              inc_armed_d, inc_armed_q;  // high exactly while rate_q < cfg_line_rate_i
  logic [TimeW-1:0]  inc_dl_d, inc_dl_q;
  logic [CountW-1:0] tcount_d, tcount_q;
  logic [CountW-1:0] bcount_d, bcount_q;
  logic [AccW-1:0]   acc_d, acc_q;
  logic [TimeW-1:0]  last_cut_d, last_cut_q;
  logic [EventW-1:0] events_d, events_q;
  logic              deadline_valid_d, deadline_valid_q;
  logic [TimeW-1:0]  deadline_d, deadline_q;
  logic              rsp_valid_d, rsp_valid_q;

  logic accept;
  assign req_ready_o = rst_ni & ~busy_q;
  assign accept      = req_valid_i & req_ready_o;

  // ---- Timers due at the latched time: a deadline is due when now - deadline is not negative.
  logic [TimeW-1:0] alpha_lag, inc_lag, inc_minus_alpha;
  logic             alpha_due, inc_due, alpha_first;
  assign alpha_lag       = now_q - alpha_dl_q;
  assign inc_lag         = now_q - inc_dl_q;
  assign inc_minus_alpha = inc_dl_q - alpha_dl_q;
  assign alpha_due       = alpha_armed_q & ~alpha_lag[TimeW-1];
  assign inc_due         = inc_armed_q & ~inc_lag[TimeW-1];
  assign alpha_first     = alpha_due & (~inc_due | ~inc_minus_alpha[TimeW-1]);

  // ---- Alpha: increase on a CNP, decay on the alpha timer. Both stay below 1.0 in AlphaW bits:
  // a * k + (1024 - k) * 2^AlphaW < 1024 * 2^AlphaW for a < 2^AlphaW.
  logic [AlphaW+10:0] alpha_kept, alpha_raised;
  logic [AlphaW-1:0]  alpha_up, alpha_down;
  logic [10:0]        alpha_gain;  // g in 1024ths: 1..1024
  assign alpha_kept   = (AlphaW + 11)'(alpha_q) * (AlphaW + 11)'(cfg_alpha_keep_i);
  assign alpha_gain   = 11'd1024 - {1'b0, cfg_alpha_keep_i};
  assign alpha_raised = alpha_kept + ((AlphaW + 11)'(alpha_gain) << AlphaW);
  assign alpha_up     = alpha_raised[AlphaW+9:10];
  assign alpha_down   = alpha_kept[AlphaW+9:10];

  // ---- Rate cut: rate - rate * alpha >> shift, kept at least rate * min_dec and min_rate.
  logic [RateW+AlphaW-1:0] cut_product, cut_amount;
  logic [RateW+10:0]       keep_product;
  logic [RateW-1:0]        after_cut, keep_rate, after_dec, cut_rate;
  logic                    dec_clamp, min_clamp, monitor_open;
  logic [TimeW-1:0]        since_cut;
  assign cut_product  = {{AlphaW{1'b0}}, rate_q} * {{RateW{1'b0}}, alpha_q};
  assign cut_amount   = cut_product >> cfg_cut_shift_i;
  assign after_cut    = rate_q - cut_amount[RateW-1:0];
  assign keep_product = {11'd0, rate_q} * {{RateW{1'b0}}, cfg_min_dec_i};
  assign keep_rate    = keep_product[RateW+9:10];
  assign dec_clamp    = after_cut < keep_rate;
  assign after_dec    = dec_clamp ? keep_rate : after_cut;
  assign min_clamp    = after_dec < cfg_min_rate_i;
  assign cut_rate     = min_clamp ? cfg_min_rate_i : after_dec;
  assign since_cut    = now_q - last_cut_q;
  assign monitor_open = since_cut >= {{(TimeW-PeriodW){1'b0}}, cfg_monitor_period_i};

  // ---- Increase event, shared by the timer and the byte counter (at most one per cycle).
  logic [CountW-1:0] tcount_inc, bcount_inc, ev_tcount, ev_bcount, count_max, count_min;
  logic              ev_from_timer, ev_fast, ev_hyper;
  logic [RateW:0]    target_sum, rate_sum;
  logic [RateW-1:0]  target_step, target_up, rate_up;
  assign tcount_inc    = (tcount_q == '1) ? tcount_q : tcount_q + 1'b1;
  assign bcount_inc    = (bcount_q == '1) ? bcount_q : bcount_q + 1'b1;
  assign ev_from_timer = ~alpha_first & inc_due;
  assign ev_tcount     = ev_from_timer ? tcount_inc : tcount_q;
  assign ev_bcount     = ev_from_timer ? bcount_q : bcount_inc;
  assign count_max     = (ev_tcount > ev_bcount) ? ev_tcount : ev_bcount;
  assign count_min     = (ev_tcount > ev_bcount) ? ev_bcount : ev_tcount;
  assign ev_fast       = count_max <= cfg_threshold_i;
  assign ev_hyper      = count_min > cfg_threshold_i;
  assign target_step   = ev_hyper ? cfg_hai_rate_i : cfg_ai_rate_i;
  assign target_sum    = {1'b0, target_q} + {1'b0, target_step};
  assign target_up     = ev_fast ? target_q :
                         (target_sum > {1'b0, cfg_line_rate_i}) ? cfg_line_rate_i : target_sum[RateW-1:0];
  // Rounded up, so current reaches target instead of stopping one kb/s short.
  assign rate_sum      = {1'b0, target_up} + {1'b0, rate_q} + 1'b1;
  assign rate_up       = rate_sum[RateW:1];
  logic [EventW-1:0] ev_phase;
  assign ev_phase = ev_fast  ? EventW'(1) << fabricsim_pkg::EvFastRecovery :
                    ev_hyper ? EventW'(1) << fabricsim_pkg::EvHyper : EventW'(1) << fabricsim_pkg::EvAdditive;

  // ---- Byte counter.
  logic [AccW:0]   acc_sum, acc_rem;
  logic            byte_event;
  assign acc_sum    = {1'b0, acc_q} + {{(AccW+1-BytesW){1'b0}}, bytes_q};
  assign byte_event = acc_sum >= {1'b0, cfg_byte_reset_i};
  assign acc_rem    = acc_sum - {1'b0, cfg_byte_reset_i};

  always_comb begin
    busy_d        = busy_q;
    kind_d        = kind_q;
    now_d         = now_q;
    bytes_d       = bytes_q;
    rate_d        = rate_q;
    target_d      = target_q;
    alpha_d       = alpha_q;
    alpha_armed_d = alpha_armed_q;
    alpha_dl_d    = alpha_dl_q;
    inc_armed_d   = inc_armed_q;
    inc_dl_d      = inc_dl_q;
    tcount_d      = tcount_q;
    bcount_d      = bcount_q;
    acc_d         = acc_q;
    last_cut_d    = last_cut_q;
    events_d      = events_q;
    rsp_valid_d   = 1'b0;

    if (accept) begin
      events_d = '0;
      now_d    = req_now_i;
      if (req_kind_i == fabricsim_pkg::ReqInit) begin
        rate_d        = cfg_line_rate_i;
        target_d      = cfg_line_rate_i;
        alpha_d       = cfg_initial_alpha_i;
        alpha_armed_d = (cfg_initial_alpha_i != '0);
        alpha_dl_d    = req_now_i + {{(TimeW-PeriodW){1'b0}}, cfg_alpha_period_i};
        inc_armed_d   = 1'b0;
        inc_dl_d      = '0;
        tcount_d      = '0;
        bcount_d      = '0;
        acc_d         = '0;
        // As if the last cut were one monitor period ago: the first CNP always cuts.
        last_cut_d    = req_now_i - {{(TimeW-PeriodW){1'b0}}, cfg_monitor_period_i};
        rsp_valid_d   = 1'b1;
      end else begin
        busy_d  = 1'b1;
        kind_d  = req_kind_i;
        bytes_d = req_bytes_i;
      end
    end else if (busy_q) begin
      if (alpha_first) begin
        alpha_d       = alpha_down;
        alpha_armed_d = (alpha_down != '0);
        alpha_dl_d    = alpha_dl_q + {{(TimeW-PeriodW){1'b0}}, cfg_alpha_period_i};
        events_d      = events_q | (EventW'(1) << fabricsim_pkg::EvAlphaDecay);
      end else if (inc_due) begin
        tcount_d    = tcount_inc;
        target_d    = target_up;
        rate_d      = rate_up;
        inc_armed_d = (rate_up != cfg_line_rate_i);
        inc_dl_d    = inc_dl_q + {{(TimeW-PeriodW){1'b0}}, cfg_increase_period_i};
        events_d    = events_q | (EventW'(1) << fabricsim_pkg::EvTimer) | ev_phase;
      end else begin
        busy_d      = 1'b0;
        rsp_valid_d = 1'b1;
        unique case (kind_q)
          fabricsim_pkg::ReqCnp: begin
            alpha_d       = alpha_up;
            alpha_armed_d = 1'b1;
            alpha_dl_d    = now_q + {{(TimeW-PeriodW){1'b0}}, cfg_alpha_period_i};
            if (monitor_open) begin
              target_d    = rate_q;
              rate_d      = cut_rate;
              inc_armed_d = (cut_rate != cfg_line_rate_i);
              inc_dl_d    = now_q + {{(TimeW-PeriodW){1'b0}}, cfg_increase_period_i};
              tcount_d    = '0;
              bcount_d    = '0;
              acc_d       = '0;
              last_cut_d  = now_q;
              events_d    = events_q | (EventW'(1) << fabricsim_pkg::EvCut) |
                            (EventW'(dec_clamp) << fabricsim_pkg::EvMinDecClamp) |
                            (EventW'(min_clamp) << fabricsim_pkg::EvMinRateClamp);
            end else begin
              events_d = events_q | (EventW'(1) << fabricsim_pkg::EvCnpSuppress);
            end
          end
          fabricsim_pkg::ReqSent: begin
            if (byte_event) begin
              bcount_d    = bcount_inc;
              target_d    = target_up;
              rate_d      = rate_up;
              inc_armed_d = (rate_up != cfg_line_rate_i);
              // Keep at most one threshold less one byte: one event per request.
              acc_d       = (acc_rem >= {1'b0, cfg_byte_reset_i}) ? cfg_byte_reset_i - 1'b1 : acc_rem[AccW-1:0];
              events_d    = events_q | (EventW'(1) << fabricsim_pkg::EvByte) | ev_phase;
            end else begin
              acc_d = acc_sum[AccW-1:0];
            end
          end
          fabricsim_pkg::ReqAdvance, fabricsim_pkg::ReqInit: ;  // timers only (an init never reaches the busy state)
          default: ;
        endcase
      end
    end
  end

  // Bits that are zero by construction (products bounded by their operands, the dropped round-off of
  // the rate average and the alpha fractions below 2^-AlphaW), listed so the linter knows they are
  // dropped on purpose.
  logic unused_bits;
  assign unused_bits = ^{alpha_kept[AlphaW+10], alpha_kept[9:0], alpha_raised[AlphaW+10], alpha_raised[9:0],
                         cut_amount[RateW+AlphaW-1:RateW], keep_product[RateW+10], keep_product[9:0],
                         rate_sum[0]};

  // The registered deadline output is the earlier of the armed deadlines after this edge.
  logic [TimeW-1:0] inc_minus_alpha_d;
  assign inc_minus_alpha_d = inc_dl_d - alpha_dl_d;
  always_comb begin
    deadline_valid_d = alpha_armed_d | inc_armed_d;
    if (alpha_armed_d && (!inc_armed_d || !inc_minus_alpha_d[TimeW-1])) begin
      deadline_d = alpha_dl_d;
    end else if (inc_armed_d) begin
      deadline_d = inc_dl_d;
    end else begin
      deadline_d = '0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q           <= 1'b0;
      kind_q           <= fabricsim_pkg::ReqAdvance;
      now_q            <= '0;
      bytes_q          <= '0;
      rate_q           <= '0;
      target_q         <= '0;
      alpha_q          <= '0;
      alpha_armed_q    <= 1'b0;
      alpha_dl_q       <= '0;
      inc_armed_q      <= 1'b0;
      inc_dl_q         <= '0;
      tcount_q         <= '0;
      bcount_q         <= '0;
      acc_q            <= '0;
      last_cut_q       <= '0;
      events_q         <= '0;
      deadline_valid_q <= 1'b0;
      deadline_q       <= '0;
      rsp_valid_q      <= 1'b0;
    end else begin
      busy_q           <= busy_d;
      kind_q           <= kind_d;
      now_q            <= now_d;
      bytes_q          <= bytes_d;
      rate_q           <= rate_d;
      target_q         <= target_d;
      alpha_q          <= alpha_d;
      alpha_armed_q    <= alpha_armed_d;
      alpha_dl_q       <= alpha_dl_d;
      inc_armed_q      <= inc_armed_d;
      inc_dl_q         <= inc_dl_d;
      tcount_q         <= tcount_d;
      bcount_q         <= bcount_d;
      acc_q            <= acc_d;
      last_cut_q       <= last_cut_d;
      events_q         <= events_d;
      deadline_valid_q <= deadline_valid_d;
      deadline_q       <= deadline_d;
      rsp_valid_q      <= rsp_valid_d;
    end
  end

  assign rate_o           = rate_q;
  assign target_o         = target_q;
  assign alpha_o          = alpha_q;
  assign deadline_valid_o = deadline_valid_q;
  assign deadline_o       = deadline_q;
  assign timer_count_o    = tcount_q;
  assign byte_count_o     = bcount_q;
  assign events_o         = events_q;
  assign rsp_valid_o      = rsp_valid_q;
  assign busy_o           = busy_q;

  // Parameter legality, checked at elaboration.
  if (!(RateW >= 16 && RateW <= 40)) begin : gen_bad_rate_w
    $error("dcqcn_rp: RateW %0d must be in 16..40", RateW);
  end
  if (!(AlphaW >= 10 && AlphaW <= 24)) begin : gen_bad_alpha_w
    $error("dcqcn_rp: AlphaW %0d must be in 10..24 (alpha knobs are in 1024ths)", AlphaW);
  end
  if (!(TimeW >= 32 && TimeW <= 64)) begin : gen_bad_time_w
    $error("dcqcn_rp: TimeW %0d must be in 32..64", TimeW);
  end
  if (!(PeriodW >= 8 && PeriodW < TimeW)) begin : gen_bad_period_w
    $error("dcqcn_rp: PeriodW %0d must be in 8..TimeW-1", PeriodW);
  end
  if (!(BytesW >= 8 && BytesW <= 24 && AccW > BytesW && AccW <= 40)) begin : gen_bad_bytes_w
    $error("dcqcn_rp: BytesW %0d must be in 8..24 and AccW %0d in BytesW+1..40", BytesW, AccW);
  end
  if (!(CountW >= 6 && CountW <= 16)) begin : gen_bad_count_w
    $error("dcqcn_rp: CountW %0d must be in 6..16", CountW);
  end

`ifndef SYNTHESIS
  logic [TimeW-1:0] req_lag, deadline_lag;
  assign req_lag      = req_now_i - now_q;
  assign deadline_lag = now_q - deadline_o;
  // Configuration is legal whenever an init loads it.
  a_cfg_legal: assert property (@(posedge clk_i) disable iff (!rst_ni)
      (accept && req_kind_i == fabricsim_pkg::ReqInit) |->
      (cfg_cut_shift_i >= 6'(AlphaW) && cfg_cut_shift_i <= 6'(AlphaW + 5) && cfg_min_dec_i <= 11'd1024 &&
       cfg_min_rate_i <= cfg_line_rate_i && cfg_alpha_period_i != '0 && cfg_increase_period_i != '0 &&
       cfg_byte_reset_i != '0 && cfg_threshold_i != '1));
  // Time never goes backwards between requests (an init may restart it).
  a_time_monotonic: assert property (@(posedge clk_i) disable iff (!rst_ni)
      (accept && req_kind_i != fabricsim_pkg::ReqInit) |-> !req_lag[TimeW-1]);
  // The rate never exceeds the target: a cut sets the target to the old rate, an increase moves the rate
  // at most up to the target.
  a_rate_below_target: assert property (@(posedge clk_i) disable iff (!rst_ni)
      rate_o <= target_o);
  // Once a request is done, every armed deadline lies after its time: no due timer is left behind.
  a_no_due_timer_left: assert property (@(posedge clk_i) disable iff (!rst_ni)
      (!busy_o && deadline_valid_o) |-> deadline_lag[TimeW-1]);
  // A response is never given while the block is still working, and every accepted request gets one.
  a_no_response_while_busy: assert property (@(posedge clk_i) disable iff (!rst_ni)
      !(rsp_valid_o && busy_o));
  a_response_follows_request: assert property (@(posedge clk_i) disable iff (!rst_ni)
      accept |=> (busy_o || rsp_valid_o));
`endif

endmodule

`default_nettype wire
