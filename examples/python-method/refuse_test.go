package pythonmethod_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/internal/pyenv"
	"github.com/dprepro/dprepro/methods/external"
)

// TestOutputPerturbation_Refuses: the Python learner answers with an error
// — and keeps serving — when a call does not meet what its ε-DP claim
// rests on: the logistic loss, ‖xᵢ‖₂ ≤ 1 (beyond 1e-9 relative) and labels
// ±1.
func TestOutputPerturbation_Refuses(t *testing.T) {
	p, sc := startPython(t)
	good := mat.NewDense(4, 2, []float64{0.5, 0.5, -0.5, 0.5, 0.6, 0.1, -0.4, -0.3})
	// Row 0 of long has norm 1 + 1e-6; row 0 of edge 1 + 1e-12 (rounding).
	long := mat.NewDense(4, 2, []float64{1 + 1e-6, 0, -0.5, 0.5, 0.6, 0.1, -0.4, -0.3})
	edge := mat.NewDense(4, 2, []float64{1 + 1e-12, 0, -0.5, 0.5, 0.6, 0.1, -0.4, -0.3})
	path := func(name string, v any) string {
		t.Helper()
		var p string
		var err error
		switch v := v.(type) {
		case *mat.Dense:
			p, err = sc.Matrix(name, func() *mat.Dense { return v })
		case []float64:
			p, err = sc.Vector(name, func() []float64 { return v })
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	x, xLong, xEdge := path("x", good), path("x-long", long), path("x-edge", edge)
	y, y01 := path("y", []float64{1, -1, 1, -1}), path("y01", []float64{1, 0, 1, 0})
	base := fitParams{Lambda: 0.1, Epsilon: 1, N: 4, D: 2}.logistic()
	huber := base
	h := 0.5
	huber.Loss, huber.HuberH = "huber", &h
	none := base
	none.Loss = ""
	for _, c := range []struct {
		name string
		prm  fitParams
		x, y string
		want string // "" for a result
	}{
		{"huber loss", huber, x, y, `ValueError: loss 'huber': this method implements the logistic loss only`},
		{"no loss", none, x, y, `ValueError: loss '': this method implements the logistic loss only`},
		{"row norm", base, xLong, y, `ValueError: a row has |x|_2 = 1.000001 > 1 (data.row_norm = 'l2-max')`},
		{"labels", base, x, y01, `ValueError: label y[1] = 0.0: the guarantee needs labels -1 or +1`},
		{"rounding", base, xEdge, y, ""},
		{"good", base, x, y, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.Call(context.Background(), external.Request{Op: "fit", Seed: 1, Params: c.prm, Data: map[string]string{"x": c.x, "y": c.y}})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var f *external.Fault
			if err == nil || !errors.As(err, &f) || !strings.Contains(err.Error(), "the method failed: "+c.want) {
				t.Errorf("err = %v\nwant the method's error %q", err, c.want)
			}
		})
	}
}

// TestPython_NotConverged runs the examples' functions in Python with the
// Newton solvers cut to one step: output perturbation raises instead of
// releasing an unconverged fit; the ci method releases nothing (status
// only, as methods/cimethods accepts) and still claims the declared cost;
// noise reduction raises. It also checks that the .npy caches keep 8 paths.
func TestPython_NotConverged(t *testing.T) {
	t.Setenv("PATH", pyenv.Require(t))
	readMethodFiles(t)
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "x.npy"), mat.NewDense(4, 2, []float64{0.5, 0.5, -0.5, 0.5, 0.6, 0.1, -0.4, -0.3}))
	writeNPY(t, filepath.Join(dir, "y.npy"), []float64{1, -1, 1, -1})
	const script = `
import os, sys
import numpy as np
import output_perturbation as op, ci_output_perturbation as ci, noise_reduction as nr
from dprepro import worker

d = sys.argv[1]
data = {"x": os.path.join(d, "x.npy"), "y": os.path.join(d, "y.npy")}

def raises(f, want):
    try:
        f()
    except Exception as exc:
        assert want in str(exc), (want, str(exc))
        return
    raise AssertionError("no exception, want %r" % want)

# A converged fit passes; one Newton step does not converge.
op.method.call("fit", {"lambda": 0.1, "epsilon": 1, "n": 4, "d": 2, "loss": "logistic", "row_norm": "l2-max"}, 1, data)
op.fit_logistic.__defaults__ = (1e-10, 1)
raises(lambda: op.method.call("fit", {"lambda": 0.1, "epsilon": 1, "n": 4, "d": 2, "loss": "logistic", "row_norm": "l2-max"}, 1, data),
       "the fit did not converge: gradient norm")

prm = {"eps1": 0.5, "eps2": 0.25, "eps3": 0.25, "alpha": 0.1, "c": 0.1, "h": 0.1, "m": 50, "model": "lr", "n": 4}
weights = [1, 1, 1, 1]
out, claim = ci.method.call("interval", prm, 1, data, weights)
assert out["status"] == "ok" and len(out["lo"]) == 2, out
ci.fit.__defaults__ = (1e-10, 1)
out, claim = ci.method.call("interval", prm, 1, data, weights)
assert set(out) == {"status"} and out["status"].startswith("fit not converged (gradient norm"), out
assert claim == {"epsilon": 1.0}, claim
out, claim = ci.method.call("estimate", prm, 1, data, weights)
assert set(out) == {"status"} and out["status"].startswith("fit not converged"), out
assert claim == {"epsilon": 0.5}, claim

nr.fit_logistic.__defaults__ = (1e-10, 1)
raises(lambda: nr.method.call("independent", {"task": "logistic", "lambda": 0.1, "n": 4, "d": 2, "radius": 10, "epsilon": 1}, 1, data),
       "Newton did not reach")

# The cache every example loads its data through (dprepro.worker.load_npy)
# is bounded: 10 paths read, the last 8 kept; the arrays are read-only.
for i in range(10):
    p = os.path.join(d, "v%d.npy" % i)
    np.save(p, np.zeros(2))
    worker.load_npy(p)
assert worker.load_npy.cache_info().currsize == 8, worker.load_npy.cache_info()
raises(lambda: worker.load_npy(p).__setitem__(0, 1.0), "read-only")
print("ok")
`
	cmd := exec.Command("python3", "-c", script, dir)
	cmd.Dir, _ = os.Getwd()
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestWorker_NaNOutput: a method whose output JSON cannot carry (NaN)
// gets an error reply, and its worker keeps serving: dprepro.worker
// catches the encoding error instead of dying with the call.
func TestWorker_NaNOutput(t *testing.T) {
	t.Setenv("PATH", pyenv.Require(t))
	readMethodFiles(t)
	here, _ := os.Getwd()
	pkg := filepath.Join(here, "..", "..", "python") // the dprepro package's folder
	dir := t.TempDir()
	const method = `import sys
sys.path.insert(0, sys.argv[1])
from dprepro.worker import Method

method = Method("learner", "pure")

@method.op("fit")
def fit(call):
    w = float("nan") if call.params["bad"] else 1.0
    return {"weights": [w]}, {"epsilon": 1.0}

method.serve()
`
	if err := os.WriteFile(filepath.Join(dir, "nan.py"), []byte(method), 0o644); err != nil {
		t.Fatal(err)
	}
	p := external.NewPool(external.Command{
		Name: "nan", Serves: "learner", Dir: dir,
		Argv: []string{"python3", "nan.py", pkg}, Timeout: time.Minute,
	})
	defer p.Close()
	call := func(bad bool) error {
		_, err := p.Call(context.Background(), external.Request{Op: "fit", Seed: 1, Params: map[string]bool{"bad": bad}})
		return err
	}
	if err := call(true); err == nil || !strings.Contains(err.Error(), "the method failed: output is not valid JSON: NaN/Inf") {
		t.Errorf("NaN output: err = %v", err)
	}
	if err := call(false); err != nil {
		t.Errorf("the next call: %v (the worker should live on)", err)
	}
	if n := p.Started(); n != 1 {
		t.Errorf("%d processes started, want 1 (the worker died)", n)
	}
}
