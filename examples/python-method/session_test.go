package pythonmethod_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sbinet/npyio/npy"
	"gonum.org/v1/gonum/mat"

	"github.com/dprepro/dprepro/internal/pyenv"
)

// docSession returns the lines of the "session" block of
// docs/worker-protocol.md: each with its direction ('>' harness to
// worker, '<' worker to harness).
func docSession(t *testing.T) (dirs []byte, lines []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "worker-protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "```session"):
			in = true
		case in && strings.HasPrefix(l, "```"):
			return dirs, lines
		case in && (strings.HasPrefix(l, "> ") || strings.HasPrefix(l, "< ")):
			dirs = append(dirs, l[0])
			lines = append(lines, l[2:])
		case in && strings.TrimSpace(l) != "":
			t.Fatalf("worker-protocol.md: session line %q starts with neither '> ' nor '< '", l)
		}
	}
	t.Fatal("worker-protocol.md has no ```session block")
	return nil, nil
}

// TestProtocolDocSession replays the complete session of
// docs/worker-protocol.md against examples/python-method/
// output_perturbation.py: the document's requests go to the worker, and
// its replies must be the document's (numbers to 1e-9 relative; the
// version string by its prefix, since it names the numpy in use).
func TestProtocolDocSession(t *testing.T) {
	t.Setenv("PATH", pyenv.Require(t))
	dirs, lines := docSession(t)
	dir := t.TempDir()
	writeNPY(t, filepath.Join(dir, "x.npy"), mat.NewDense(4, 2, []float64{0.5, 0.5, -0.5, 0.5, 0.6, 0.1, -0.4, -0.3}))
	writeNPY(t, filepath.Join(dir, "y.npy"), []float64{1, -1, 1, -1})
	script, err := filepath.Abs("output_perturbation.py")
	if err != nil {
		t.Fatal(err)
	}
	readMethodFiles(t)
	cmd := exec.Command("python3", script)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewScanner(stdout)
	for i, l := range lines {
		if dirs[i] == '>' {
			fmt.Fprintln(stdin, l)
			continue
		}
		if !out.Scan() {
			t.Fatalf("line %d: the worker closed its output; stderr: %s", i+1, stderr.String())
		}
		var got, want any
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("line %d: the worker wrote %q: %v", i+1, out.Text(), err)
		}
		if err := json.Unmarshal([]byte(l), &want); err != nil {
			t.Fatalf("line %d of the document's session is not JSON: %v", i+1, err)
		}
		if !sameJSON(got, want, "") {
			t.Errorf("line %d: the worker replied\n  %s\nthe document says\n  %s", i+1, out.Text(), l)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the worker did not exit cleanly when its stdin closed: %v; stderr: %s", err, stderr.String())
	}
}

// sameJSON compares decoded JSON: numbers to 1e-9 relative, the field
// "version" by prefix.
func sameJSON(got, want any, key string) bool {
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		return ok && math.Abs(g-w) <= 1e-9*math.Max(1, math.Abs(w))
	case string:
		g, ok := got.(string)
		if key == "version" {
			return ok && strings.HasPrefix(g, w)
		}
		return ok && g == w
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameJSON(g[i], w[i], key) {
				return false
			}
		}
		return true
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !sameJSON(gv, wv, k) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(got, want)
	}
}

func writeNPY(t *testing.T, path string, v any) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := npy.Write(f, v); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// readMethodFiles reads the Python files of the example and of the
// dprepro package they import (../../python/dprepro), so that go test's
// cache (which sees only the files the test process opens, not those its
// child processes open) reruns these tests when they change.
func readMethodFiles(t *testing.T) {
	t.Helper()
	files, _ := filepath.Glob("*.py")
	pkg, _ := filepath.Glob(filepath.Join("..", "..", "python", "dprepro", "*.py"))
	if len(pkg) == 0 {
		t.Fatal("no ../../python/dprepro/*.py: the examples import the dprepro package from there")
	}
	files = append(files, pkg...)
	for _, f := range files {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
}
