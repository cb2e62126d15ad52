#!/usr/bin/python3
"""The `fabricsim` Python module (docs/python.md): a shipped file, a dict and a shipped name run and come back
as their reports, --set keys take effect, bad keys raise ValueError naming them. Expected values by hand.

Run by ctest with PYTHONPATH at the module; argv[1] is the source tree."""
import os
import sys
import unittest

import fabricsim

SOURCE = sys.argv[1]


def link(report, name):
    return next(p for p in report["ports"] if p["link"] == name)


class PythonApi(unittest.TestCase):
    def test_default_yaml_by_path(self):
        r = fabricsim.run(os.path.join(SOURCE, "testbench", "scenarios", "default.yaml"))
        # default.yaml: three WRITEs, 1 MiB and 1,000,003 bytes h0 -> h1, 64 KiB h1 -> h0, all placed and checked.
        self.assertEqual(r["operations"], 3)
        self.assertEqual(r["completed"], 3)
        self.assertEqual([f["bytes"] for f in r["flows"]], [1048576, 1000003, 65536])
        self.assertEqual([(f["src"], f["dst"]) for f in r["flows"]], [("h0", "h1"), ("h0", "h1"), ("h1", "h0")])
        self.assertTrue(r["verified"])
        self.assertEqual(r["checked_bytes"], 1048576 + 1000003 + 65536)  # every byte of the three
        self.assertEqual(r["scenario"], "default")

    def test_a_dict_and_set(self):
        scenario = {"name": "from_python", "topology": {"kind": "single_switch", "hosts": 2},
                    "nic": {"mtu_bytes": 1024}, "writes": [{"src": "h0", "dst": "h1", "bytes": 8192}]}
        r = fabricsim.run(scenario)
        self.assertEqual(r["scenario"], "from_python")
        self.assertTrue(r["verified"])
        # 8192 bytes at a 1024-byte MTU: 8 data packets leave h0, and nothing else (h0 only sends).
        self.assertEqual(link(r, "h0_to_sw0")["packets"], 8)
        r = fabricsim.run(scenario, set={"nic.mtu_bytes": 4096, "nic.place_data": False})
        self.assertEqual(link(r, "h0_to_sw0")["packets"], 2)  # 8192 / 4096
        self.assertFalse(r["data_checked"])

    def test_a_run_that_checks_nothing_returns_its_report(self):
        # A 4 MiB WRITE needs 84 us of wire time at 400 Gb/s, its first packet 82 ns: a 0.05 us run lands
        # nothing and compares no byte. `fabricsim run` exits 4; the module returns the report, which says so.
        r = fabricsim.run({"topology": {"kind": "single_switch", "hosts": 2}, "run": {"duration_us": 0.05},
                           "writes": [{"src": "h0", "dst": "h1", "bytes": 4194304}]})
        self.assertEqual(r["completed"], 0)
        self.assertEqual(r["checked_bytes"], 0)
        self.assertFalse(r["verified"])
        self.assertEqual(r["placed_bytes"], 0)

    def test_a_shipped_name_and_a_seed(self):
        r = fabricsim.run("default", seed=7)
        self.assertEqual(r["seed"], 7)

    def test_bad_input_raises_value_error_naming_the_key(self):
        with self.assertRaises(ValueError) as e:
            fabricsim.run({"topology": {"kind": "ring"}})
        self.assertIn("<dict>:1: topology.kind", str(e.exception))
        with self.assertRaises(ValueError) as e:
            fabricsim.run("default", set={"nic.mtu_byte": 1})
        self.assertIn("did you mean mtu_bytes", str(e.exception))
        with self.assertRaises(TypeError):
            fabricsim.run(42)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
