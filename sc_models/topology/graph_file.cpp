// Topologies from files: GraphML / Graphviz DOT through Boost.Graph into a fabric_layout, and back out as
// GraphML. Schema: docs/topology.md.
#include "sc_models/topology/graph_file.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/graphml.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <vector>

namespace fabricsim::topology {

namespace {

// Every attribute is read as text so that a missing one is told from a bad one and the message can say which.
struct node_attrs {
  std::string id, type, ports;
};
struct edge_attrs {
  std::string a_port, b_port, gbps, length_m;
};
// undirectedS keeps one global edge list in insertion order, which is file order: edges(g) walks it.
using file_graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, node_attrs, edge_attrs>;

class graph_error_context {
 public:
  explicit graph_error_context(std::string file) : m_file(std::move(file)) {}
  [[noreturn]] void fail(const std::string& what) const { throw core::config_error(m_file + ": " + what); }
  unsigned port(const std::string& text, const std::string& where) const {
    if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
      fail(where + ": '" + text + "' is not a port number (expected a whole number >= 0)");
    return unsigned(std::stoul(text));
  }
  double number(const std::string& text, const std::string& where, double lo, double hi) const {
    double v = 0.0;
    size_t used = 0;
    try {
      v = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || !(v >= lo && v <= hi))
      fail(where + ": '" + text + "' is not a number in [" + fmt(lo) + ", " + fmt(hi) + "]");
    return v;
  }
  static std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }

 private:
  std::string m_file;
};

// Boost's GraphML reader keeps node ids to itself; it adds the vertices in <node> order, so the ids are read
// here in the same order from the same XML.
void name_graphml_nodes(const std::string& text, const std::string& name, file_graph& g) {
  namespace pt = boost::property_tree;
  pt::ptree tree;
  std::istringstream in(text);
  try {
    pt::read_xml(in, tree);
  } catch (const std::exception& e) {
    throw core::config_error(name + ": not a readable GraphML file (" + e.what() + ")");
  }
  std::vector<std::string> ids;
  for (const auto& top : tree.get_child("graphml"))
    if (top.first == "graph")
      for (const auto& child : top.second)
        if (child.first == "node") ids.push_back(child.second.get<std::string>("<xmlattr>.id", ""));
  if (ids.size() != boost::num_vertices(g))
    throw core::config_error(name + ": " + std::to_string(boost::num_vertices(g)) + " nodes, of which " +
                             std::to_string(ids.size()) + " are <node> elements of the top <graph> (nested " +
                             "graphs and nodes only named by an edge are not supported)");
  for (size_t v = 0; v < ids.size(); ++v) g[v].id = ids[v];
}

file_graph parse(const std::string& text, const std::string& name, bool dot) {
  file_graph g;
  boost::dynamic_properties dp(boost::ignore_other_properties);
  if (dot) dp.property("node_id", boost::get(&node_attrs::id, g));
  dp.property("type", boost::get(&node_attrs::type, g));
  dp.property("ports", boost::get(&node_attrs::ports, g));
  dp.property("a_port", boost::get(&edge_attrs::a_port, g));
  dp.property("b_port", boost::get(&edge_attrs::b_port, g));
  dp.property("gbps", boost::get(&edge_attrs::gbps, g));
  dp.property("length_m", boost::get(&edge_attrs::length_m, g));
  std::istringstream in(text);
  try {
    if (dot)
      boost::read_graphviz(in, g, dp, "node_id");
    else
      boost::read_graphml(in, g, dp, 0);
  } catch (const std::exception& e) {
    throw core::config_error(name + ": not a readable " + (dot ? "Graphviz DOT" : "GraphML") + " file (" + e.what() +
                             "); the schema is in docs/topology.md");
  }
  if (!dot) name_graphml_nodes(text, name, g);
  return g;
}

// Which node is which device: hosts by their h<i> name, switches in file order after them.
struct device_map {
  std::vector<size_t> device;  // [vertex]
  size_t hosts = 0;
};

device_map number_devices(const file_graph& g, const graph_error_context& ctx, fabric_layout& l) {
  device_map m;
  const size_t nv = boost::num_vertices(g);
  m.device.assign(nv, 0);
  for (size_t v = 0; v < nv; ++v) {
    const node_attrs& n = g[v];
    if (n.type == "host")
      ++m.hosts;
    else if (n.type != "switch")
      ctx.fail("node '" + n.id + "': type '" + n.type + "' is not a known node type (expected switch or host)");
  }
  if (m.hosts == 0) ctx.fail("no node has type host (expected hosts h0 .. h(N-1))");
  if (m.hosts > k_max_hosts)
    ctx.fail(std::to_string(m.hosts) + " hosts, above the limit of " + std::to_string(k_max_hosts));
  std::vector<bool> seen(m.hosts, false);
  for (size_t v = 0; v < nv; ++v) {
    const node_attrs& n = g[v];
    if (n.type == "host") {
      const auto idx = host_index(n.id, m.hosts);
      if (!idx || seen[*idx])
        ctx.fail("node '" + n.id + "': a host must be named h0 .. h" + std::to_string(m.hosts - 1) +
                 ", each once (the file has " + std::to_string(m.hosts) + " hosts)");
      seen[*idx] = true;
      m.device[v] = *idx;
      continue;
    }
    const std::string where = "node '" + n.id + "' (switch) attribute ports";
    if (n.ports.empty()) ctx.fail("node '" + n.id + "': a switch needs a ports attribute (its port count)");
    const unsigned ports = ctx.port(n.ports, where);
    if (ports == 0 || ports > k_max_switch_ports)
      ctx.fail(where + ": " + n.ports + " is out of range [1, " + std::to_string(k_max_switch_ports) + "]");
    m.device[v] = m.hosts + l.switches.size();
    l.switches.push_back({n.id, ports});
  }
  if (l.switches.empty()) ctx.fail("no node has type switch");
  if (l.switches.size() > k_max_switches)
    ctx.fail(std::to_string(l.switches.size()) + " switches, above the limit of " + std::to_string(k_max_switches));
  return m;
}

// Every host must reach every other: one connected component holds them all.
void check_hosts_connected(const file_graph& g, const device_map& m, size_t hosts, const graph_error_context& ctx) {
  std::vector<int> component(boost::num_vertices(g));
  boost::connected_components(g, component.data());
  std::vector<size_t> host_vertex(hosts);
  for (size_t v = 0; v < component.size(); ++v)
    if (m.device[v] < hosts && g[v].type == "host") host_vertex[m.device[v]] = v;
  for (size_t h = 1; h < hosts; ++h)
    if (component[host_vertex[h]] != component[host_vertex[0]])
      ctx.fail("no path between hosts h0 and " + host_name(h) + " (every pair of hosts needs one)");
}

}  // namespace

fabric_layout parse_graph_layout(const std::string& text, const std::string& name, bool dot,
                                 const topology_params& topo, const cable_params& cable,
                                 const port_speed_limit& limit) {
  const graph_error_context ctx(name);
  const file_graph g = parse(text, name, dot);
  fabric_layout l;
  const device_map m = number_devices(g, ctx, l);
  l.hosts = m.hosts;
  l.host_leaf.assign(m.hosts, SIZE_MAX);
  l.host_port.assign(m.hosts, 0);

  // Ports named in the file are taken first, so that a cable without one gets the lowest port still free.
  std::vector<std::vector<std::string>> used(l.switches.size());  // [switch][port]: the edge using it
  for (size_t s = 0; s < l.switches.size(); ++s) used[s].resize(l.switches[s].ports);
  struct end {
    size_t device;
    std::string port;
  };
  auto edge_name = [&](size_t u, size_t v) { return "edge " + g[u].id + " -- " + g[v].id; };
  auto claim = [&](size_t device, unsigned port, const std::string& edge) {
    const auto& sw = l.switches[device - l.hosts];
    if (port >= sw.ports)
      ctx.fail(edge + ": port " + std::to_string(port) + " is beyond switch " + sw.name + "'s " +
               std::to_string(sw.ports) + " ports (0 .. " + std::to_string(sw.ports - 1) + ")");
    std::string& owner = used[device - l.hosts][port];
    if (!owner.empty())
      ctx.fail(edge + ": port " + std::to_string(port) + " of switch " + sw.name + " is already used by " + owner);
    owner = edge;
  };
  std::vector<std::pair<end, end>> ends;
  for (auto [it, last] = boost::edges(g); it != last; ++it) {
    size_t u = boost::source(*it, g), v = boost::target(*it, g);
    const edge_attrs& e = g[*it];
    end a{m.device[u], e.a_port}, b{m.device[v], e.b_port};
    const std::string edge = edge_name(u, v);
    if (a.device < l.hosts && b.device < l.hosts)
      ctx.fail(edge + ": a cable joins two hosts (a host cables to a switch)");
    if (u == v) ctx.fail(edge + ": a cable from a switch to itself");
    if (b.device < l.hosts) std::swap(a, b);  // a host is always end a, as the builders wire it
    if (a.device < l.hosts) {
      if (!a.port.empty() && a.port != "0") ctx.fail(edge + ": host port '" + a.port + "' (a host has only port 0)");
      if (l.host_leaf[a.device] != SIZE_MAX)
        ctx.fail(edge + ": host " + host_name(a.device) + " is already cabled to " +
                 l.switches[l.host_leaf[a.device]].name + " (a host has one port, on one switch)");
      l.host_leaf[a.device] = b.device - l.hosts;
      a.port = "0";
    }
    for (const end* x : {&a, &b})
      if (x->device >= l.hosts && !x->port.empty()) claim(x->device, ctx.port(x->port, edge + " port"), edge);
    ends.push_back({a, b});
  }
  for (size_t h = 0; h < l.hosts; ++h)
    if (l.host_leaf[h] == SIZE_MAX) ctx.fail("node '" + host_name(h) + "': a host with no cable");

  check_hosts_connected(g, m, l.hosts, ctx);

  std::map<std::pair<size_t, size_t>, size_t> parallel;  // cables per pair of devices, for the _k suffixes
  for (const auto& [a, b] : ends) ++parallel[{std::min(a.device, b.device), std::max(a.device, b.device)}];
  std::map<std::pair<size_t, size_t>, size_t> nth;
  size_t k = 0;
  for (auto [it, last] = boost::edges(g); it != last; ++it, ++k) {
    auto [a, b] = ends[k];
    const std::string edge = edge_name(boost::source(*it, g), boost::target(*it, g));
    auto pick = [&](end& x) {
      if (x.device < l.hosts || !x.port.empty()) return unsigned(std::stoul(x.port));
      auto& ports = used[x.device - l.hosts];
      for (unsigned p = 0; p < ports.size(); ++p)
        if (ports[p].empty()) {
          ports[p] = edge;
          return p;
        }
      ctx.fail(edge + ": switch " + l.switches[x.device - l.hosts].name + " has no free port left (all " +
               std::to_string(ports.size()) + " are cabled)");
    };
    const unsigned a_port = pick(a), b_port = pick(b);
    const bool host_cable = a.device < l.hosts;
    if (host_cable) l.host_port[a.device] = b_port;
    const edge_attrs& e = g[*it];
    core::link_params lp;
    lp.fec_latency_ns = cable.fec_latency_ns;
    lp.drop_probability = cable.drop_probability;
    lp.rate_gbps = e.gbps.empty() ? topo.link_gbps : ctx.number(e.gbps, edge + " gbps", 1.0, 3200.0);
    if (limit.gbps > 0.0 && lp.rate_gbps > limit.gbps) {
      const size_t sw = host_cable ? b.device : a.device;  // a switch end: b, or both when a is no host
      ctx.fail(edge + ": " + graph_error_context::fmt(lp.rate_gbps) + " Gb/s" +
               (e.gbps.empty() ? " (topology.link_gbps; the edge has no gbps)" : "") + " at switch " +
               l.switches[sw - l.hosts].name + ", faster than the " + graph_error_context::fmt(limit.gbps) +
               " Gb/s ports of " + limit.setting + (limit.remedy ? "; " + limit.remedy(lp.rate_gbps) : ""));
    }
    const double metres = e.length_m.empty() ? (host_cable ? topo.host_cable_m : topo.leaf_spine_cable_m)
                                             : ctx.number(e.length_m, edge + " length_m", 0.0, 100000.0);
    lp.propagation_ns = metres * cable.ns_per_metre;
    const auto pair = std::make_pair(std::min(a.device, b.device), std::max(a.device, b.device));
    const std::string suffix = parallel[pair] > 1 ? "_" + std::to_string(nth[pair]++) : "";
    l.cables.push_back({a.device, b.device, a_port, b_port, suffix, lp, lp});
  }
  return l;
}

fabric_layout read_graph_layout(const std::string& path, const topology_params& topo, const cable_params& cable,
                                const port_speed_limit& limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::config_error(path + ": cannot open the topology file");
  std::ostringstream text;
  text << in.rdbuf();
  const auto ends_with = [&](const char* ext) {
    const std::string e(ext);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  const bool dot = ends_with(".dot") || ends_with(".gv");
  if (!dot && !ends_with(".graphml"))
    throw core::config_error(path + ": a topology file ends in .graphml, .dot or .gv");
  return parse_graph_layout(text.str(), path, dot, topo, cable, limit);
}

void write_graphml(const fabric_layout& l, const cable_params& cable, std::ostream& out) {
  auto num = [](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
         "  <key id=\"type\" for=\"node\" attr.name=\"type\" attr.type=\"string\"/>\n"
         "  <key id=\"ports\" for=\"node\" attr.name=\"ports\" attr.type=\"string\"/>\n"
         "  <key id=\"a_port\" for=\"edge\" attr.name=\"a_port\" attr.type=\"string\"/>\n"
         "  <key id=\"b_port\" for=\"edge\" attr.name=\"b_port\" attr.type=\"string\"/>\n"
         "  <key id=\"gbps\" for=\"edge\" attr.name=\"gbps\" attr.type=\"string\"/>\n"
         "  <key id=\"length_m\" for=\"edge\" attr.name=\"length_m\" attr.type=\"string\"/>\n"
         "  <graph id=\"fabric\" edgedefault=\"undirected\">\n";
  for (size_t h = 0; h < l.hosts; ++h)
    out << "    <node id=\"" << host_name(h) << "\"><data key=\"type\">host</data></node>\n";
  for (const auto& s : l.switches)
    out << "    <node id=\"" << s.name << "\"><data key=\"type\">switch</data><data key=\"ports\">" << s.ports
        << "</data></node>\n";
  for (const auto& c : l.cables) {
    // Lengths are what the file describes; a link with no propagation per metre has none to recover.
    const double metres = cable.ns_per_metre > 0.0 ? c.ab.propagation_ns / cable.ns_per_metre : 0.0;
    out << "    <edge source=\"" << l.device_name(c.a) << "\" target=\"" << l.device_name(c.b) << "\">"
        << "<data key=\"a_port\">" << c.a_port << "</data><data key=\"b_port\">" << c.b_port << "</data>"
        << "<data key=\"gbps\">" << num(c.ab.rate_gbps) << "</data><data key=\"length_m\">" << num(metres)
        << "</data></edge>\n";
  }
  out << "  </graph>\n</graphml>\n";
}

}  // namespace fabricsim::topology
