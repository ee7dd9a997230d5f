package rmethod_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// session is a worker process spoken to line by line.
type session struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr bytes.Buffer
}

func startSession(t *testing.T, argv ...string) *session {
	t.Helper()
	requireR(t)
	s := &session{t: t, cmd: exec.Command(argv[0], argv[1:]...)}
	s.cmd.Stderr = &s.stderr
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.stdout = bufio.NewReader(out)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stdin.Close(); s.cmd.Process.Kill(); s.cmd.Wait() })
	return s
}

// send writes one line and returns the reply line, decoded strictly (an
// unknown field is an error, as the harness refuses it).
func (s *session) send(line string, v any) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
	reply, err := s.stdout.ReadString('\n')
	if err != nil {
		s.t.Fatalf("after %s: no reply (%v); stderr:\n%s", line, err, s.stderr.String())
	}
	dec := json.NewDecoder(strings.NewReader(reply))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		s.t.Fatalf("reply %q to %s: %v", reply, line, err)
	}
}

// close closes stdin and wants the worker to exit with status 0 having
// written nothing more to stdout.
func (s *session) close() {
	s.t.Helper()
	s.stdin.Close()
	rest, _ := io.ReadAll(s.stdout)
	if err := s.cmd.Wait(); err != nil || len(rest) > 0 {
		s.t.Errorf("after stdin closed: %v, stdout %q; stderr:\n%s", err, rest, s.stderr.String())
	}
}

type helloReply struct {
	Type       string         `json:"type"`
	Protocol   int            `json:"protocol"`
	Serves     string         `json:"serves"`
	Privacy    string         `json:"privacy"`
	Version    string         `json:"version"`
	Attributes map[string]any `json:"attributes"`
}

type reply struct {
	Type    string          `json:"type"`
	ID      *uint64         `json:"id"`
	Output  json.RawMessage `json:"output"`
	Privacy map[string]any  `json:"privacy"`
	Message string          `json:"message"`
}

func (s *session) hello(method, serves, privacy string) helloReply {
	s.t.Helper()
	var h helloReply
	s.send(fmt.Sprintf(`{"type": "hello", "protocol": 1, "method": %q, "serves": %q}`, method, serves), &h)
	if h.Type != "hello" || h.Protocol != 1 || h.Serves != serves || h.Privacy != privacy {
		s.t.Fatalf("hello reply %+v", h)
	}
	return h
}

func fitLine(id int, seed string, params, data string) string {
	return fmt.Sprintf(`{"type": "call", "id": %d, "op": "fit", "seed": %s, "params": %s, "data": %s}`, id, seed, params, data)
}

// TestWorker_Refusals sends the R learner requests it must refuse — lines
// that are not calls, an unknown op, missing or unreadable data, and fits
// outside the preconditions of its ε-DP claim (Chaudhuri et al. 2011: the
// logistic loss, ‖xᵢ‖₂ ≤ 1, labels ±1, λ, ε > 0) — and checks that each
// gets an error reply with its id and a message saying why, the worker
// serving on: the last call is answered, and closing stdin ends it with
// status 0.
func TestWorker_Refusals(t *testing.T) {
	dir := t.TempDir()
	npyFile := func(name string, v any) string {
		p := filepath.Join(dir, name)
		writeNPY(t, p, v)
		return p
	}
	x, y := npyFile("x.npy", docX), npyFile("y.npy", docY)
	var big mat.Dense
	big.Scale(2, docX)
	x2, y01, y3 := npyFile("x2.npy", &big), npyFile("y01.npy", []float64{1, 0, 1, 0}), npyFile("y3.npy", []float64{1, -1, 1})
	x32 := npyFile("x32.npy", []float32{0.5, 0.5})
	data := func(x, y string) string { return fmt.Sprintf(`{"x": %q, "y": %q}`, x, y) }
	const ok = `{"lambda": 0.1, "epsilon": 1, "delta": 0, "n": 4, "d": 2, "loss": "logistic", "row_norm": "l2-max"}`

	s := startSession(t, "Rscript", "output_perturbation.R")
	h := s.hello("r-output-perturbation", "learner", "pure")
	if !strings.HasPrefix(h.Version, "output_perturbation.R 1 (R version ") || h.Attributes != nil {
		t.Errorf("hello %+v", h)
	}
	tests := []struct {
		name, line string
		id         uint64 // 0: the reply's id is null
		want       string
	}{
		{"not JSON", `{"type": "call", "id": 1,`, 0, "the request is not JSON"},
		{"not a call", `{"type": "hello", "id": 2}`, 2, "the request is not a call"},
		{"unknown op", `{"type": "call", "id": 3, "op": "interval", "seed": 1, "params": {}}`, 3, "unknown op interval"},
		{"no data", `{"type": "call", "id": 4, "op": "fit", "seed": 1, "params": ` + ok + `}`, 4, "the call has no data.x"},
		{"missing file", fitLine(5, "1", ok, data(filepath.Join(dir, "gone.npy"), y)), 5, "gone.npy: no such file"},
		{"float32 data", fitLine(6, "1", ok, data(x32, y)), 6, "element type '<f4'"},
		{"negative lambda", fitLine(7, "1", strings.Replace(ok, `"lambda": 0.1`, `"lambda": -1`, 1), data(x, y)), 7, "lambda and epsilon must be > 0 (got lambda=-1, epsilon=1)"},
		{"huber loss", fitLine(8, "1", strings.Replace(ok, `"logistic"`, `"huber", "huber_h": 0.5`, 1), data(x, y)), 8, "implements the logistic loss only"},
		{"row norm above 1", fitLine(9, "1", ok, data(x2, y)), 9, "needs |x_i|_2 <= 1"},
		{"labels 0/1", fitLine(10, "1", ok, data(x, y01)), 10, "labels -1 or +1"},
		{"y too short", fitLine(11, "1", ok, data(x, y3)), 11, "x is 4x2, y has 3 entries"},
		{"negative seed", fitLine(12, "-1", ok, data(x, y)), 12, "the seed must be an integer in [0, 2^53)"},
		{"seed 2^53", fitLine(13, "9007199254740992", ok, data(x, y)), 13, "the seed must be an integer in [0, 2^53)"},
	}
	for _, tc := range tests {
		var r reply
		s.send(tc.line, &r)
		id := uint64(0)
		if r.ID != nil {
			id = *r.ID
		}
		if r.Type != "error" || id != tc.id || (tc.id == 0) != (r.ID == nil) || !strings.Contains(r.Message, tc.want) {
			t.Errorf("%s: reply %+v, want an error with id %d saying %q", tc.name, r, tc.id, tc.want)
		}
	}
	var r reply
	s.send(fitLine(14, "9007199254740991", ok, data(x, y)), &r)
	if r.Type != "result" || r.ID == nil || *r.ID != 14 || r.Privacy["epsilon"] != 1.0 || len(r.Privacy) != 1 {
		t.Errorf("after the refusals, a valid call: %+v", r)
	}
	s.close()
}

// packageWorker is a worker on the package alone, whose fit misbehaves as
// its declared parameter "mode" says: dprepro_worker must turn each
// misbehaviour into an error reply, and carry a good fit's explicit claim
// (ρ, the zcdp form) and diagnostics (NA as null).
const packageWorker = `
src <- commandArgs(trailingOnly = TRUE)[1]
for (f in list.files(src, full.names = TRUE)) source(f)
fit <- function(x, y, params, seed) {
  mode <- params$method_params$mode
  print("a stray print goes to stderr")
  w <- rep(0.25, ncol(x))
  switch(mode,
    nan = list(weights = c(NaN, w[-1]), privacy = list(rho = 0.5)),
    inf = list(weights = c(Inf, w[-1]), privacy = list(rho = 0.5)),
    short = w[-1],
    noclaim = w,
    text = "a",
    fail = stop("the fit failed on purpose"),
    mech = list(weights = w, privacy = subsampled_gaussian(1.1, 0.01, 100, epsilon = 2)),
    ok = list(weights = w, privacy = list(rho = 0.5), diagnostics = c(iterations = 3, clip_fraction = NA)))
}
dprepro_worker("pkg-test", serves = "learner", privacy = "zcdp", fit = fit, version = "pkg-test 1",
               params = list(list(name = "mode", type = "string", default = "ok", doc = "how to misbehave")),
               attributes = list(diagnostics = I(c("iterations", "clip_fraction"))))
`

// TestWorker_PackageFaults checks dprepro_worker's own refusals with a
// worker written on the package: an output JSON cannot carry (NaN, Inf),
// the wrong number of weights, weights that are not numbers, a zcdp fit
// without its claim and a fit that stops are each an error reply; a good
// fit carries its claim and diagnostics, with a one-column training set
// (d = 1) its weights are still an array, and stray prints stay off the
// protocol stream.
func TestWorker_PackageFaults(t *testing.T) {
	dir := t.TempDir()
	src, err := filepath.Abs(filepath.Join(pkgDir, "R"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "worker.R")
	if err := os.WriteFile(script, []byte(packageWorker), 0o644); err != nil {
		t.Fatal(err)
	}
	x, y, x1 := filepath.Join(dir, "x.npy"), filepath.Join(dir, "y.npy"), filepath.Join(dir, "x1.npy")
	writeNPY(t, x, docX)
	writeNPY(t, y, docY)
	writeNPY(t, x1, mat.NewDense(4, 1, []float64{0.5, -0.5, 0.6, -0.4}))

	s := startSession(t, "Rscript", script, src)
	h := s.hello("pkg-test", "learner", "zcdp")
	params, _ := json.Marshal(h.Attributes["params"])
	if want := `[{"default":"ok","doc":"how to misbehave","name":"mode","type":"string"}]`; string(params) != want {
		t.Errorf("hello params %s, want %s", params, want)
	}
	if d, _ := json.Marshal(h.Attributes["diagnostics"]); string(d) != `["iterations","clip_fraction"]` {
		t.Errorf("hello diagnostics %s", d)
	}
	call := func(id int, mode, x string) reply {
		t.Helper()
		var r reply
		s.send(fitLine(id, "5", fmt.Sprintf(`{"lambda": 0.1, "epsilon": 1, "delta": 1e-5, "n": 4, "d": 2, "loss": "logistic", "row_norm": "l2-max", "method_params": {"mode": %q}}`, mode),
			fmt.Sprintf(`{"x": %q, "y": %q}`, x, y)), &r)
		return r
	}
	for i, tc := range []struct{ mode, want string }{
		{"nan", "NaN/Inf (JSON has neither)"},
		{"inf", "NaN/Inf (JSON has neither)"},
		{"short", "fit returned 1 weights for d = 2 columns"},
		{"text", "fit returned 1 weights for d = 2 columns"},
		{"noclaim", "a zcdp fit must return list(weights = ..., privacy = list(rho = ...))"},
		{"fail", "the fit failed on purpose"},
	} {
		if r := call(i+1, tc.mode, x); r.Type != "error" || r.ID == nil || *r.ID != uint64(i+1) || !strings.Contains(r.Message, tc.want) {
			t.Errorf("mode %s: reply %+v, want an error saying %q", tc.mode, r, tc.want)
		}
	}
	r := call(10, "ok", x)
	if r.Type != "result" || string(r.Output) != `{"weights":[0.25,0.25],"diagnostics":{"iterations":3,"clip_fraction":null}}` ||
		len(r.Privacy) != 1 || r.Privacy["rho"] != 0.5 {
		t.Errorf("mode ok: reply %+v output %s", r, r.Output)
	}
	if r := call(11, "ok", x1); r.Type != "result" || !strings.HasPrefix(string(r.Output), `{"weights":[0.25],`) {
		t.Errorf("d = 1: reply %+v output %s, want the weights as an array", r, r.Output)
	}
	// subsampled_gaussian: the claim of a mechanism whose ε the harness
	// computes, in the protocol's shape (docs/worker-protocol.md).
	if r := call(12, "mech", x); r.Type != "result" {
		t.Errorf("mode mech: reply %+v", r)
	} else if got, _ := json.Marshal(r.Privacy); string(got) != `{"epsilon":2,"mechanism":{"name":"subsampled-gaussian","noise_multiplier":1.1,"sampling_rate":0.01,"steps":100}}` {
		t.Errorf("mode mech: privacy %s", got)
	}
	s.close()
	if !strings.Contains(s.stderr.String(), "a stray print goes to stderr") {
		t.Errorf("the stray print is not on stderr:\n%s", s.stderr.String())
	}
}
