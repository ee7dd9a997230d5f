"""Unit tests of dprepro.results (python -m unittest discover -s tests).

With DPREPRO_RUN_DIR set (the Go test python/package_test.go sets it to a
run the real binary made), every table of that run is also checked
against the CSV files read with the csv module, in both forms (DataFrame
and dict of columns). DPREPRO_REQUIRE_PANDAS=1 makes a missing pandas a
failure instead of a skip; DPREPRO_EXPECT_INSTALLED=PREFIX checks that
the package is the one installed under PREFIX (not the source folder).
"""

import csv
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np

from dprepro import results

try:
    import pandas
except ImportError:
    pandas = None

NEED_PANDAS = os.environ.get("DPREPRO_REQUIRE_PANDAS") == "1"


def require_pandas(test):
    if pandas is None and not NEED_PANDAS:
        return unittest.skip("pandas is not installed (Debian: python3-pandas)")(test)
    return test


ROWS = '''experiment,method,repetition,epsilon,delta,auc,private,status,note
e,a,1,0.5,0,0.75,true,ok,
e,a,2,1,0,NaN,true,"warning: x, y",plain
e,"b[steps=2]",1,+Inf,1e-05,,false,ok,"say ""hi"""
'''
SUMMARY = '''experiment,method,x_name,x,metric,mean,sd,n
e,a,epsilon,0.5,auc,0.75,NaN,2
'''
CLAIMS = '''experiment,claim_id,verdict,paper,ours,reason
e,c1,held,NaN,0.5,
'''
MANIFEST = {
    "tool": "dprepro",
    "outputs": ["spec.toml", "rows.csv", "summary.csv", "claims.csv", "manifest.json"],
    "privacy_ledger": [
        {"method": "a", "setting": "epsilon=0.5",
         "components": [{"part": "training", "release": "r", "data": "T", "notion": "pure-dp",
                         "epsilon": 0.5, "delta": 0, "private": True, "declared_by": "a"},
                        {"part": "tuning", "release": "s", "data": "V", "notion": "none",
                         "epsilon": "inf", "delta": 0, "private": False}],
         "total": {"notion": "pure-dp", "epsilon": 0.5, "delta": 0, "private": True},
         "composition": "sequential"},
        {"method": "z", "setting": "rho=0.1",
         "components": [{"part": "training", "release": "r", "data": "T", "notion": "zcdp",
                         "epsilon": "nan", "delta": 0, "rho": 0.1, "private": True}],
         "total": {"notion": "zcdp", "epsilon": "nan", "delta": 0, "rho": 0.1, "private": True},
         "composition": "none"},
    ],
}


def write_run(d, rows=ROWS, summary=SUMMARY, claims=CLAIMS, manifest=MANIFEST):
    for name, text in (("rows.csv", rows), ("summary.csv", summary), ("claims.csv", claims)):
        if text is not None:
            with open(os.path.join(d, name), "w", newline="") as f:
                f.write(text)
    if manifest is not None:
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(manifest, f)


def same(a, b):
    """Equal, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def column(table, name):
    """A column of either form as a list of Python values."""
    c = table[name]
    if hasattr(c, "tolist"):
        return c.tolist()
    return list(c)


def expected(text):
    """What the module's typing rules make of a CSV column (a list of str)."""
    if text and all(v in ("true", "false") for v in text):
        return [v == "true" for v in text]
    try:
        if any(text):
            return [float(v) if v else math.nan for v in text]
    except ValueError:
        pass
    return list(text)


class LoadTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)

    def test_dicts(self):
        write_run(self.dir)
        run = results.load(self.dir, use_pandas=False)
        r = run.rows
        self.assertIsInstance(r, dict)
        self.assertEqual(list(r), ["experiment", "method", "repetition", "epsilon", "delta", "auc", "private", "status", "note"])
        self.assertEqual(r["method"], ["a", "a", "b[steps=2]"])
        self.assertEqual(r["repetition"].dtype, np.float64)
        np.testing.assert_array_equal(r["repetition"], [1, 2, 1])
        np.testing.assert_array_equal(r["epsilon"], [0.5, 1, math.inf])
        np.testing.assert_array_equal(r["delta"], [0, 0, 1e-5])
        self.assertEqual(r["auc"][0], 0.75)
        self.assertTrue(math.isnan(r["auc"][1]) and math.isnan(r["auc"][2]))  # "NaN" and empty
        self.assertEqual(r["private"].dtype, bool)
        self.assertEqual(r["private"].tolist(), [True, True, False])
        self.assertEqual(r["status"], ["ok", "warning: x, y", "ok"])
        self.assertEqual(r["note"], ["", "plain", 'say "hi"'])
        self.assertEqual(run.summary["n"].tolist(), [2.0])
        self.assertEqual(run.claims["verdict"], ["held"])
        self.assertIsNone(run.timings)

        led = run.ledger
        self.assertEqual(led["method"], ["a", "a", "z"])
        self.assertEqual(led["part"], ["training", "tuning", "training"])
        self.assertEqual(led["epsilon"][:2].tolist(), [0.5, math.inf])
        self.assertTrue(math.isnan(led["epsilon"][2]))
        self.assertTrue(math.isnan(led["rho"][0]))
        self.assertEqual(led["rho"][2], 0.1)
        self.assertEqual(led["total_rho"][2], 0.1)
        self.assertEqual(led["private"].tolist(), [True, False, True])
        self.assertEqual(led["declared_by"], ["a", "", ""])
        self.assertEqual(led["total_epsilon"][:2].tolist(), [0.5, 0.5])
        self.assertEqual(led["composition"], ["sequential", "sequential", "none"])

    @require_pandas
    def test_dataframes(self):
        write_run(self.dir)
        run = results.load(self.dir)
        a, b = run.rows, results.load(self.dir, use_pandas=False).rows
        self.assertIsInstance(a, pandas.DataFrame)
        self.assertEqual(list(a.columns), list(b))
        for name in b:
            self.assertTrue(all(same(x, y) for x, y in zip(column(a, name), column(b, name))), name)
        self.assertEqual(a["epsilon"].dtype, np.float64)
        self.assertEqual(a["private"].dtype, bool)
        self.assertEqual(a["note"].tolist(), ["", "plain", 'say "hi"'])
        self.assertIsInstance(run.ledger, pandas.DataFrame)
        self.assertEqual(run.ledger.shape, (3, len(results.LEDGER_COLUMNS)))

    def test_without_pandas_importable(self):
        # pandas absent: the default gives dicts; use_pandas=True says so.
        saved = sys.modules.get("pandas")
        sys.modules["pandas"] = None  # import pandas raises ImportError
        try:
            write_run(self.dir)
            self.assertIsInstance(results.load(self.dir).rows, dict)
            with self.assertRaises(ImportError):
                results.load(self.dir, use_pandas=True)
        finally:
            if saved is None:
                del sys.modules["pandas"]
            else:
                sys.modules["pandas"] = saved

    def test_not_a_run(self):
        def refused(want, d=None):
            with self.assertRaises(ValueError) as cm:
                results.load(d or self.dir, use_pandas=False)
            self.assertIn(want, str(cm.exception))

        refused("no such folder", os.path.join(self.dir, "nope"))
        refused("is not a finished dprepro run: manifest.json is missing")
        os.mkdir(os.path.join(self.dir, ".checkpoint"))
        refused("the run is still going or was interrupted")
        write_run(self.dir, rows=None)
        refused("is not a finished dprepro run: rows.csv is missing")
        os.remove(os.path.join(self.dir, "claims.csv"))
        write_run(self.dir, claims=None)
        refused("claims.csv is missing")  # the manifest lists it
        m = dict(MANIFEST, outputs=["rows.csv", "summary.csv"])
        write_run(self.dir, claims=None, manifest=m)
        self.assertIsNone(results.load(self.dir, use_pandas=False).claims)
        write_run(self.dir, manifest=m, rows="a,b\n1\n")
        refused("rows.csv:2: 1 fields, the header has 2")
        # A spec's folder: the runs below it are named.
        parent = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, parent)
        run = os.path.join(parent, "quick-seed1")
        os.mkdir(run)
        write_run(run)
        refused("runs below it: " + run, parent)


@unittest.skipUnless(os.environ.get("DPREPRO_RUN_DIR"), "DPREPRO_RUN_DIR names no run (python/package_test.go sets it)")
class RealRunTest(unittest.TestCase):
    """A run the real binary made, loaded in both forms and compared with
    its files read by the csv and json modules."""

    def setUp(self):
        self.dir = os.environ["DPREPRO_RUN_DIR"]

    def test_installed(self):
        prefix = os.environ.get("DPREPRO_EXPECT_INSTALLED")
        if not prefix:
            self.skipTest("DPREPRO_EXPECT_INSTALLED not set")
        self.assertTrue(os.path.realpath(results.__file__).startswith(os.path.realpath(prefix) + os.sep),
                        (results.__file__, prefix))

    def check(self, run):
        for name, table in (("rows.csv", run.rows), ("summary.csv", run.summary), ("claims.csv", run.claims),
                            ("timings.csv", run.timings)):
            path = os.path.join(self.dir, name)
            if not os.path.exists(path):
                self.assertIsNone(table, name)
                continue
            with open(path, newline="") as f:
                recs = list(csv.reader(f))
            header, body = recs[0], recs[1:]
            self.assertEqual(list(table.columns) if hasattr(table, "columns") else list(table), header, name)
            self.assertGreater(len(body), 0, name)
            for j, col in enumerate(header):
                got, want = column(table, col), expected([r[j] for r in body])
                self.assertEqual(len(got), len(want))
                bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if not same(g, w)]
                self.assertFalse(bad, "%s column %s: first differences %r" % (name, col, bad[:3]))
        with open(os.path.join(self.dir, "manifest.json")) as f:
            m = json.load(f)
        charges = [(e["method"], e["setting"], c["part"], float(c["epsilon"]), float(c["delta"]))
                   for e in m["privacy_ledger"] for c in e["components"]]
        led = run.ledger
        got = list(zip(column(led, "method"), column(led, "setting"), column(led, "part"),
                       column(led, "epsilon"), column(led, "delta")))
        self.assertEqual(len(got), len(charges))
        for g, w in zip(got, charges):
            self.assertTrue(all(same(a, b) for a, b in zip(g, w)), (g, w))
        self.assertEqual(run.manifest, m)

    def test_dicts(self):
        run = results.load(self.dir, use_pandas=False)
        self.assertIsInstance(run.rows, dict)
        self.check(run)

    @require_pandas
    def test_dataframes(self):
        run = results.load(self.dir)
        self.assertIsInstance(run.rows, pandas.DataFrame)
        self.check(run)


if __name__ == "__main__":
    unittest.main()
