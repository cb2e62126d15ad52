// An alternative DCQCN notification point (CNP generator), written for the user-RTL tests from
// docs/rtl_contract.md alone: a different micro-architecture from rtl/cnp_gen.sv.
//
// rtl/cnp_gen.sv keeps {sent, time} per context in a RAM without reset and clears it with a sweep, one entry
// per clock. Here the "sent" flags are flops cleared all at once on reset or init, the times a plain array
// written only on a CNP, and the busy period the contract demands (Flows cycles after a reset or an init) is
// a down-counter, not a sweep. The decision is a function of the context's flag, time and the interval.

`default_nettype none

module cnp_flag_gen #(
  parameter int unsigned Flows     = 64,
  parameter int unsigned TimeWidth = 32
) (
  input  wire logic                 clk_i,
  input  wire logic                 rst_ni,
  input  wire logic                 init_valid_i,
  input  wire logic [TimeWidth-1:0] init_interval_i,
  input  wire logic                 init_per_port_i,
  input  wire logic                 req_valid_i,
  output      logic                 req_ready_o,
  input  wire logic [23:0]          req_flow_i,
  input  wire logic [TimeWidth-1:0] req_now_i,
  output      logic                 rsp_valid_o,
  output      logic                 rsp_emit_o,
  output      logic [23:0]          rsp_flow_o,
  output      logic [31:0]          cnp_count_o,
  output      logic [31:0]          suppressed_count_o,
  output      logic                 busy_o
);

  localparam int unsigned IdxW = $clog2(Flows);

  logic [Flows-1:0]     sent_q;                 // context has sent a CNP since the last reset or init
  logic [TimeWidth-1:0] when_q [Flows];         // time of each context's last CNP (valid where sent_q)
  logic                 port_sent_q;
  logic [TimeWidth-1:0] port_when_q;
  logic                 per_port_q;
  logic [TimeWidth-1:0] interval_q;
  logic [IdxW:0]        wait_q;                 // busy cycles left after a reset or init

  logic [IdxW-1:0] ctx;
  logic            take, fire;

  function automatic logic decide(input logic was_sent, input logic [TimeWidth-1:0] last,
                                  input logic [TimeWidth-1:0] now, input logic [TimeWidth-1:0] interval);
    logic [TimeWidth-1:0] age;
    age = now - last;  // modulo 2^TimeWidth, like the time field
    return !was_sent || age >= interval;
  endfunction

  assign ctx         = req_flow_i[IdxW-1:0];
  assign busy_o      = wait_q != '0;
  assign req_ready_o = rst_ni && !init_valid_i && wait_q == '0;
  assign take        = req_valid_i && req_ready_o;
  assign fire        = per_port_q ? decide(port_sent_q, port_when_q, req_now_i, interval_q)
                                  : decide(sent_q[ctx], when_q[ctx], req_now_i, interval_q);

  // Configuration, flags and the busy counter.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      interval_q  <= '0;
      per_port_q  <= 1'b0;
      sent_q      <= '0;
      port_sent_q <= 1'b0;
      wait_q      <= (IdxW + 1)'(Flows);
    end else if (init_valid_i) begin
      interval_q  <= init_interval_i;
      per_port_q  <= init_per_port_i;
      sent_q      <= '0;
      port_sent_q <= 1'b0;
      wait_q      <= (IdxW + 1)'(Flows);
    end else if (wait_q != '0) begin
      wait_q <= wait_q - 1'b1;
    end else if (take && fire) begin
      if (per_port_q) port_sent_q <= 1'b1;
      else sent_q[ctx] <= 1'b1;
    end
  end

  // Times of the last CNP: no reset needed, they are read only where the flag is set.
  always_ff @(posedge clk_i) begin
    if (take && fire && !per_port_q) when_q[ctx] <= req_now_i;
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) port_when_q <= '0;
    else if (take && fire && per_port_q) port_when_q <= req_now_i;
  end

  // Result and counters.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rsp_valid_o        <= 1'b0;
      rsp_emit_o         <= 1'b0;
      rsp_flow_o         <= '0;
      cnp_count_o        <= '0;
      suppressed_count_o <= '0;
    end else begin
      rsp_valid_o <= take;
      rsp_emit_o  <= take && fire;
      rsp_flow_o  <= take ? req_flow_i : '0;
      if (init_valid_i) begin
        cnp_count_o        <= '0;
        suppressed_count_o <= '0;
      end else if (take && fire) begin
        cnp_count_o <= cnp_count_o + 32'd1;
      end else if (take) begin
        suppressed_count_o <= suppressed_count_o + 32'd1;  // PLANTED-BUG-SITE
      end
    end
  end

endmodule

`default_nettype wire
