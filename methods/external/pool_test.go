package external

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/core/privacy"
)

// The test binary doubles as a worker: with DPREPRO_FAKE_WORKER set it
// speaks the protocol in the mode named there instead of running tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("DPREPRO_FAKE_WORKER"); mode != "" {
		os.Exit(fakeWorker(mode))
	}
	os.Exit(m.Run())
}

// fakeWorker is a learner worker: "fit" returns weights of length
// params.d, each the seed modulo 1000 plus the mean of x.npy's first
// column (so a test sees that the data path and seed arrived), claiming
// params.epsilon. mode bends it to each fault.
func fakeWorker(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<30)
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	if !in.Scan() {
		return 1
	}
	fmt.Fprintln(os.Stderr, "fake worker starting in mode", mode)
	switch mode {
	case "badhello":
		send(map[string]any{"type": "hello", "protocol": 99, "serves": "learner", "privacy": "pure"})
	case "garbagehello":
		fmt.Fprintln(out, "Traceback (most recent call last):")
		out.Flush()
	case "exithello":
		fmt.Fprintln(os.Stderr, "ImportError: No module named numpy")
		return 1
	case "versionpid":
		send(map[string]any{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure", "version": fmt.Sprint("fake-", os.Getpid())})
	case "orphan":
		// A child that leaves the process group and holds stdout and
		// stderr open until the file $DPREPRO_FAKE_STOP exists; its pid
		// is the hello's version. The hello waits until the child has
		// left the group (it creates $DPREPRO_FAKE_STOP.ready then), so
		// that killing the group cannot reach it, however slowly it
		// starts.
		c := exec.Command("setsid", "sh", "-c", `touch "$DPREPRO_FAKE_STOP.ready"; while [ ! -e "$DPREPRO_FAKE_STOP" ]; do sleep 0.05; done`)
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "setsid:", err)
			return 1
		}
		for {
			if _, err := os.Stat(os.Getenv("DPREPRO_FAKE_STOP") + ".ready"); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		send(map[string]any{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure", "version": fmt.Sprint(c.Process.Pid)})
	case "forkchild":
		// A child in the worker's process group that holds stdout and
		// stderr open and outlives the worker unless it is killed; its
		// pid is the hello's version.
		c := exec.Command("sleep", "1000")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "sleep:", err)
			return 1
		}
		send(map[string]any{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure", "version": fmt.Sprint(c.Process.Pid)})
	case "noisy":
		// noisyLines numbered lines on stderr before the hello.
		for i := range noisyLines {
			fmt.Fprintf(os.Stderr, "noise %04d: a worker that logs too much\n", i)
		}
		send(map[string]any{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure", "version": "fake-1"})
	default:
		send(map[string]any{"type": "hello", "protocol": 1, "serves": "learner", "privacy": "pure", "version": "fake-1"})
	}
	calls := 0
	for in.Scan() {
		calls++
		var req struct {
			ID     uint64
			Op     string
			Seed   uint64
			Params struct {
				D       int
				Epsilon float64
				Sleep   string
				WaitFor string `json:"wait_for"`
			}
			Data map[string]string
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "bad request:", err)
			return 2
		}
		switch {
		case mode == "crash" && calls == 2:
			fmt.Fprintln(os.Stderr, "segmentation fault (simulated)")
			return 3
		case mode == "hang" && calls == 2:
			time.Sleep(time.Hour)
		case mode == "closeout" && calls == 2:
			os.Stdout.Close()
			time.Sleep(time.Hour)
		case mode == "garbage" && calls == 2:
			fmt.Fprintln(out, "{not json")
			out.Flush()
			continue
		case mode == "wrongid":
			req.ID += 7
		case mode == "error":
			send(map[string]any{"type": "error", "id": req.ID, "message": "lambda too small"})
			continue
		case mode == "noprivacy":
			send(map[string]any{"type": "result", "id": req.ID, "output": map[string]any{"weights": []float64{1}}})
			continue
		}
		if req.Params.Sleep != "" {
			d, _ := time.ParseDuration(req.Params.Sleep)
			time.Sleep(d)
		}
		for req.Params.WaitFor != "" {
			if _, err := os.Stat(req.Params.WaitFor); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		mean := 0.0
		if p := req.Data["x"]; p != "" {
			f, err := os.Open(p)
			if err != nil {
				send(map[string]any{"type": "error", "id": req.ID, "message": err.Error()})
				continue
			}
			var m mat.Dense
			err = npy.Read(f, &m)
			f.Close()
			if err != nil {
				send(map[string]any{"type": "error", "id": req.ID, "message": err.Error()})
				continue
			}
			r, _ := m.Dims()
			for i := 0; i < r; i++ {
				mean += m.At(i, 0) / float64(r)
			}
		}
		w := make([]float64, req.Params.D)
		for i := range w {
			w[i] = float64(req.Seed%1000) + mean
		}
		send(map[string]any{"type": "result", "id": req.ID, "output": map[string]any{"weights": w},
			"privacy": map[string]any{"epsilon": req.Params.Epsilon}})
	}
	return 0
}

// noisyLines is the number of stderr lines of the "noisy" fake worker.
const noisyLines = 300

func fakeCommand(t testing.TB, mode string, timeout time.Duration) Command {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DPREPRO_FAKE_WORKER", mode)
	return Command{Name: "fake-" + mode, Serves: "learner", Argv: []string{exe}, Timeout: timeout}
}

type fitParams struct {
	D       int     `json:"d"`
	Epsilon float64 `json:"epsilon"`
	Sleep   string  `json:"sleep,omitempty"`
	WaitFor string  `json:"wait_for,omitempty"` // the worker replies once this file exists
}

func decodeWeights(t *testing.T, rep Reply) []float64 {
	t.Helper()
	var out struct{ Weights []float64 }
	if err := json.Unmarshal(rep.Output, &out); err != nil {
		t.Fatal(err)
	}
	return out.Weights
}

func TestPool_Call(t *testing.T) {
	log := &syncWriter{w: new(bytes.Buffer)}
	p := NewPool(fakeCommand(t, "ok", 10*time.Second))
	p.SetLog(log)
	defer p.Close()
	h, err := p.Hello(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if h.Privacy != FormPure || h.Version != "fake-1" {
		t.Fatalf("hello = %+v", h)
	}
	sc, err := NewScratch(filepath.Join(t.TempDir(), "scratch"))
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewDense(3, 2, []float64{1, 0, 2, 0, 6, 0})
	writes := 0
	path, err := sc.Matrix("d-f0-x", func() *mat.Dense { writes++; return x })
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := sc.Matrix("d-f0-x", func() *mat.Dense { writes++; return x }); again != path || writes != 1 {
		t.Fatalf("second Matrix: path %s, %d writes; want %s, 1", again, writes, path)
	}
	rep, err := p.Call(context.Background(), Request{Op: "fit", Seed: 1234567, Params: fitParams{D: 3, Epsilon: 0.5}, Data: map[string]string{"x": path}})
	if err != nil {
		t.Fatal(err)
	}
	if w := decodeWeights(t, rep); len(w) != 3 || w[0] != 567+3 {
		t.Fatalf("weights = %v, want 3 × 570 (seed mod 1000 + mean of x's first column)", w)
	}
	g, err := rep.Privacy.Guarantee(h.Privacy, "declared by the method")
	if err != nil {
		t.Fatal(err)
	}
	if want := privacy.EpsDP(0.5, "declared by the method"); g != want {
		t.Fatalf("guarantee %+v, want %+v", g, want)
	}
	p.Close() // the stderr reader has finished once the worker is gone
	if got := log.String(); !strings.Contains(got, "[fake-ok pid ") || !strings.Contains(got, "starting in mode ok") {
		t.Fatalf("the worker's stderr did not reach the log: %q", got)
	}
}

// TestPool_OneWorkerPerCaller checks that concurrent callers each get a
// worker and that idle workers are reused, not multiplied.
func TestPool_OneWorkerPerCaller(t *testing.T) {
	p := NewPool(fakeCommand(t, "ok", 10*time.Second))
	defer p.Close()
	const callers, calls = 3, 5
	var wg sync.WaitGroup
	errs := make(chan error, callers*calls)
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				if _, err := p.Call(context.Background(), Request{Op: "fit", Params: fitParams{D: 1, Epsilon: 1, Sleep: "20ms"}}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := p.Started(); n < 1 || n > callers {
		t.Fatalf("%d workers started for %d concurrent callers", n, callers)
	}
}

func TestPool_Faults(t *testing.T) {
	// The hanging workers sleep for an hour; the fault kinds timeout and
	// "closed its standard output and did not exit" come only from the
	// call's timer, so their faults show that the timeout, not the
	// worker, ended the call. The short timeout (faultTimeout) applies to
	// the faulting call alone: the handshake and the calls before and
	// after it have a minute, so that a loaded machine (a slow start of
	// the worker) cannot fail them.
	const faultTimeout = 300 * time.Millisecond
	tests := []struct {
		mode    string
		kind    FaultKind
		hello   bool // the fault is at the handshake
		msg     string
		timeout time.Duration // of the faulting call; zero means a minute
	}{
		{mode: "badhello", kind: FaultProtocol, hello: true, msg: "speaks protocol 99, the harness 1"},
		{mode: "garbagehello", kind: FaultGarbage, hello: true, msg: "Traceback"},
		{mode: "exithello", kind: FaultExited, hello: true, msg: "exited before replying (exit status 1)"},
		{mode: "crash", kind: FaultExited, msg: "exited before replying (exit status 3)"},
		{mode: "hang", kind: FaultTimeout, msg: "no reply within 300ms", timeout: faultTimeout},
		{mode: "closeout", kind: FaultExited, msg: "closed its standard output and did not exit", timeout: faultTimeout},
		{mode: "garbage", kind: FaultGarbage, msg: "not a protocol reply"},
		{mode: "wrongid", kind: FaultProtocol, msg: "the reply has id 8, the call 1"},
		{mode: "error", kind: FaultMethod, msg: "the method failed: lambda too small"},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			p := NewPool(fakeCommand(t, tc.mode, time.Minute))
			defer p.Close()
			var err error
			if tc.hello {
				_, err = p.Hello(context.Background())
			} else {
				if tc.mode != "wrongid" && tc.mode != "error" {
					if _, err := p.Call(context.Background(), Request{Op: "fit", Params: fitParams{D: 1, Epsilon: 1}}); err != nil {
						t.Fatalf("first call: %v", err)
					}
				}
				if tc.timeout > 0 {
					p.cmd.Timeout = tc.timeout // no call runs now
				}
				_, err = p.Call(context.Background(), Request{Op: "fit", Params: fitParams{D: 1, Epsilon: 1}})
				p.cmd.Timeout = time.Minute
			}
			var f *Fault
			if !errors.As(err, &f) {
				t.Fatalf("error %v (%T), want a *Fault", err, err)
			}
			if f.Kind != tc.kind || !strings.Contains(f.Error(), tc.msg) {
				t.Fatalf("fault %q of kind %s; want kind %s containing %q", f.Error(), f.Kind, tc.kind, tc.msg)
			}
			if !strings.Contains(f.Error(), "external method fake-"+tc.mode) {
				t.Fatalf("fault %q does not name the method", f.Error())
			}
			if tc.mode == "crash" && !strings.Contains(f.Error(), "segmentation fault (simulated)") {
				t.Fatalf("fault %q does not quote the worker's stderr", f.Error())
			}
			if tc.hello {
				return
			}
			// The pool recovers: a dead worker is replaced, a live one
			// (a method error) reused.
			if tc.mode == "crash" || tc.mode == "hang" || tc.mode == "garbage" || tc.mode == "closeout" {
				if _, err := p.Call(context.Background(), Request{Op: "fit", Params: fitParams{D: 1, Epsilon: 1}}); err != nil {
					t.Fatalf("call after the fault: %v", err)
				}
				if p.Started() != 2 {
					t.Fatalf("%d workers started, want 2 (the faulty one replaced)", p.Started())
				}
			}
		})
	}
}

func TestPool_Cancel(t *testing.T) {
	p := NewPool(fakeCommand(t, "hang", time.Hour))
	defer p.Close()
	if _, err := p.Call(context.Background(), Request{Op: "fit", Params: fitParams{D: 1, Epsilon: 1}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := p.Call(ctx, Request{Op: "fit", Params: fitParams{D: 1, Epsilon: 1}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", err)
	}
}

func TestPool_StartFailure(t *testing.T) {
	p := NewPool(Command{Name: "nosuch", Serves: "learner", Argv: []string{"./no-such-program"}, Dir: t.TempDir(), Timeout: time.Second})
	_, err := p.Hello(context.Background())
	var f *Fault
	if !errors.As(err, &f) || f.Kind != FaultStart || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("err = %v", err)
	}
}

func TestClaim_Guarantee(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		form    string
		c       *Claim
		want    privacy.Guarantee
		wantErr string
	}{
		{form: FormPure, c: &Claim{Epsilon: f(1)}, want: privacy.EpsDP(1, "c")},
		{form: FormPure, c: &Claim{Epsilon: f(1), Delta: f(0)}, want: privacy.EpsDP(1, "c")},
		{form: FormApprox, c: &Claim{Epsilon: f(1), Delta: f(1e-6)}, want: privacy.EpsDeltaDP(1, 1e-6, "c")},
		{form: FormZCDP, c: &Claim{Rho: f(0.125)}, want: privacy.Rho(0.125, "c")},
		{form: FormPure, c: nil, wantErr: `no "privacy"`},
		{form: FormPure, c: &Claim{}, wantErr: `"epsilon" is required`},
		{form: FormPure, c: &Claim{Epsilon: f(1), Delta: f(1e-5)}, wantErr: `declare "approx"`},
		{form: FormApprox, c: &Claim{Epsilon: f(1)}, wantErr: `"delta" is required`},
		{form: FormZCDP, c: &Claim{Rho: f(1), Epsilon: f(1)}, wantErr: `"epsilon" does not belong`},
		{form: FormPure, c: &Claim{Epsilon: f(-1)}, wantErr: "privacy:"},
	}
	for i, tc := range tests {
		g, err := tc.c.Guarantee(tc.form, "c")
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%d: err = %v, want %q", i, err, tc.wantErr)
			}
			continue
		}
		if err != nil || g != tc.want {
			t.Errorf("%d: %+v, %v; want %+v", i, g, err, tc.want)
		}
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestScratch_NPY checks the .npy encoder against npyio's reader: shapes,
// values (including NaN, ±Inf and −0), an empty matrix, a vector.
func TestScratch_NPY(t *testing.T) {
	sc, err := NewScratch(filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*mat.Dense{
		mat.NewDense(3, 2, []float64{1, -2.5, math.Inf(1), math.Copysign(0, -1), 1e-300, math.MaxFloat64}),
		mat.NewDense(1, 1, []float64{7}),
		mat.NewDense(1000, 33, nil),
	} {
		r, c := m.Dims()
		path, err := sc.Matrix(fmt.Sprintf("m%dx%d", r, c), func() *mat.Dense { return m })
		if err != nil {
			t.Fatal(err)
		}
		f, _ := os.Open(path)
		var got mat.Dense
		err = npy.Read(f, &got)
		f.Close()
		if err != nil {
			t.Fatalf("%dx%d: npyio cannot read it: %v", r, c, err)
		}
		if !mat.Equal(&got, m) {
			t.Fatalf("%dx%d: read back %v", r, c, mat.Formatted(&got))
		}
	}
	v := []float64{3, math.NaN(), -1}
	path, err := sc.Vector("v", func() []float64 { return v })
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	var got []float64
	if err := npy.Read(f, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != 3 || !math.IsNaN(got[1]) || got[2] != -1 {
		t.Fatalf("vector read back as %v", got)
	}
	if _, err := sc.Matrix("../escape", func() *mat.Dense { return nil }); err == nil {
		t.Fatal("a key with a path separator was accepted")
	}
}

// TestPool_LogCap: a worker's stderr reaches the log up to LogLimit bytes
// (whole lines, with their prefix); the rest is cut, and a note at the
// worker's end counts the bytes and lines cut and quotes the last of them.
func TestPool_LogCap(t *testing.T) {
	const limit = 4096
	log := &syncWriter{w: new(bytes.Buffer)}
	cmd := fakeCommand(t, "noisy", time.Minute)
	cmd.LogLimit = limit
	p := NewPool(cmd)
	p.SetLog(log)
	if _, err := p.Hello(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Close()
	got := log.String()
	at := strings.Index(got, "[workers.log: ")
	if at < 0 {
		t.Fatalf("no note of the cut in the log:\n%s", got)
	}
	at = strings.LastIndexByte(got[:at], '\n') + 1 // the note's line
	logged, note, quoted := got[:at], got[at:], []string(nil)
	note, rest, _ := strings.Cut(note, "\n")
	quoted = strings.Split(strings.TrimSuffix(rest, "\n"), "\n")
	prefix := note[:strings.Index(note, "[workers.log: ")]

	// What the worker wrote: its start line, then noisyLines lines.
	all := []string{prefix + "fake worker starting in mode noisy\n"}
	for i := range noisyLines {
		all = append(all, prefix+fmt.Sprintf("noise %04d: a worker that logs too much\n", i))
	}
	total := len(strings.Join(all, ""))
	n := strings.Count(logged, "\n")
	if logged != strings.Join(all[:n], "") {
		t.Errorf("the log before the cut is not the worker's first %d lines:\n%s", n, logged)
	}
	if len(logged) > limit || len(logged)+len(all[n]) <= limit {
		t.Errorf("%d bytes logged before the cut; want the most whole lines within the limit %d", len(logged), limit)
	}
	want := fmt.Sprintf("[workers.log: this worker's stderr reached its cap of %d bytes: %d more bytes (%d lines) were cut; the last %d of them follow]", limit, total-len(logged), len(all)-n, stderrTail)
	if note != prefix+want {
		t.Errorf("note %q, want %q", note, prefix+want)
	}
	if strings.Join(quoted, "\n")+"\n" != strings.Join(all[len(all)-stderrTail:], "") {
		t.Errorf("the note quotes %q, want the last %d lines", quoted, stderrTail)
	}
}

// TestPool_HelloMismatch: a second worker whose hello differs from the
// first (another version here) is refused.
func TestPool_HelloMismatch(t *testing.T) {
	p := NewPool(fakeCommand(t, "versionpid", time.Minute))
	defer p.Close()
	if _, err := p.Hello(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Two calls at once: the second needs a second worker. The worker
	// holds each call until the file release exists, which the test
	// creates only after the first result, so the two calls overlap
	// however the machine schedules them: the first result must be the
	// second worker's refusal, the second the first worker's reply.
	release := filepath.Join(t.TempDir(), "release")
	defer os.WriteFile(release, nil, 0o644)
	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() {
			_, err := p.Call(context.Background(), Request{Op: "fit", Params: fitParams{D: 1, Epsilon: 1, WaitFor: release}})
			errs <- err
		}()
	}
	if err := <-errs; err == nil || !strings.Contains(err.Error(), "hello differs from the first worker's: version") {
		t.Fatalf("first result: %v, want the second worker's refusal", err)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("the first worker's call: %v", err)
	}
}

// TestPool_LogBeforeSetLog: what the handshake's worker writes to stderr
// before the run opens its log (SetLog) still reaches the log.
func TestPool_LogBeforeSetLog(t *testing.T) {
	p := NewPool(fakeCommand(t, "ok", 10*time.Second))
	if _, err := p.Hello(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the stderr line be read before the log exists
	log := &syncWriter{w: new(bytes.Buffer)}
	p.SetLog(log)
	p.Close()
	if got := log.String(); !strings.Contains(got, "starting in mode ok") {
		t.Fatalf("the handshake worker's stderr is not in the log: %q", got)
	}
}
