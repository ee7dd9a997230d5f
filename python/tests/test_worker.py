"""Unit tests of dprepro.worker (python -m unittest discover -s tests).

The byte-level replies are those docs/worker-protocol.md specifies and the
harness parses (methods/external); examples/python-method's Go tests replay
the protocol's documented session against a real worker.
"""

import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np

from dprepro import worker
from dprepro.worker import Call, Method, Param, approx, pure, subsampled_gaussian, zcdp


def session(method, *requests, hello=None):
    """Serve method on the given requests (dicts), returning the reply lines."""
    hello = hello or {"type": "hello", "protocol": 1, "method": "m", "serves": method.serves}
    lines = [json.dumps(hello)] + [json.dumps(r) for r in requests]
    out = io.StringIO()
    method.serve(stdin=io.StringIO("\n".join(lines) + "\n"), stdout=out, log=io.StringIO())
    return out.getvalue().splitlines()


class ParamTest(unittest.TestCase):
    def test_types_and_defaults(self):
        self.assertEqual(Param("steps", int, 50.0).declaration(), {"name": "steps", "type": "int", "default": 50})
        self.assertEqual(Param("clip", "float", 1, "norm").declaration(),
                         {"name": "clip", "type": "float", "default": 1.0, "doc": "norm"})
        self.assertIs(type(Param("clip", float, 1).default), float)
        self.assertEqual(Param("on", bool, True).type, "bool")
        self.assertEqual(Param("kind", str, "a").type, "string")

    def test_refused(self):
        for args, want in [
            (("1steps", "int", 1), "parameter name '1steps'"),
            (("a" * 33, "int", 1), "at most 32"),
            (("steps", "integer", 1), "type 'integer' is not one of"),
            (("steps", "int", 2.5), "default 2.5 is not a int"),
            (("steps", "int", True), "default True is not a int"),
            (("clip", "float", True), "default True is not a float"),
            (("clip", "float", "1"), "default '1' is not a float"),
            (("on", "bool", 1), "default 1 is not a bool"),
            (("s", "string", 3), "default 3 is not a string"),
        ]:
            with self.assertRaises(ValueError) as cm:
                Param(*args)
            self.assertIn(want, str(cm.exception))

    def test_convert(self):
        self.assertEqual(worker.convert("int", 3.0), 3)
        self.assertIs(type(worker.convert("int", 3.0)), int)
        self.assertIs(type(worker.convert("float", 3)), float)
        for t, v in [("int", 2.5), ("int", False), ("float", None), ("bool", 1), ("string", 1)]:
            with self.assertRaises(ValueError):
                worker.convert(t, v)


class MethodTest(unittest.TestCase):
    def test_declaration_refused(self):
        for kw, want in [
            (dict(serves="learnr", privacy="pure"), "serves 'learnr'"),
            (dict(serves="learner", privacy="dp"), "privacy 'dp'"),
            (dict(serves="ci", privacy="pure", diagnostics=["x"]), "learners only"),
            (dict(serves="learner", privacy="pure", diagnostics=["Iter"]), "diagnostic 'Iter'"),
            (dict(serves="learner", privacy="pure", diagnostics=["a", "a"]), "declared twice"),
            (dict(serves="learner", privacy="pure", diagnostics=["d%d" % i for i in range(17)]), "at most 16"),
            (dict(serves="learner", privacy="pure", params=[("a", "int", 1), ("a", "int", 2)]), "parameter a declared twice"),
        ]:
            with self.assertRaises(ValueError) as cm:
                Method(**kw)
            self.assertIn(want, str(cm.exception))

    def test_hello(self):
        m = Method("learner", "approx", version="v 1", diagnostics=["clip_fraction"],
                   params=[("steps", "int", 50, "gradient steps"), {"name": "clip", "type": "float", "default": 1.0}])
        m.op("fit", lambda c: ({}, None))
        m.op("stability", lambda c: ({}, None))
        self.assertEqual(json.dumps(m.hello()),
                         '{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "approx", "version": "v 1", '
                         '"attributes": {"stability": true, "diagnostics": ["clip_fraction"], "params": ['
                         '{"name": "steps", "type": "int", "default": 50, "doc": "gradient steps"}, '
                         '{"name": "clip", "type": "float", "default": 1.0}]}}')
        # No version, no attributes: neither key is sent.
        self.assertEqual(Method("hypothesis", "pure").hello(),
                         {"type": "hello", "protocol": 1, "serves": "hypothesis", "privacy": "pure"})
        # A ci method's attributes go out as given; stability is a learner's op.
        ci = Method("ci", "zcdp", attributes={"model": "lr", "spends": ["eps1"]})
        ci.op("stability", lambda c: ({}, None))
        self.assertEqual(ci.hello()["attributes"], {"model": "lr", "spends": ["eps1"]})

    def test_claims(self):
        self.assertEqual(pure(np.float64(0.5)), {"epsilon": 0.5})
        self.assertIs(type(pure(np.float64(0.5))["epsilon"]), float)
        self.assertEqual(approx(1, 1e-5), {"epsilon": 1.0, "delta": 1e-5})
        self.assertEqual(zcdp(0.125), {"rho": 0.125})
        mech = {"name": "subsampled-gaussian", "noise_multiplier": 1.1, "sampling_rate": 0.01, "steps": 100}
        self.assertEqual(subsampled_gaussian(1.1, 0.01, np.int64(100)), {"mechanism": mech})
        self.assertIs(type(subsampled_gaussian(1.1, 0.01, np.int64(100))["mechanism"]["steps"]), int)
        self.assertEqual(subsampled_gaussian(1.1, 0.01, 100, epsilon=np.float64(2), delta=1e-5),
                         {"mechanism": mech, "epsilon": 2.0, "delta": 1e-5})


class CallTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.x = os.path.join(self.dir.name, "x.npy")
        self.y = os.path.join(self.dir.name, "y.npy")
        np.save(self.x, np.array([[0.5, 0.5], [-0.5, 0.5], [0.6, 0.1]]))
        np.save(self.y, np.array([1.0, -1.0, 1.0]))

    def tearDown(self):
        self.dir.cleanup()

    def test_data_rng_weights(self):
        c = Call("fit", {"lambda": 1}, seed=42, data={"x": self.x, "y": self.y}, weights=[0, 2, 1])
        self.assertEqual(c.x.shape, (3, 2))
        np.testing.assert_array_equal(c.y, [1, -1, 1])
        self.assertFalse(c.x.flags.writeable)
        self.assertIs(c.x, Call("fit", data={"x": self.x}).x)  # cached by path
        self.assertEqual(c.weights.dtype, np.float64)
        np.testing.assert_array_equal(c.weights, [0, 2, 1])
        self.assertEqual(c.raw_weights, [0, 2, 1])
        # The generator is numpy's PCG64 seeded by the call's seed: a call replays.
        self.assertEqual(c.rng.standard_normal(), np.random.default_rng(42).standard_normal())
        self.assertIs(c.rng, c.rng)
        with self.assertRaises(LookupError) as cm:
            c.data("z")
        self.assertIn("no data 'z' (it has: x, y)", str(cm.exception))

    def test_method_params(self):
        declared = [Param("steps", "int", 50), Param("clip", "float", 1.0), Param("on", "bool", False)]
        c = Call("fit", {"method_params": {"steps": 20.0, "clip": 2}}, declared=declared)
        self.assertEqual(c.method_params, {"steps": 20, "clip": 2.0, "on": False})
        self.assertIs(type(c.method_params["steps"]), int)
        self.assertIs(type(c.method_params["clip"]), float)
        with self.assertRaises(ValueError) as cm:
            Call("fit", {"method_params": {"steps": 2.5}}, declared=declared)
        self.assertIn("method_params.steps: 2.5 is not an integer (declared int)", str(cm.exception))

    def test_cache_bounded(self):
        worker.load_npy.cache_clear()
        for i in range(10):
            p = os.path.join(self.dir.name, "v%d.npy" % i)
            np.save(p, np.zeros(2))
            worker.load_npy(p)
        self.assertEqual(worker.load_npy.cache_info().currsize, worker.CACHE_PATHS)


class ServeTest(unittest.TestCase):
    def method(self):
        m = Method("learner", "pure", version="t 1", params=[("scale", "float", 1.0)], diagnostics=["iters", "loss"])

        @m.op("fit")
        def fit(call):
            if call.params.get("fail"):
                raise ValueError("lambda must be > 0 (got %r)" % call.params["fail"])
            if call.params.get("nan"):
                return {"weights": [float("nan")]}, pure(1)
            if call.params.get("object"):
                return {"weights": [object()]}, pure(1)
            w = np.array([1.5, -2.0]) * call.method_params["scale"]
            return {"weights": w, "diagnostics": {"iters": np.int64(3)}}, pure(np.float64(0.5))

        return m

    def test_session(self):
        lines = session(self.method(),
                        {"type": "call", "id": 1, "op": "fit", "seed": 1, "params": {"method_params": {"scale": 2}}},
                        {"type": "call", "id": 2, "op": "fit", "seed": 1, "params": {"fail": -1}},
                        {"type": "call", "id": 3, "op": "nope", "seed": 1},
                        {"type": "call", "id": 4, "op": "fit", "seed": 1, "params": {"nan": True}},
                        {"type": "call", "id": 5, "op": "fit", "seed": 1, "params": {"object": True}},
                        {"type": "call", "id": 6, "op": "fit", "seed": 1, "params": {"method_params": {"scale": 0.5}}})
        self.assertEqual(lines[0], '{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure", '
                                   '"version": "t 1", "attributes": {"diagnostics": ["iters", "loss"], '
                                   '"params": [{"name": "scale", "type": "float", "default": 1.0}]}}')
        # numpy arrays and scalars are sent as JSON numbers; a declared
        # diagnostic the fit did not report is null.
        self.assertEqual(lines[1], '{"type": "result", "id": 1, "output": {"weights": [3.0, -4.0], '
                                   '"diagnostics": {"iters": 3, "loss": null}}, "privacy": {"epsilon": 0.5}}')
        self.assertEqual(lines[2], '{"type": "error", "id": 2, "message": "ValueError: lambda must be > 0 (got -1)"}')
        self.assertEqual(lines[3], '{"type": "error", "id": 3, "message": "unknown op \'nope\'"}')
        self.assertEqual(lines[4], '{"type": "error", "id": 4, "message": "output is not valid JSON: NaN/Inf (JSON has neither)"}')
        self.assertTrue(lines[5].startswith('{"type": "error", "id": 5, "message": "output is not valid JSON: Object of type object'),
                        lines[5])
        self.assertEqual(json.loads(lines[6])["output"]["weights"], [0.75, -1.0])  # the worker lived on
        self.assertEqual(len(lines), 7)

    def test_no_hello(self):
        out = io.StringIO()
        Method("learner", "pure").serve(stdin=io.StringIO(""), stdout=out)  # stdin closed at once
        self.assertEqual(out.getvalue(), "")
        with self.assertRaises(SystemExit) as cm:
            Method("learner", "pure").serve(stdin=io.StringIO('{"type": "call"}\n'), stdout=out)
        self.assertIn("expected a hello", str(cm.exception))

    def test_direct_call(self):
        m = self.method()
        out, claim = m.call("fit", {"method_params": {"scale": 1}})
        self.assertEqual(out["diagnostics"], {"iters": 3, "loss": None})
        self.assertEqual(claim, {"epsilon": 0.5})
        with self.assertRaises(LookupError):
            m.call("interval")


class ProcessTest(unittest.TestCase):
    """A worker as the harness runs it: a process on stdin/stdout."""

    def run_worker(self, source, requests):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "w.py")
            with open(path, "w") as f:
                f.write(textwrap.dedent(source))
            lines = [json.dumps({"type": "hello", "protocol": 1, "method": "w", "serves": "learner"})]
            lines += [json.dumps(r) for r in requests]
            p = subprocess.run([sys.executable, path], input="\n".join(lines) + "\n", capture_output=True,
                               text=True, timeout=60, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.splitlines(), p.stderr

    def test_prints_go_to_stderr(self):
        out, err = self.run_worker('''
            from dprepro.worker import Method, pure
            m = Method("learner", "pure")
            @m.op("fit")
            def fit(call):
                print("hello from the method")
                return {"weights": [1.0]}, pure(1)
            m.serve()
            ''', [{"type": "call", "id": 1, "op": "fit", "seed": 0}])
        self.assertEqual(out, ['{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure"}',
                               '{"type": "result", "id": 1, "output": {"weights": [1.0]}, "privacy": {"epsilon": 1.0}}'])
        self.assertIn("hello from the method", err)
        self.assertIn("dprepro.worker: w serving learner (pure privacy)", err)

    def test_legacy_serve(self):
        # The signature of the copied helper dprepro_worker.py: its hello
        # (no stability attribute added) and its weights (the raw list).
        out, _ = self.run_worker('''
            from dprepro import worker
            def fit(params, seed, data, weights):
                return {"weights": [float(seed), float(sum(weights))], "kind": type(weights[0]).__name__}, {"epsilon": 1.0}
            worker.serve("learner", "pure", {"fit": fit, "stability": fit}, version="old 1")
            ''', [{"type": "call", "id": 1, "op": "fit", "seed": 7, "weights": [0, 2, 1]}])
        self.assertEqual(out, ['{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure", "version": "old 1"}',
                               '{"type": "result", "id": 1, "output": {"weights": [7.0, 3.0], "kind": "int"}, '
                               '"privacy": {"epsilon": 1.0}}'])


if __name__ == "__main__":
    unittest.main()
