package mutants

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeModule writes a one-package module under git to a temp dir: Scale
// is a Laplace scale Δ/ε, pinned by its test; unused is what no test sees.
func fakeModule(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":            "module example.com/fake\n\ngo 1.22\n",
		"calc/calc.go":      "package calc\n\n// Scale is the Laplace scale Δ/ε.\nfunc Scale(delta, eps float64) float64 { return delta / eps }\n\nconst unused = 1\n",
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestScale(t *testing.T) {\n\tif Scale(1, 2) != 0.5 {\n\t\tt.Fatal(\"scale\")\n\t}\n}\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return dir
}

// TestRun: each outcome on a module small enough to build in seconds, and
// the source tree is never changed.
func TestRun(t *testing.T) {
	dir := fakeModule(t)
	before, _ := os.ReadFile(filepath.Join(dir, "calc/calc.go"))
	l := &List{Mutants: []Mutant{
		{ID: "scale-eps-squared", Bug: "scale Δ/ε²", File: "calc/calc.go", Old: "delta / eps", New: "delta / (eps * eps)", Packages: []string{"./calc"}},
		{ID: "unseen", Bug: "a constant no test reads", File: "calc/calc.go", Old: "unused = 1", New: "unused = 2", Packages: []string{"./calc"}},
		{ID: "syntax", Bug: "does not compile", File: "calc/calc.go", Old: "delta / eps", New: "delta / ", Packages: []string{"./calc"}},
		{ID: "gone", Bug: "text not in the file", File: "calc/calc.go", Old: "delta * eps", New: "delta", Packages: []string{"./calc"}},
	}}
	res, err := Run(context.Background(), l, Options{Root: dir, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := []Outcome{Killed, Survived, Broken, Stale}
	for i, r := range res {
		if r.Outcome != want[i] {
			t.Errorf("%s: %s (%s), want %s", r.Mutant.ID, r.Outcome, r.Evidence, want[i])
		}
	}
	if !strings.Contains(res[0].Evidence, "TestScale") {
		t.Errorf("killed mutant's evidence %q does not name the failing test", res[0].Evidence)
	}
	if s := Summarize(res); s != (Summary{Total: 4, Killed: 1, Survived: 1, Errors: 2}) {
		t.Errorf("summary %+v", s)
	}
	var b strings.Builder
	Markdown(&b, res)
	if !strings.Contains(b.String(), "1 of 4 mutants killed, 1 survived, 2 errors in the list") {
		t.Errorf("report:\n%s", b.String())
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "calc/calc.go")); string(after) != string(before) {
		t.Error("the source tree was changed")
	}
}

// TestRun_BaselineMustPass: with a failing unmutated test no mutant can be
// judged, and Run says so.
func TestRun_BaselineMustPass(t *testing.T) {
	dir := fakeModule(t)
	p := filepath.Join(dir, "calc/calc.go")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), "delta / eps", "delta * eps", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &List{Mutants: []Mutant{{ID: "m", Bug: "b", File: "calc/calc.go", Old: "unused = 1", New: "unused = 2", Packages: []string{"./calc"}}}}
	if _, err := Run(context.Background(), l, Options{Root: dir, Timeout: 2 * time.Minute}); err == nil || !strings.Contains(err.Error(), "unmutated") {
		t.Errorf("err = %v, want the baseline failure", err)
	}
}

// TestLoad_Errors: a list error names the file, the mutant and the key.
func TestLoad_Errors(t *testing.T) {
	good := "[[mutant]]\nid = \"a\"\nbug = \"b\"\nfile = \"core/x.go\"\nold = \"1\"\nnew = \"2\"\npackages = [\"./core\"]\n"
	for _, tc := range []struct{ text, want string }{
		{good + good, "mutant[1] (a): id: duplicate"},
		{strings.Replace(good, "bug = \"b\"\n", "", 1), "bug: must say"},
		{strings.Replace(good, "core/x.go", "../x.go", 1), "file: must be a path inside the module"},
		{strings.Replace(good, "new = \"2\"", "new = \"1\"", 1), "old: must be set and differ"},
		{strings.Replace(good, "packages = [\"./core\"]\n", "", 1), "packages: must name"},
		{good + "colour = 1\n", "unknown key"},
		{"", "no [[mutant]]"},
	} {
		p := filepath.Join(t.TempDir(), "m.toml")
		os.WriteFile(p, []byte(tc.text), 0o644)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("error %v, want it to name %s and contain %q", err, p, tc.want)
		}
	}
	p := filepath.Join(t.TempDir(), "m.toml")
	os.WriteFile(p, []byte(good), 0o644)
	if l, err := Load(p); err != nil || len(l.Mutants) != 1 {
		t.Errorf("good list: %v %+v", err, l)
	}
}
