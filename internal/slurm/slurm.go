// Package slurm brings up, for tests, a real single-node Slurm on this
// machine (Debian's slurm-wlm and munge; scripts/debian-deps.sh installs
// them): munged, slurmctld and slurmd run as child processes of the test,
// in the foreground, with a generated slurm.conf, and every file they use
// (munge key and socket, state and spool folders, logs) lives in the
// test's temporary folder. Nothing of the machine's own Slurm or munge
// (/etc/slurm, /etc/munge, ports 6817/6818, systemd) is used or touched.
//
// Without the packages, or without root (slurmd launches jobs), the test
// is skipped with the reason, except under CI (CI=true), where it fails.
package slurm

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dprepro/dprepro/internal/testdeps"
)

// install is the advice given when a command is missing.
const install = "install Debian's slurm-wlm and munge (apt-get install slurm-wlm munge, or scripts/debian-deps.sh)"

// NodeName is the name of the cluster's one node.
const NodeName = "dprepro-node"

// Cluster is a running single-node Slurm. Its client commands (sbatch,
// scontrol, ...) reach it through SLURM_CONF, set in [Cluster.Env].
type Cluster struct {
	// Dir is the folder holding every file of the cluster.
	Dir string
	// Conf is the path of its slurm.conf.
	Conf string
	// CPUs is the node's CPU count, as slurmd -C reports it.
	CPUs int

	t       testing.TB
	env     []string
	paths   map[string]string // command name -> path
	daemons []*daemon
}

// daemon is one of the cluster's processes.
type daemon struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done is closed
}

// lookPath finds a command on PATH or, for the daemons, in /usr/sbin,
// which a non-root PATH may not list.
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s: not found", name)
	}
	return p, nil
}

// Start brings up munged, slurmctld and slurmd in a temporary folder and
// returns when sinfo shows the node idle (within a minute, or the test
// fails with the daemons' logs). t.Cleanup cancels every job and stops
// the daemons, whether the test passed or not; when it failed, the logs
// are printed first.
func Start(t testing.TB) *Cluster {
	t.Helper()
	paths := map[string]string{}
	var missing []string
	for _, name := range []string{"munged", "slurmctld", "slurmd", "sbatch", "scontrol", "scancel", "sinfo", "squeue"} {
		p, err := lookPath(name)
		if err != nil {
			missing = append(missing, name)
			continue
		}
		paths[name] = p
	}
	if len(missing) > 0 {
		testdeps.Missing(t, "no single-node Slurm: "+strings.Join(missing, ", ")+" not found; "+install)
	}
	if os.Geteuid() != 0 {
		testdeps.Missing(t, "no single-node Slurm: slurmd must run as root to launch jobs (run the test as root)")
	}

	dir := t.TempDir()
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf"), t: t, paths: paths}
	c.env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	// Registered after t.TempDir, so it runs before the folder is removed.
	t.Cleanup(c.stop)

	mungeDir, logDir := filepath.Join(dir, "munge"), filepath.Join(dir, "log")
	for _, d := range []string{mungeDir, logDir, filepath.Join(dir, "state"), filepath.Join(dir, "spool")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	socket := filepath.Join(mungeDir, "munge.socket")
	if len(socket) >= 100 { // sun_path holds 108 bytes
		t.Fatalf("slurm: munge socket path %s too long for a Unix socket (set TMPDIR to a shorter folder)", socket)
	}
	key := make([]byte, 1024) // munge's default key length
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(mungeDir, "munge.key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	// --force: munged refuses to run as root, and warns about the
	// socket's folder being closed to other users, without it.
	c.startDaemon("munged", paths["munged"], "--foreground", "--force",
		"--socket="+socket, "--key-file="+keyFile,
		"--log-file="+filepath.Join(logDir, "munged.log"),
		"--pid-file="+filepath.Join(mungeDir, "munged.pid"),
		"--seed-file="+filepath.Join(mungeDir, "munged.seed"))
	c.waitFor(t, "munged's socket", 15*time.Second, func() bool {
		_, err := os.Stat(socket)
		return err == nil
	})

	c.CPUs = hostCPUs(paths["slurmd"])
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".") // slurmctld compares its short name
	ports := freePorts(t, 2)
	conf := fmt.Sprintf(slurmConf, dir, host, ports[0], ports[1], socket, NodeName, c.CPUs)
	if err := os.WriteFile(c.Conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.startDaemon("slurmctld", paths["slurmctld"], "-D", "-f", c.Conf)
	c.startDaemon("slurmd", paths["slurmd"], "-D", "-f", c.Conf, "-N", NodeName)
	c.waitFor(t, "the node to be idle in sinfo", time.Minute, func() bool {
		out, err := c.Command("sinfo", "-h", "-N", "-n", NodeName, "-o", "%T")
		return err == nil && strings.TrimSpace(out) == "idle"
	})
	return c
}

// slurmConf is the cluster's slurm.conf: dir, controller host, controller
// and slurmd ports, munge socket, node name and CPU count. Process
// tracking by /proc (no cgroups here), no task plugin, no accounting;
// CPUs are the consumable resource, so jobs of one CPU share the node.
// Jobs are not requeueable unless submitted with --requeue, as at sites
// that set JobRequeue=0: a script that relies on requeueing must ask.
// Finished jobs stay visible to scontrol for MinJobAge seconds.
const slurmConf = `ClusterName=dprepro-test
SlurmctldHost=%[2]s(127.0.0.1)
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=%[5]s
StateSaveLocation=%[1]s/state
SlurmdSpoolDir=%[1]s/spool
SlurmctldPidFile=%[1]s/slurmctld.pid
SlurmdPidFile=%[1]s/slurmd.pid
SlurmctldLogFile=%[1]s/log/slurmctld.log
SlurmdLogFile=%[1]s/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
JobRequeue=0
KillWait=5
MinJobAge=900
NodeName=%[6]s NodeAddr=127.0.0.1 CPUs=%[7]d State=UNKNOWN
PartitionName=test Nodes=%[6]s Default=YES MaxTime=30 State=UP
`

// hostCPUs is the CPU count slurmd itself finds (slurmd -C), so that the
// configured node never claims more than it has (which would drain it);
// runtime.NumCPU when slurmd does not say.
func hostCPUs(slurmd string) int {
	out, err := exec.Command(slurmd, "-C").Output()
	if err == nil {
		if m := regexp.MustCompile(`\bCPUs=(\d+)`).FindSubmatch(out); m != nil {
			if n, err := strconv.Atoi(string(m[1])); err == nil && n > 0 {
				return n
			}
		}
	}
	return runtime.NumCPU()
}

// freePorts returns n TCP ports free on the loopback interface now.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startDaemon starts a daemon in the foreground, its output in
// log/<name>.out, in a process group of its own.
func (c *Cluster) startDaemon(name, path string, args ...string) {
	c.t.Helper()
	out, err := os.Create(filepath.Join(c.Dir, "log", name+".out"))
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = c.env
	cmd.Dir = c.Dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		c.t.Fatalf("slurm: start %s: %v", name, err)
	}
	d := &daemon{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		out.Close()
		close(d.done)
	}()
	c.daemons = append(c.daemons, d)
}

// waitFor polls cond every 100 ms until it holds; it fails test t when
// the timeout passes first or when a daemon has exited.
func (c *Cluster) waitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		for _, d := range c.daemons {
			select {
			case <-d.done:
				t.Fatalf("slurm: %s exited (%v) while waiting for %s", d.name, d.err, what)
			default:
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("slurm: no %s within %v", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Env is the environment for the cluster's client commands and for
// scripts that call them: the test's own, with SLURM_CONF.
func (c *Cluster) Env() []string { return c.env }

// Command runs a Slurm client command (sbatch, scontrol, ...) against the
// cluster, with a 30 s limit, and returns its standard output; an error
// includes its standard error.
func (c *Cluster) Command(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	path := name
	if p, ok := c.paths[name]; ok {
		path = p
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = c.env
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// MustCommand is Command that fails test t on an error.
func (c *Cluster) MustCommand(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := c.Command(name, args...)
	if err != nil {
		t.Fatalf("slurm: %v", err)
	}
	return out
}

// Job is what scontrol says of a job (or of one array task, "ID_i").
type Job struct {
	State    string // JobState, e.g. PENDING, RUNNING, COMPLETED, FAILED, CANCELLED
	Reason   string // why it is pending, e.g. Dependency, BeginTime
	Restarts int    // how often it was requeued
	Line     string // the whole one-line record
}

// Finished reports whether the job has ended, however it ended.
func (j Job) Finished() bool {
	switch j.State {
	case "PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT":
		return false
	}
	return true
}

var (
	reState    = regexp.MustCompile(`\bJobState=(\S+)`)
	reReason   = regexp.MustCompile(`\bReason=(\S+)`)
	reRestarts = regexp.MustCompile(`\bRestarts=(\d+)`)
)

// Job returns the record of job id (an array task as "ID_i").
func (c *Cluster) Job(id string) (Job, error) {
	out, err := c.Command("scontrol", "-o", "show", "job", id)
	if err != nil {
		return Job{}, err
	}
	line := strings.TrimSpace(out)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		return Job{}, fmt.Errorf("scontrol show job %s: more than one job:\n%s", id, out)
	}
	m := reState.FindStringSubmatch(line)
	if m == nil {
		return Job{}, fmt.Errorf("scontrol show job %s: no JobState in %q", id, line)
	}
	j := Job{State: m[1], Line: line}
	if m := reReason.FindStringSubmatch(line); m != nil {
		j.Reason = m[1]
	}
	if m := reRestarts.FindStringSubmatch(line); m != nil {
		j.Restarts, _ = strconv.Atoi(m[1])
	}
	return j, nil
}

// WaitJob polls job id until until(job) holds and returns the job; it
// fails test t after the timeout, or at once when the job can never start
// (its dependency can no longer be satisfied) or a daemon has exited.
func (c *Cluster) WaitJob(t testing.TB, id string, timeout time.Duration, until func(Job) bool) Job {
	t.Helper()
	var j Job
	var err error
	c.waitFor(t, "job "+id+" in the state awaited", timeout, func() bool {
		if j, err = c.Job(id); err != nil {
			t.Fatalf("slurm: %v", err)
		}
		if j.Reason == "DependencyNeverSatisfied" {
			t.Fatalf("slurm: job %s can never start (DependencyNeverSatisfied): %s", id, j.Line)
		}
		return until(j)
	})
	return j
}

// Requeue puts a finished or running batch job (or array task) back in
// the queue and lets it start at once: Slurm holds a requeued job for a
// while (its BeginTime, about two minutes in Slurm 22.05), which is moved
// to now once the job is pending again.
func (c *Cluster) Requeue(t testing.TB, id string) {
	t.Helper()
	c.MustCommand(t, "scontrol", "requeue", id)
	c.WaitJob(t, id, 30*time.Second, func(j Job) bool { return j.State == "PENDING" })
	c.MustCommand(t, "scontrol", "update", "JobId="+id, "StartTime=now")
}

// Logs returns the daemons' log files, for a failure message.
func (c *Cluster) Logs() string {
	var b strings.Builder
	for _, name := range []string{"slurmctld.log", "slurmd.log", "munged.log", "slurmctld.out", "slurmd.out", "munged.out"} {
		data, err := os.ReadFile(filepath.Join(c.Dir, "log", name))
		if err != nil || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		const max = 8000 // the end of a long log is the part that matters
		if len(data) > max {
			data = append([]byte("...\n"), data[len(data)-max:]...)
		}
		fmt.Fprintf(&b, "==== %s\n%s\n", name, data)
	}
	return b.String()
}

// stop cancels every job, waits (at most 30 s) until the queue is empty,
// and stops the daemons in reverse order of their start: SIGTERM, then
// SIGKILL to the process group of one that has not exited within 10 s.
// A failed test gets the queue and the daemons' logs first.
func (c *Cluster) stop() {
	if c.t.Failed() && len(c.daemons) > 0 {
		q, _ := c.Command("scontrol", "-o", "show", "job")
		c.t.Logf("slurm: jobs at the end:\n%s\n%s", q, c.Logs())
	}
	if len(c.daemons) == 3 { // the cluster came up: clear its queue
		if out, err := c.Command("squeue", "-h", "-o", "%A"); err == nil && strings.TrimSpace(out) != "" {
			c.Command("scancel", strings.Fields(out)...)
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				if out, err := c.Command("squeue", "-h", "-o", "%A"); err != nil || strings.TrimSpace(out) == "" {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}
	for i := len(c.daemons) - 1; i >= 0; i-- {
		d := c.daemons[i]
		d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
			<-d.done
		}
	}
}
