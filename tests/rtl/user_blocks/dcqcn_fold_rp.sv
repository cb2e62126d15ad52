// An alternative DCQCN reaction point, written for the user-RTL tests from docs/rtl_contract.md and the
// algorithm of sc_models/nic/dcqcn_rp.h alone: a different micro-architecture from rtl/dcqcn_rp.sv.
//
// rtl/dcqcn_rp.sv computes every candidate next value in parallel continuous assignments and picks among
// them in one big always_comb, with the deadline output registered. Here the flow is one packed struct and
// each step of the algorithm (alpha decay, an increase event, a cut, the byte counter) is a function from
// struct to struct; a two-state machine applies one function per clock, and the deadline output is a
// function of the registered struct. Fixed widths: the contract's (RateW 32, AlphaW 16, TimeW 64, PeriodW 32,
// BytesW 16, AccW 32, CountW 8).
//
// The tests plant a bug by rewriting the line marked PLANTED-BUG-SITE.

`default_nettype none

module dcqcn_fold_rp (
  input  wire logic        clk_i,
  input  wire logic        rst_ni,
  input  wire logic [31:0] cfg_line_rate_i,
  input  wire logic [31:0] cfg_min_rate_i,
  input  wire logic [31:0] cfg_ai_rate_i,
  input  wire logic [31:0] cfg_hai_rate_i,
  input  wire logic [10:0] cfg_min_dec_i,
  input  wire logic [5:0]  cfg_cut_shift_i,
  input  wire logic [9:0]  cfg_alpha_keep_i,
  input  wire logic [15:0] cfg_initial_alpha_i,
  input  wire logic [7:0]  cfg_threshold_i,
  input  wire logic [31:0] cfg_byte_reset_i,
  input  wire logic [31:0] cfg_alpha_period_i,
  input  wire logic [31:0] cfg_increase_period_i,
  input  wire logic [31:0] cfg_monitor_period_i,
  input  wire logic        req_valid_i,
  output      logic        req_ready_o,
  input  wire logic [1:0]  req_kind_i,
  input  wire logic [63:0] req_now_i,
  input  wire logic [15:0] req_bytes_i,
  output      logic [31:0] rate_o,
  output      logic [31:0] target_o,
  output      logic [15:0] alpha_o,
  output      logic        deadline_valid_o,
  output      logic [63:0] deadline_o,
  output      logic [7:0]  timer_count_o,
  output      logic [7:0]  byte_count_o,
  output      logic [9:0]  events_o,
  output      logic        rsp_valid_o,
  output      logic        busy_o
);

  localparam logic [1:0] KAdvance = 2'd0, KCnp = 2'd1, KSent = 2'd2, KInit = 2'd3;
  // Event bits (fabricsim_pkg::dcqcn_event_e, restated).
  localparam int unsigned ECut = 0, ESupp = 1, EDecay = 2, ETimer = 3, EByte = 4, EFast = 5, EAdd = 6,
                          EHyper = 7, EDecClamp = 8, EMinClamp = 9;

  typedef struct packed {
    logic [31:0] rate;
    logic [31:0] target;
    logic [15:0] alpha;
    logic        alpha_on;
    logic [63:0] alpha_at;
    logic        inc_on;
    logic [63:0] inc_at;
    logic [7:0]  timers;
    logic [7:0]  bytes;
    logic [31:0] acc;
    logic [63:0] last_cut;
    logic [9:0]  events;
  } flow_t;

  flow_t       st;
  logic        working;  // a request is latched and being applied
  logic [1:0]  kind;
  logic [63:0] now;
  logic [15:0] nbytes;
  logic        done;     // rsp_valid_o

  // a is at or before b, modulo 2^64.
  function automatic logic not_after(input logic [63:0] a, input logic [63:0] b);
    logic [63:0] diff;
    diff = b - a;
    return !diff[63];
  endfunction

  function automatic logic [7:0] bump(input logic [7:0] c);
    return c == 8'hff ? c : c + 8'd1;
  endfunction

  // An increase event from the counts as they are after the increment.
  function automatic flow_t increase(input flow_t f);
    flow_t       g;
    logic [7:0]  hi, lo;
    logic [32:0] raised;
    logic [32:0] avg;
    g  = f;
    hi = f.timers > f.bytes ? f.timers : f.bytes;
    lo = f.timers > f.bytes ? f.bytes : f.timers;
    if (hi <= cfg_threshold_i) begin
      g.events[EFast] = 1'b1;
    end else begin
      raised = {1'b0, f.target} + {1'b0, lo > cfg_threshold_i ? cfg_hai_rate_i : cfg_ai_rate_i};
      g.target = raised > {1'b0, cfg_line_rate_i} ? cfg_line_rate_i : raised[31:0];
      if (lo > cfg_threshold_i) g.events[EHyper] = 1'b1;
      else g.events[EAdd] = 1'b1;
    end
    avg    = ({1'b0, g.target} + {1'b0, f.rate} + 33'd1) >> 1;  // PLANTED-BUG-SITE (rounded up)
    g.rate = avg[31:0];
    g.inc_on = g.rate != cfg_line_rate_i;
    return g;
  endfunction

  function automatic flow_t decay(input flow_t f);
    flow_t       g;
    logic [25:0] kept;
    g              = f;
    kept           = f.alpha * cfg_alpha_keep_i;
    g.alpha        = kept[25:10];
    g.alpha_on     = kept[25:10] != 16'd0;
    g.alpha_at     = f.alpha_at + {32'd0, cfg_alpha_period_i};
    g.events[EDecay] = 1'b1;
    return g;
  endfunction

  function automatic flow_t timer(input flow_t f);
    flow_t g;
    g               = f;
    g.timers        = bump(f.timers);
    g.events[ETimer] = 1'b1;
    g               = increase(g);
    g.inc_at        = f.inc_at + {32'd0, cfg_increase_period_i};
    return g;
  endfunction

  function automatic flow_t cnp(input flow_t f, input logic [63:0] t);
    flow_t       g;
    logic [47:0] cut;
    logic [42:0] keep;
    logic [31:0] r;
    logic [63:0] since;
    logic [26:0] raised;
    g     = f;
    since = t - f.last_cut;
    if (since >= {32'd0, cfg_monitor_period_i}) begin
      cut  = (f.rate * f.alpha) >> cfg_cut_shift_i;
      r    = f.rate - cut[31:0];
      keep = f.rate * cfg_min_dec_i;
      if (r < keep[41:10]) begin
        r = keep[41:10];
        g.events[EDecClamp] = 1'b1;
      end
      if (r < cfg_min_rate_i) begin
        r = cfg_min_rate_i;
        g.events[EMinClamp] = 1'b1;
      end
      g.target   = f.rate;
      g.rate     = r;
      g.timers   = 8'd0;
      g.bytes    = 8'd0;
      g.acc      = 32'd0;
      g.inc_on   = r != cfg_line_rate_i;
      g.inc_at   = t + {32'd0, cfg_increase_period_i};
      g.last_cut = t;
      g.events[ECut] = 1'b1;
    end else begin
      g.events[ESupp] = 1'b1;
    end
    raised     = f.alpha * cfg_alpha_keep_i + ((27'd1024 - {17'd0, cfg_alpha_keep_i}) << 16);
    g.alpha    = raised[25:10];
    g.alpha_on = 1'b1;
    g.alpha_at = t + {32'd0, cfg_alpha_period_i};
    return g;
  endfunction

  function automatic flow_t sent(input flow_t f, input logic [15:0] n);
    flow_t       g;
    logic [32:0] total, rest;
    g     = f;
    total = {1'b0, f.acc} + {17'd0, n};
    if (total >= {1'b0, cfg_byte_reset_i}) begin
      g.bytes = bump(f.bytes);
      g.events[EByte] = 1'b1;
      g = increase(g);
      rest = total - {1'b0, cfg_byte_reset_i};
      g.acc = rest >= {1'b0, cfg_byte_reset_i} ? cfg_byte_reset_i - 32'd1 : rest[31:0];
    end else begin
      g.acc = total[31:0];
    end
    return g;
  endfunction

  function automatic flow_t fresh(input logic [63:0] t);
    flow_t g;
    g          = '0;
    g.rate     = cfg_line_rate_i;
    g.target   = cfg_line_rate_i;
    g.alpha    = cfg_initial_alpha_i;
    g.alpha_on = cfg_initial_alpha_i != 16'd0;
    g.alpha_at = t + {32'd0, cfg_alpha_period_i};
    g.last_cut = t - {32'd0, cfg_monitor_period_i};
    return g;
  endfunction

  logic alpha_due, inc_due;
  assign alpha_due = st.alpha_on && not_after(st.alpha_at, now);
  assign inc_due   = st.inc_on && not_after(st.inc_at, now);

  assign req_ready_o = rst_ni && !working;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st      <= '0;
      working <= 1'b0;
      kind    <= KAdvance;
      now     <= '0;
      nbytes  <= '0;
      done    <= 1'b0;
    end else if (!working) begin
      done <= 1'b0;
      if (req_valid_i) begin
        if (req_kind_i == KInit) begin
          st   <= fresh(req_now_i);
          now  <= req_now_i;
          done <= 1'b1;
        end else begin
          st.events <= '0;
          working   <= 1'b1;
          kind      <= req_kind_i;
          now       <= req_now_i;
          nbytes    <= req_bytes_i;
        end
      end
    end else if (alpha_due && (!inc_due || not_after(st.alpha_at, st.inc_at))) begin
      st <= decay(st);
    end else if (inc_due) begin
      st <= timer(st);
    end else begin
      working <= 1'b0;
      done    <= 1'b1;
      case (kind)
        KCnp:    st <= cnp(st, now);
        KSent:   st <= sent(st, nbytes);
        default: ;
      endcase
    end
  end

  assign rate_o           = st.rate;
  assign target_o         = st.target;
  assign alpha_o          = st.alpha;
  assign timer_count_o    = st.timers;
  assign byte_count_o     = st.bytes;
  assign events_o         = st.events;
  assign rsp_valid_o      = done;
  assign busy_o           = working;
  assign deadline_valid_o = st.alpha_on || st.inc_on;
  assign deadline_o       = st.alpha_on && (!st.inc_on || not_after(st.alpha_at, st.inc_at)) ? st.alpha_at :
                            st.inc_on ? st.inc_at : 64'd0;

endmodule

`default_nettype wire
