package external

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// MaxLine bounds one line a worker writes (a reply): a longer line is a
// fault, so that a worker printing garbage cannot exhaust the harness's
// memory.
const MaxLine = 64 << 20

// stderrTail is the number of a worker's last stderr lines quoted in a
// fault.
const stderrTail = 8

// closeGrace is how long Close waits for a worker to exit after its stdin
// is closed before killing it.
const closeGrace = 5 * time.Second

// Command is an external method as the harness starts it.
type Command struct {
	// Name is the method's name (the [[methods]] name). Required.
	Name string
	// Serves is the extension point: "learner", "ci" or "hypothesis".
	// Required.
	Serves string
	// Argv is the program and its arguments. Required.
	Argv []string
	// Dir is the directory the program runs in ("" = the current one).
	Dir string
	// Timeout bounds each call and the handshake. Required, > 0.
	Timeout time.Duration
}

// FaultKind classifies a Fault.
type FaultKind string

// The kinds of Fault.
const (
	FaultStart    FaultKind = "start"    // the program could not be started
	FaultExited   FaultKind = "exited"   // the worker exited (or closed stdout) before replying
	FaultTimeout  FaultKind = "timeout"  // no reply within the call's timeout
	FaultGarbage  FaultKind = "garbage"  // the reply is not a JSON object of the protocol
	FaultProtocol FaultKind = "protocol" // a well-formed reply that breaks the protocol
	FaultMethod   FaultKind = "method"   // the method answered with an "error" reply
	FaultOutput   FaultKind = "output"   // the output has the wrong shape or values
)

// Fault is a failure of an external method's call: the unit that made the
// call fails with it (the run goes on with the other units). Every kind
// but FaultMethod and FaultOutput also ends the worker process, which the
// pool replaces on the next call.
type Fault struct {
	Method string
	Kind   FaultKind
	PID    int
	Op     string // the call's operation; "hello" for the handshake
	Msg    string
	Stderr []string // the worker's last stderr lines
}

func (f *Fault) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "external method %s: %s", f.Method, f.Msg)
	if f.PID > 0 {
		fmt.Fprintf(&b, " (worker pid %d, %s)", f.PID, f.Op)
	}
	if len(f.Stderr) > 0 {
		fmt.Fprintf(&b, "; its last stderr lines: %s", strings.Join(f.Stderr, " | "))
	}
	return b.String()
}

// DecodeOutput decodes the output of rep into v (a pointer to the
// operation's output struct), refusing unknown fields, so that a misspelt
// field is a fault rather than a silent zero. A failure is an OutputFault
// naming method, op and the form the output must have (want).
func DecodeOutput(rep Reply, method, op, want string, v any) error {
	if len(rep.Output) == 0 {
		return OutputFault(method, op, "the reply has no output; want %s", want)
	}
	if err := strictDecode(rep.Output, v); err != nil {
		return OutputFault(method, op, "the output must be %s: %v", want, err)
	}
	return nil
}

// OutputFault returns the fault of a reply whose output the caller finds
// wrong (a shape, a value), naming the method and operation.
func OutputFault(method, op, format string, args ...any) *Fault {
	return &Fault{Method: method, Kind: FaultOutput, Op: op, Msg: fmt.Sprintf(format, args...)}
}

// Pool runs the worker processes of one external method: at most one
// process per goroutine calling it at a time (so one per harness worker),
// each started on demand, shaken hands with, and reused for later calls.
// It is safe for concurrent use.
type Pool struct {
	cmd Command

	mu      sync.Mutex
	idle    []*proc
	live    map[*proc]bool
	closed  bool
	log     io.Writer
	hello   *Hello
	started int // processes started, for the manifest
}

// NewPool returns a pool for cmd; no process starts until Hello or Call.
func NewPool(cmd Command) *Pool {
	return &Pool{cmd: cmd, live: map[*proc]bool{}}
}

// Command returns the pool's command.
func (p *Pool) Command() Command { return p.cmd }

// SetLog directs the workers' stderr (each line prefixed with the method
// and pid) to w; nil discards it. Processes started earlier keep writing
// to the writer they started with.
func (p *Pool) SetLog(w io.Writer) {
	p.mu.Lock()
	p.log = w
	p.mu.Unlock()
}

// Hello returns the worker's handshake, starting the first worker (which
// then stays in the pool) if none has started.
func (p *Pool) Hello(ctx context.Context) (Hello, error) {
	p.mu.Lock()
	h := p.hello
	p.mu.Unlock()
	if h != nil {
		return *h, nil
	}
	w, err := p.get(ctx)
	if err != nil {
		return Hello{}, err
	}
	p.put(w)
	return *w.hello, nil
}

// Started returns how many worker processes the pool has started.
func (p *Pool) Started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// Call sends one request (its Type and ID are set here) and returns the
// worker's reply. A reply of type "error" is returned as a Fault of kind
// FaultMethod; every other failure (the worker exits, does not answer
// within the timeout, writes garbage) is a Fault too, and ends that
// worker. ctx's cancellation ends the call and its worker.
func (p *Pool) Call(ctx context.Context, req Request) (Reply, error) {
	w, err := p.get(ctx)
	if err != nil {
		return Reply{}, err
	}
	rep, err := w.call(ctx, req, p.cmd.Timeout)
	var f *Fault
	if err == nil || (errors.As(err, &f) && (f.Kind == FaultMethod || f.Kind == FaultOutput)) {
		p.put(w)
	} else {
		p.discard(w)
	}
	return rep, err
}

// Close ends every worker: it closes their stdin (the protocol's
// shutdown), waits up to 5 s for them to exit and kills the rest. A call
// after Close starts a new worker; Close must not run concurrently with
// calls.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	defer func() {
		p.mu.Lock()
		p.closed = false
		p.mu.Unlock()
	}()
	procs := make([]*proc, 0, len(p.live))
	for w := range p.live {
		procs = append(procs, w)
	}
	p.live = map[*proc]bool{}
	p.idle = nil
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.shutdown(closeGrace)
		}()
	}
	wg.Wait()
	return nil
}

func (p *Pool) get(ctx context.Context) (*proc, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, &Fault{Method: p.cmd.Name, Kind: FaultStart, Msg: "the method's pool is closed"}
	}
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w, nil
	}
	log := p.log
	p.started++
	p.mu.Unlock()
	w, err := start(ctx, p.cmd, log)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		go w.shutdown(closeGrace)
		return nil, &Fault{Method: p.cmd.Name, Kind: FaultStart, Msg: "the method's pool is closed"}
	}
	p.live[w] = true
	if p.hello == nil {
		h := *w.hello
		p.hello = &h
	}
	return w, nil
}

func (p *Pool) put(w *proc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || !p.live[w] {
		go w.shutdown(closeGrace)
		return
	}
	p.idle = append(p.idle, w)
}

func (p *Pool) discard(w *proc) {
	p.mu.Lock()
	delete(p.live, w)
	p.mu.Unlock()
	w.kill()
}

// proc is one worker process.
type proc struct {
	method string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan line // stdout, line by line; closed at EOF
	exited chan struct{}
	hello  *Hello
	nextID uint64

	drain sync.Once

	mu      sync.Mutex
	tail    []string // last stderr lines
	waitErr error
}

type line struct {
	b   []byte
	err error
}

// start starts a worker and shakes hands with it.
func start(ctx context.Context, c Command, log io.Writer) (*proc, error) {
	if len(c.Argv) == 0 {
		return nil, &Fault{Method: c.Name, Kind: FaultStart, Msg: "empty command"}
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = os.Environ()
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, &Fault{Method: c.Name, Kind: FaultStart, Msg: err.Error()}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, &Fault{Method: c.Name, Kind: FaultStart, Msg: err.Error()}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, &Fault{Method: c.Name, Kind: FaultStart, Msg: err.Error()}
	}
	if err := cmd.Start(); err != nil {
		dir := c.Dir
		if dir == "" {
			dir = "."
		}
		return nil, &Fault{Method: c.Name, Kind: FaultStart, Msg: fmt.Sprintf("cannot start %q in %s: %v", strings.Join(c.Argv, " "), dir, err)}
	}
	w := &proc{method: c.Name, cmd: cmd, stdin: stdin, lines: make(chan line, 1), exited: make(chan struct{})}
	pid := cmd.Process.Pid
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { // stdout
		defer readers.Done()
		defer close(w.lines)
		r := bufio.NewReaderSize(stdout, 1<<16)
		for {
			b, err := readLine(r)
			if len(b) > 0 || err == nil {
				w.lines <- line{b: b}
			}
			if err != nil {
				if err != io.EOF {
					w.lines <- line{err: err}
				}
				io.Copy(io.Discard, stdout)
				return
			}
		}
	}()
	go func() { // stderr → log and tail
		defer readers.Done()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		for sc.Scan() {
			s := sc.Text()
			if log != nil {
				fmt.Fprintf(log, "[%s pid %d] %s\n", c.Name, pid, s)
			}
			w.mu.Lock()
			w.tail = append(w.tail, s)
			if len(w.tail) > stderrTail {
				w.tail = w.tail[len(w.tail)-stderrTail:]
			}
			w.mu.Unlock()
		}
		io.Copy(io.Discard, stderr)
	}()
	go func() {
		readers.Wait()
		err := cmd.Wait()
		w.mu.Lock()
		w.waitErr = err
		w.mu.Unlock()
		close(w.exited)
	}()

	// The handshake.
	hreq := HelloRequest{Type: "hello", Protocol: ProtocolVersion, Method: c.Name, Serves: c.Serves}
	b, err := w.exchange(ctx, "hello", hreq, c.Timeout)
	if err != nil {
		w.kill()
		return nil, err
	}
	var h Hello
	if err := strictDecode(b, &h); err != nil {
		w.kill()
		return nil, w.fault(FaultGarbage, "hello", "the hello reply is not a protocol hello: %v (got %s)", err, quote(b))
	}
	switch {
	case h.Type != "hello":
		err = w.fault(FaultProtocol, "hello", `the first line must be {"type": "hello", ...} (got type %q)`, h.Type)
	case h.Protocol != ProtocolVersion:
		err = w.fault(FaultProtocol, "hello", "the worker speaks protocol %d, the harness %d", h.Protocol, ProtocolVersion)
	case h.Serves != c.Serves:
		err = w.fault(FaultProtocol, "hello", "the worker serves %q, the spec says %q", h.Serves, c.Serves)
	case !slices.Contains(Forms, h.Privacy):
		err = w.fault(FaultProtocol, "hello", `"privacy" must be one of %s (got %q)`, strings.Join(Forms, ", "), h.Privacy)
	}
	if err != nil {
		w.kill()
		return nil, err
	}
	w.hello = &h
	return w, nil
}

// readLine reads one '\n'-terminated line (without it), failing on a line
// longer than MaxLine.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLine {
			return nil, fmt.Errorf("a line longer than %d bytes", MaxLine)
		}
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return buf, err
		}
		return bytes.TrimRight(buf, "\r\n"), nil
	}
}

// call sends req and returns the reply.
func (w *proc) call(ctx context.Context, req Request, timeout time.Duration) (Reply, error) {
	w.nextID++
	req.Type, req.ID = "call", w.nextID
	b, err := w.exchange(ctx, req.Op, req, timeout)
	if err != nil {
		return Reply{}, err
	}
	var rep Reply
	if err := strictDecode(b, &rep); err != nil {
		return Reply{}, w.fault(FaultGarbage, req.Op, "the reply is not a protocol reply: %v (got %s; stdout is the protocol's alone: write logs and debug output to stderr)", err, quote(b))
	}
	if rep.ID != req.ID {
		return Reply{}, w.fault(FaultProtocol, req.Op, "the reply has id %d, the call %d", rep.ID, req.ID)
	}
	switch rep.Type {
	case "result":
		return rep, nil
	case "error":
		msg := rep.Message
		if msg == "" {
			msg = "(no message)"
		}
		return rep, &Fault{Method: w.method, Kind: FaultMethod, Op: req.Op, Msg: "the method failed: " + msg}
	default:
		return Reply{}, w.fault(FaultProtocol, req.Op, `a reply's type must be "result" or "error" (got %q)`, rep.Type)
	}
}

// exchange writes msg as one line and waits for one line back.
func (w *proc) exchange(ctx context.Context, op string, msg any, timeout time.Duration) ([]byte, error) {
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, &Fault{Method: w.method, Kind: FaultProtocol, Op: op, Msg: fmt.Sprintf("encoding the request: %v", err)}
	}
	b = append(b, '\n')
	// The write runs beside the wait: a worker that does not read its
	// stdin would otherwise block a large request forever.
	wrote := make(chan error, 1)
	go func() {
		_, err := w.stdin.Write(b)
		wrote <- err
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				<-w.exited
				return nil, w.fault(FaultExited, op, "the worker exited before replying (%s)", w.exitStatus())
			}
			if l.err != nil {
				return nil, w.fault(FaultGarbage, op, "reading the reply: %v", l.err)
			}
			return l.b, nil
		case err := <-wrote:
			if err != nil {
				// The worker closed its stdin or exited: wait for its
				// output to end to tell which.
				select {
				case <-w.exited:
					return nil, w.fault(FaultExited, op, "the worker exited before replying (%s)", w.exitStatus())
				case <-timer.C:
					return nil, w.fault(FaultExited, op, "writing the request: %v", err)
				}
			}
			wrote = nil
		case <-timer.C:
			w.kill()
			return nil, w.fault(FaultTimeout, op, "no reply within %s (the worker was killed; raise methods[].timeout if the method is slow)", timeout)
		case <-ctx.Done():
			w.kill()
			return nil, ctx.Err()
		}
	}
}

func (w *proc) fault(kind FaultKind, op, format string, args ...any) *Fault {
	w.mu.Lock()
	tail := slices.Clone(w.tail)
	w.mu.Unlock()
	return &Fault{Method: w.method, Kind: kind, PID: w.cmd.Process.Pid, Op: op, Msg: fmt.Sprintf(format, args...), Stderr: tail}
}

func (w *proc) exitStatus() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waitErr == nil {
		return "exit status 0"
	}
	return w.waitErr.Error()
}

// kill ends the worker (and its process group) at once.
func (w *proc) kill() {
	killProcess(w.cmd)
	w.stdin.Close()
	w.drain.Do(func() {
		go func() { // let the stdout reader finish
			for range w.lines {
			}
		}()
	})
}

// shutdown closes the worker's stdin and kills it if it has not exited
// within grace.
func (w *proc) shutdown(grace time.Duration) {
	w.stdin.Close()
	select {
	case <-w.exited:
	case <-time.After(grace):
		w.kill()
		<-w.exited
	}
}

// strictDecode decodes one JSON object into v, refusing unknown fields
// and trailing data.
func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON object")
	}
	return nil
}

// quote shortens a line for a message.
func quote(b []byte) string {
	const max = 120
	if len(b) > max {
		return fmt.Sprintf("%q…", b[:max])
	}
	return fmt.Sprintf("%q", b)
}
