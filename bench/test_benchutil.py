"""Tests of the benchmark drivers' goal helpers (bench/benchutil.py): the exit status, the messages and the
recorded goal, and that every driver with a goal parses its command line. The standard library only: no torch,
no built programs.

  /usr/bin/python3 -m unittest bench/test_benchutil.py        (from the repository's root)
"""
import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import unittest

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import benchutil  # noqa: E402

# The drivers that check a goal; each must take --no-goal.
GOAL_DRIVERS = ["cora_vs_torch.py", "layers_vs_pyg.py", "node_models_vs_pyg.py", "gin_vs_torch.py",
                "schnet_vs_torch.py", "graphormer_vs_torch.py", "dmpnn_vs_chemprop.py", "node_loaders.py",
                "compare_builds.py", "gemm_vs_openblas.py"]


def run_finish(problems, no_goal=False, applies=True, show=None, out=None):
    """Calls benchutil.finish; returns (exit status, stdout, stderr, out)."""
    out = {"benchmark": "test", "speedup": 2.0} if out is None else out
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            benchutil.finish(out, list(problems), "test_driver", no_goal, {"target_speedup": 3.0}, applies=applies,
                             show=show)
        except SystemExit as e:
            code = e.code
        else:
            raise AssertionError("finish() returned instead of exiting")
    return code, stdout.getvalue(), stderr.getvalue(), out


class Finish(unittest.TestCase):
    def test_met_exits_0_and_prints_the_json(self):
        code, stdout, stderr, _ = run_finish([])
        self.assertEqual(code, 0)
        printed = json.loads(stdout)
        self.assertEqual(printed["speedup"], 2.0)
        self.assertEqual(printed["goal"], {"target_speedup": 3.0, "passed": True, "checked": True})
        self.assertNotIn("goal missed", stderr)

    def test_missed_exits_1_with_each_miss_on_stderr(self):
        code, stdout, stderr, _ = run_finish(["speed: 2.00x, the target is 3x", "accuracy: low"])
        self.assertEqual(code, 1)
        self.assertEqual(json.loads(stdout)["goal"], {"target_speedup": 3.0, "passed": False, "checked": True})
        self.assertIn("test_driver: goal missed: speed: 2.00x, the target is 3x\n", stderr)
        self.assertIn("test_driver: goal missed: accuracy: low\n", stderr)

    def test_missed_with_no_goal_exits_0_and_records_the_miss(self):
        code, stdout, stderr, _ = run_finish(["speed: 2.00x, the target is 3x"], no_goal=True)
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(stdout)["goal"], {"target_speedup": 3.0, "passed": False, "checked": False})
        self.assertIn("test_driver: goal missed: speed: 2.00x, the target is 3x", stderr)

    def test_met_with_no_goal_exits_0(self):
        code, stdout, _, _ = run_finish([], no_goal=True)
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(stdout)["goal"]["passed"], True)
        self.assertEqual(json.loads(stdout)["goal"]["checked"], False)

    def test_a_goal_that_does_not_apply_is_recorded_unchecked(self):
        code, stdout, _, _ = run_finish([], applies=False)
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(stdout)["goal"],
                         {"target_speedup": 3.0, "passed": None, "checked": False, "applies": False})

    def test_show_replaces_the_json(self):
        code, stdout, _, out = run_finish(["x"], show=lambda o: print("| a table |"))
        self.assertEqual(code, 1)
        self.assertEqual(stdout, "| a table |\n")
        self.assertEqual(out["goal"]["passed"], False)

    def test_a_miss_on_a_busy_machine_says_so(self):
        _, _, stderr, _ = run_finish(["x"], out={"machine": {"busy": True}})
        self.assertIn("the machine was busy", stderr)


class GoalArgs(unittest.TestCase):
    def parser(self):
        p = argparse.ArgumentParser(prog="test_driver")
        benchutil.add_goal_args(p, 5.0, "required speedup")
        self.assertEqual(benchutil.add_goal_args(p, 2.0, "required inference speedup", flag="--infer-target"),
                         "infer_target")
        return p

    def test_defaults(self):
        a = self.parser().parse_args([])
        self.assertEqual((a.target, a.infer_target, a.no_goal), (5.0, 2.0, False))

    def test_given(self):
        a = self.parser().parse_args(["--target", "2.5", "--infer-target", "1.5", "--no-goal"])
        self.assertEqual((a.target, a.infer_target, a.no_goal), (2.5, 1.5, True))

    def test_a_target_not_above_0_is_a_command_line_error(self):
        for bad in ("0", "-1", "fast"):
            with contextlib.redirect_stderr(io.StringIO()) as stderr, self.assertRaises(SystemExit) as e:
                self.parser().parse_args(["--target", bad])
            self.assertEqual(e.exception.code, 2)
            self.assertIn("--target", stderr.getvalue())

    def test_check_at_least(self):
        out = {"a": 2.0, "b": 0.5}
        self.assertEqual(benchutil.check_at_least(out, {"a": 1.5, "b": 0.5}), [])
        self.assertEqual(benchutil.check_at_least(out, {"a": 2.5, "b": 0.4}), ["a 2x, the target is 2.5x"])


class RunMain(unittest.TestCase):
    def test_an_unhandled_error_exits_2(self):
        def broken():
            raise KeyError("epoch_ms_median")
        with contextlib.redirect_stderr(io.StringIO()) as stderr, self.assertRaises(SystemExit) as e:
            benchutil.run_main(broken)
        self.assertEqual(e.exception.code, 2)
        self.assertIn("KeyError: 'epoch_ms_median'", stderr.getvalue())

    def test_an_exit_status_passes_through(self):
        def missed():
            sys.exit(1)
        with self.assertRaises(SystemExit) as e:
            benchutil.run_main(missed)
        self.assertEqual(e.exception.code, 1)


class Drivers(unittest.TestCase):
    def test_every_goal_driver_parses_and_documents_its_goal(self):
        for name in GOAL_DRIVERS:
            with self.subTest(driver=name):
                proc = subprocess.run([sys.executable, os.path.join(BENCH, name), "--help"], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, timeout=60)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertIn("--no-goal", proc.stdout)
                self.assertIn("--target", proc.stdout)
                doc = " ".join(proc.stdout.split())
                self.assertIn("goal", doc)
                self.assertRegex(doc, r"Exit status 0 when .*1 when .*2 when")


if __name__ == "__main__":
    unittest.main()
