"""Load a finished dprepro run: its rows, summary, claims and privacy ledger.

    from dprepro import results
    run = results.load("results/runs/py-compare/quick-seed2011")
    run.summary          # summary.csv
    run.rows             # rows.csv: one row per unit and method
    run.claims           # claims.csv, or None when the spec states no claims
    run.ledger           # manifest.json's privacy ledger, one row per charge
    run.manifest         # manifest.json as a dict

Each table is a pandas DataFrame when pandas can be imported, else a dict
mapping each column (in the file's order) to a numpy array or a list.
Both are built by the same parser, so they hold the same values:

* a column whose every value is "true" or "false" is bool;
* a column whose every non-empty value is a number is float64 (integers
  too: epsilon = 1 in one run and 0.5 in the next keep one type), the empty
  values NaN ("NaN", "+Inf" and "-Inf" are the harness's spellings of the
  non-finite values; the ledger's "nan", "inf" and "-inf" too);
* any other column is text (a list of str in the dict form, an object
  column in the DataFrame), its empty values "".

A folder that is not a finished run is refused with a ValueError naming
the missing file (manifest.json is written last, so a run that is still
going or was interrupted has none).
"""

import csv
import json
import math
import os
import re

__all__ = ["Run", "load", "read_csv", "ledger_table"]

_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z|[+-]?(NaN|nan|Inf|inf)\Z")

LEDGER_COLUMNS = ("method", "setting", "part", "release", "data", "notion", "epsilon", "delta", "rho",
                  "private", "claimed", "declared_by", "total_notion", "total_epsilon", "total_delta",
                  "total_rho", "total_private", "composition")


class Run:
    """A loaded run: rows, summary, claims (None without claims.csv),
    timings (None without timings.csv), ledger, manifest and the folder,
    dir. The tables are DataFrames, or dicts of columns (see the module)."""

    def __init__(self, dir, rows, summary, claims, timings, ledger, manifest):
        self.dir, self.rows, self.summary, self.claims = dir, rows, summary, claims
        self.timings, self.ledger, self.manifest = timings, ledger, manifest

    def __repr__(self):
        return "<dprepro run %s>" % self.dir


def _pandas(use_pandas):
    if use_pandas is False:
        return None
    try:
        import pandas
    except ImportError:
        if use_pandas:
            raise
        return None
    return pandas


def _column(values):
    """The values of one column, typed as the module says."""
    import numpy as np

    if values and all(v in ("true", "false") for v in values):
        return np.array([v == "true" for v in values], dtype=bool)
    if any(values) and all(v == "" or _FLOAT.match(v) for v in values):
        return np.array([float(v) if v else math.nan for v in values], dtype=np.float64)
    return list(values)


def _table(header, records, pd):
    cols = {}
    for j, name in enumerate(header):
        cols[name] = _column([r[j] for r in records])
    if pd is None:
        return cols
    return pd.DataFrame({k: (v if not isinstance(v, list) else pd.Series(v, dtype=object)) for k, v in cols.items()},
                        columns=list(header))


def read_csv(path, use_pandas=None):
    """Read one of the run's CSV files (rows.csv, summary.csv, claims.csv,
    timings.csv) as a DataFrame or a dict of columns. use_pandas None uses
    pandas when it imports, False never, True requires it."""
    pd = _pandas(use_pandas)
    with open(path, newline="", encoding="utf-8") as f:
        r = csv.reader(f)
        try:
            header = next(r)
        except StopIteration:
            raise ValueError("%s: empty file (no header line)" % path) from None
        if len(set(header)) != len(header):
            raise ValueError("%s: a column name appears twice in the header" % path)
        records = []
        for rec in r:
            if len(rec) != len(header):
                raise ValueError("%s:%d: %d fields, the header has %d" % (path, r.line_num, len(rec), len(header)))
            records.append(rec)
    return _table(header, records, pd)


def _number(v):
    """A manifest Float: a number, or "nan", "inf", "-inf"; None as NaN."""
    if v is None:
        return math.nan
    if isinstance(v, str):
        return float(v)
    return float(v)


def ledger_table(manifest, use_pandas=None):
    """The manifest's privacy_ledger as a table, one row per charge
    (component) of each entry, with the entry's method, setting, total and
    composition rule repeated on its rows (an entry with no component gets
    one row, its charge fields empty). rho is NaN where a charge has none."""
    pd = _pandas(use_pandas)
    header = list(LEDGER_COLUMNS)
    records = []
    for e in manifest.get("privacy_ledger") or []:
        total = e.get("total") or {}
        tail = [total.get("notion", ""), repr(_number(total.get("epsilon"))), repr(_number(total.get("delta"))),
                repr(_number(total.get("rho"))), "true" if total.get("private") else "false", e.get("composition", "")]
        comps = e.get("components") or [None]
        for c in comps:
            if c is None:
                head = [e.get("method", ""), e.get("setting", ""), "", "", "", "", "nan", "nan", "nan", "false", "", ""]
            else:
                head = [e.get("method", ""), e.get("setting", ""), c.get("part", ""), c.get("release", ""),
                        c.get("data", ""), c.get("notion", ""), repr(_number(c.get("epsilon"))),
                        repr(_number(c.get("delta"))), repr(_number(c.get("rho"))),
                        "true" if c.get("private") else "false", c.get("claimed", ""), c.get("declared_by", "")]
            records.append(head + tail)
    return _table(header, records, pd)


def _runs_below(path, depth=2):
    """Finished runs (folders with a manifest.json) up to depth levels below path."""
    found = []
    for root, dirs, files in os.walk(path):
        if root[len(path):].count(os.sep) >= depth:
            dirs[:] = []
        if "manifest.json" in files and root != path:
            found.append(root)
    return sorted(found)


def load(run_dir, use_pandas=None):
    """Load the finished run in run_dir (OUT/<spec id>/<run>, the folder
    `dprepro run` reports). use_pandas None gives DataFrames when pandas
    imports, else dicts of columns; False always dicts; True requires
    pandas. Raises ValueError for a folder that is not a finished run,
    naming the missing file."""
    run_dir = os.fspath(run_dir)
    if not os.path.isdir(run_dir):
        raise ValueError("%s: no such folder" % run_dir)
    manifest_path = os.path.join(run_dir, "manifest.json")
    if not os.path.isfile(manifest_path):
        why = "%s is not a finished dprepro run: manifest.json is missing" % run_dir
        if os.path.isdir(os.path.join(run_dir, ".checkpoint")):
            why += " (it has a .checkpoint: the run is still going or was interrupted; run the same command again)"
        else:
            below = _runs_below(run_dir)
            if below:
                why += " (runs below it: %s)" % ", ".join(below[:5])
        raise ValueError(why)
    with open(manifest_path, encoding="utf-8") as f:
        try:
            manifest = json.load(f)
        except ValueError as exc:
            raise ValueError("%s: not valid JSON: %s" % (manifest_path, exc)) from None
    outputs = manifest.get("outputs") or []
    tables = {}
    for name in ("rows.csv", "summary.csv", "claims.csv", "timings.csv"):
        p = os.path.join(run_dir, name)
        required = name in ("rows.csv", "summary.csv") or name in outputs
        if not os.path.isfile(p):
            if required:
                raise ValueError("%s is not a finished dprepro run: %s is missing" % (run_dir, name))
            tables[name] = None
            continue
        tables[name] = read_csv(p, use_pandas)
    return Run(run_dir, tables["rows.csv"], tables["summary.csv"], tables["claims.csv"], tables["timings.csv"],
               ledger_table(manifest, use_pandas), manifest)
