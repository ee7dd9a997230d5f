package external

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
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

// DefaultLogLimit is the cap on what one worker process writes to the
// run's workers.log (its stderr lines with their prefix) when
// [Command.LogLimit] is zero. What goes over it is cut and counted, and a
// note at the worker's end says how many bytes and lines were cut and
// quotes the last of them: a worker that prints progress on every call
// of a paper-profile run cannot fill the disk with the log.
const DefaultLogLimit = 1 << 20

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
	// Files are the method's files with the SHA-256 they had when the spec
	// was loaded (their digests are in the spec hash): a worker is not
	// started when one has changed since, so that a run never mixes two
	// versions of a method.
	Files []FileDigest
	// LogLimit caps the bytes each worker process writes to the log
	// (Pool.SetLog); zero means DefaultLogLimit. The rest is cut, with a
	// note of what was cut.
	LogLimit int
}

// FileDigest is a file (its path as the harness opens it) and its SHA-256.
type FileDigest struct {
	Path, SHA256 string
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
	log     *laterWriter // every worker's stderr, to the writer SetLog names
	hello   *Hello
	started int // processes started, for the manifest
}

// NewPool returns a pool for cmd; no process starts until Hello or Call.
func NewPool(cmd Command) *Pool {
	return &Pool{cmd: cmd, live: map[*proc]bool{}, log: &laterWriter{}}
}

// laterWriter writes to a writer named later: what is written before (a
// worker's stderr during the handshake, before the run has opened its log)
// is kept, up to 256 writes, and written when the writer is set.
type laterWriter struct {
	mu      sync.Mutex
	w       io.Writer
	set     bool
	pending [][]byte
}

func (l *laterWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.set {
		if len(l.pending) < 256 {
			l.pending = append(l.pending, bytes.Clone(p))
		}
		return len(p), nil
	}
	if l.w == nil {
		return len(p), nil
	}
	return l.w.Write(p)
}

// setWriter directs the writes to w (nil discards them), after what was
// kept.
func (l *laterWriter) setWriter(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w, l.set = w, true
	if w != nil {
		for _, p := range l.pending {
			w.Write(p)
		}
	}
	l.pending = nil
}

// Command returns the pool's command.
func (p *Pool) Command() Command { return p.cmd }

// SetLog directs the workers' stderr (each line prefixed with the method
// and pid) to w, with what they wrote before (the handshake's worker
// starts before a run opens its log); nil discards it.
func (p *Pool) SetLog(w io.Writer) { p.log.setWriter(w) }

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
// shutdown), waits up to 5 s for them to exit and kills the rest, then
// kills whatever each left running in its process group (a child that
// holds its pipes). A call after Close starts a new worker; Close must not
// run concurrently with calls.
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
	if p.hello == nil {
		h := *w.hello
		p.hello = &h
	} else if diff := helloDiff(*p.hello, *w.hello); diff != "" {
		// Every worker of a method must be the same method: the kind
		// took the first hello's privacy form and attributes.
		go w.shutdown(closeGrace)
		return nil, &Fault{Method: p.cmd.Name, Kind: FaultProtocol, PID: w.cmd.Process.Pid, Op: "hello",
			Msg: "this worker's hello differs from the first worker's: " + diff}
	}
	p.live[w] = true
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
//
// Its stdout and stderr are os.Pipe pipes the harness reads itself, so
// that the process's exit (exited) is known apart from the pipes' end: a
// child that outlives the worker (a daemon, a process that left the
// group) may hold the pipes open, and must not keep a call or Close
// waiting.
type proc struct {
	method string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	stderr *os.File
	lines  chan line // stdout, line by line; closed at EOF
	exited chan struct{}
	// readers is closed when both pipe readers have finished.
	readers chan struct{}
	hello   *Hello
	nextID  uint64
	drain   sync.Once

	mu      sync.Mutex
	tail    []string // last stderr lines
	waitErr error
}

type line struct {
	b   []byte
	err error
}

// exitGrace is how long a call waits, after the worker's exit, for a reply
// it wrote just before exiting to come through the pipe.
const exitGrace = 200 * time.Millisecond

// readersGrace is how long shutdown waits, after the worker's exit, for
// its last output to be read before closing the pipes.
const readersGrace = time.Second

// maxStderrLine bounds one logged stderr line; the rest is cut.
const maxStderrLine = 64 << 10

// start checks the method's files, starts a worker and shakes hands with
// it.
func start(ctx context.Context, c Command, log io.Writer) (*proc, error) {
	if len(c.Argv) == 0 {
		return nil, &Fault{Method: c.Name, Kind: FaultStart, Msg: "empty command"}
	}
	for _, f := range c.Files {
		sum, err := fileSHA256(f.Path)
		switch {
		case err != nil:
			return nil, &Fault{Method: c.Name, Kind: FaultStart, Msg: fmt.Sprintf("the method's file %s: %v", f.Path, err)}
		case sum != f.SHA256:
			return nil, &Fault{Method: c.Name, Kind: FaultStart, Msg: fmt.Sprintf("the method's file %s changed since the spec was loaded (sha256 %s, now %s): its results would mix two versions of the method; run the command again to start over with the new code", f.Path, short(f.SHA256), short(sum))}
		}
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = os.Environ()
	setProcessGroup(cmd)
	startFault := func(err error) error {
		return &Fault{Method: c.Name, Kind: FaultStart, Msg: err.Error()}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, startFault(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, startFault(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, startFault(err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	outW.Close() // the child holds its own copies
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		dir := c.Dir
		if dir == "" {
			dir = "."
		}
		return nil, &Fault{Method: c.Name, Kind: FaultStart, Msg: fmt.Sprintf("cannot start %q in %s: %v", strings.Join(c.Argv, " "), dir, err)}
	}
	w := &proc{method: c.Name, cmd: cmd, stdin: stdin, stdout: outR, stderr: errR,
		lines: make(chan line, 1), exited: make(chan struct{}), readers: make(chan struct{})}
	pid := cmd.Process.Pid
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { // stdout
		defer readers.Done()
		defer close(w.lines)
		r := bufio.NewReaderSize(outR, 1<<16)
		for {
			b, err := readLine(r)
			if len(b) > 0 || err == nil {
				w.lines <- line{b: b}
			}
			if err != nil {
				if err != io.EOF && !errors.Is(err, os.ErrClosed) {
					w.lines <- line{err: err}
				}
				return
			}
		}
	}()
	limit := c.LogLimit
	if limit <= 0 {
		limit = DefaultLogLimit
	}
	go func() { // stderr → log (up to limit) and tail
		defer readers.Done()
		r := bufio.NewReaderSize(errR, 4096)
		cut := logCut{limit: limit}
		prefix := fmt.Sprintf("[%s pid %d] ", c.Name, pid)
		for {
			s, err := readStderrLine(r)
			if s != "" || err == nil {
				if log != nil {
					if entry := prefix + s + "\n"; cut.admit(entry) {
						io.WriteString(log, entry)
					}
				}
				w.mu.Lock()
				w.tail = append(w.tail, s)
				if len(w.tail) > stderrTail {
					w.tail = w.tail[len(w.tail)-stderrTail:]
				}
				w.mu.Unlock()
			}
			if err != nil {
				break
			}
		}
		if log != nil {
			cut.note(log, prefix)
		}
	}()
	go func() {
		readers.Wait()
		close(w.readers)
	}()
	go func() {
		err := cmd.Wait() // returns at the process's exit: its stdout and stderr are files
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

// logCut keeps one worker's share of the log under its limit: it admits
// entries while they fit and counts (and keeps the last of) those it cuts.
type logCut struct {
	limit        int
	logged       int
	bytes, lines int
	last         []string // the last cut entries, at most stderrTail
}

// admit reports whether entry fits under the limit; once one entry did
// not, every later one is cut too (the log never skips a line and goes
// on), counted and the last few kept.
func (c *logCut) admit(entry string) bool {
	if c.lines == 0 && c.logged+len(entry) <= c.limit {
		c.logged += len(entry)
		return true
	}
	c.bytes += len(entry)
	c.lines++
	c.last = append(c.last, entry)
	if len(c.last) > stderrTail {
		c.last = c.last[len(c.last)-stderrTail:]
	}
	return false
}

// note writes, when anything was cut, what was cut and its last lines.
func (c *logCut) note(w io.Writer, prefix string) {
	if c.lines == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s[workers.log: this worker's stderr reached its cap of %d bytes: %d more bytes (%d lines) were cut; the last %d of them follow]\n", prefix, c.limit, c.bytes, c.lines, len(c.last))
	for _, e := range c.last {
		b.WriteString(e)
	}
	io.WriteString(w, b.String())
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

// readStderrLine reads one line of stderr, cut to maxStderrLine bytes (the
// rest of a longer line is skipped, not lost with what follows it).
func readStderrLine(r *bufio.Reader) (string, error) {
	var buf []byte
	cut := false
	for {
		chunk, err := r.ReadSlice('\n')
		if room := maxStderrLine - len(buf); room > 0 {
			buf = append(buf, chunk[:min(len(chunk), room)]...)
		}
		if len(buf) >= maxStderrLine {
			cut = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		s := string(bytes.TrimRight(buf, "\r\n"))
		if cut {
			s += " …(line cut)"
		}
		return s, err
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

// exchange writes msg as one line and waits for one line back, for at
// most timeout; every wait in it is bounded by the timer or ctx.
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
	exitedFault := func() error {
		// Its last stderr lines, which say why, may still be in the pipe.
		select {
		case <-w.readers:
		case <-time.After(exitGrace):
		}
		return w.fault(FaultExited, op, "the worker exited before replying (%s)", w.exitStatus())
	}
	// afterExit returns a reply the worker wrote just before exiting, if
	// one comes through the pipe soon.
	afterExit := func() ([]byte, error) {
		select {
		case l, ok := <-w.lines:
			if ok && l.err == nil {
				return l.b, nil
			}
		case <-time.After(exitGrace):
		}
		return nil, exitedFault()
	}
	for {
		select {
		case l, ok := <-w.lines:
			if !ok {
				// The worker closed its stdout: it is exiting, or it
				// closed it and lives on, which the timer catches.
				select {
				case <-w.exited:
					return nil, exitedFault()
				case <-timer.C:
					w.kill()
					return nil, w.fault(FaultExited, op, "the worker closed its standard output and did not exit (it was killed)")
				case <-ctx.Done():
					w.kill()
					return nil, ctx.Err()
				}
			}
			if l.err != nil {
				return nil, w.fault(FaultGarbage, op, "reading the reply: %v", l.err)
			}
			return l.b, nil
		case <-w.exited:
			return afterExit()
		case err := <-wrote:
			if err != nil {
				// The worker closed its stdin or exited.
				select {
				case <-w.exited:
					return afterExit()
				case <-timer.C:
					w.kill()
					return nil, w.fault(FaultExited, op, "writing the request: %v (the worker was killed)", err)
				case <-ctx.Done():
					w.kill()
					return nil, ctx.Err()
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

// kill ends the worker (and its process group) at once and closes the
// harness's ends of its pipes, so that nothing waits on them.
func (w *proc) kill() {
	killProcess(w.cmd)
	w.closePipes()
}

// closePipes closes the harness's ends of the worker's pipes and lets the
// stdout reader finish.
func (w *proc) closePipes() {
	w.stdin.Close()
	w.stdout.Close()
	w.stderr.Close()
	w.drain.Do(func() {
		go func() { // let the stdout reader finish
			for range w.lines {
			}
		}()
	})
}

// shutdown closes the worker's stdin (the protocol's end), kills it if it
// has not exited within grace, ends whatever it left running in its
// process group (a child holding its pipes, a pool of its own: no process
// of the method outlives the run), lets its last output be read (at most
// readersGrace: a child that left the group may hold the pipes), closes
// the pipes and lets the stderr reader finish. Every wait is bounded.
func (w *proc) shutdown(grace time.Duration) {
	w.stdin.Close()
	select {
	case <-w.exited:
	case <-time.After(grace):
		w.kill()
		select {
		case <-w.exited:
		case <-time.After(grace):
		}
	}
	killGroup(w.cmd)
	select {
	case <-w.readers:
	case <-time.After(readersGrace):
	}
	w.closePipes()
	// Closing the pipes ends the readers' reads: let the stderr reader
	// write its last words (the note of a cut log) before the run closes
	// the log.
	select {
	case <-w.readers:
	case <-time.After(readersGrace):
	}
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// helloDiff says how b differs from a in what a kind relies on (privacy
// form, attributes, version), or "".
func helloDiff(a, b Hello) string {
	switch {
	case a.Privacy != b.Privacy:
		return fmt.Sprintf("privacy %q, first %q", b.Privacy, a.Privacy)
	case a.Version != b.Version:
		return fmt.Sprintf("version %q, first %q", b.Version, a.Version)
	case !reflect.DeepEqual(a.Attributes, b.Attributes):
		return fmt.Sprintf("attributes %v, first %v", b.Attributes, a.Attributes)
	}
	return ""
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
