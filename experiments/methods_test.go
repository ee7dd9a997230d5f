package experiments_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/dprepro/dprepro/experiments"
)

const methodSpec = `schema = 1
id = "m"
kind = "cv-tuning"
seed = 1

[[methods]]
name = "py-lr"
serves = "learner"
command = ["python3", "method.py"]
files = ["helper.py"]

[data]
datasets = ["magic"]

[tuning]
lambdas = [0.1, 1.0]
alphas = [1.0]
methods = ["alphaSplit"]
learners = ["objective-perturbation", "py-lr"]
`

// TestMethods_IdentityCoversFiles checks that the spec hash covers the
// method's files: editing the script or a listed file changes it (a
// resumed run would otherwise mix the old method's rows with the new
// one's), and so the digests are recorded.
func TestMethods_IdentityCoversFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("spec.toml", methodSpec)
	write("method.py", "print('v1')\n")
	write("helper.py", "X = 1\n")
	load := func() *Spec {
		t.Helper()
		s, err := Load(filepath.Join(dir, "spec.toml"), "", testKinds)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s1 := load()
	m, ok := s1.Method("py-lr")
	if !ok || len(m.Digests()) != 2 || m.Digests()[0].Path != "method.py" || m.Digests()[1].Path != "helper.py" {
		t.Fatalf("digests %+v", m.Digests())
	}
	if h := load().Hash(); h != s1.Hash() {
		t.Fatal("the hash of an unchanged spec changed")
	}
	write("method.py", "print('v2')\n")
	s2 := load()
	if s2.Hash() == s1.Hash() {
		t.Fatal("editing the method's script left the spec hash unchanged")
	}
	write("helper.py", "X = 2\n")
	if load().Hash() == s2.Hash() {
		t.Fatal("editing a file in methods[].files left the spec hash unchanged")
	}
	os.Remove(filepath.Join(dir, "helper.py"))
	if _, err := Load(filepath.Join(dir, "spec.toml"), "", testKinds); err == nil || !strings.Contains(err.Error(), "spec.toml:10: methods[0].files[0]: cannot read") {
		t.Fatalf("a missing listed file: %v", err)
	}
}

func TestMethods_Validation(t *testing.T) {
	tests := []struct {
		name, edit, want string
	}{
		{"serves", `serves = "learner"` + "\x00" + `serves = "solver"`, `spec.toml:8: methods[0].serves: must be one of learner, ci, hypothesis (got "solver")`},
		{"serves-kind", `serves = "learner"` + "\x00" + `serves = "ci"`, `spec.toml:8: methods[0].serves: a cv-tuning spec runs external methods serving learner, not "ci"`},
		{"command", `command = ["python3", "method.py"]` + "\x00" + `command = []`, `spec.toml:9: methods[0].command: required`},
		{"timeout", `files = ["helper.py"]` + "\x00" + `timeout = "soon"`, `spec.toml:10: methods[0].timeout: must be a positive duration`},
		{"shadow", `name = "py-lr"` + "\x00" + `name = "objective-perturbation"`, `spec.toml:7: methods[0].name: "objective-perturbation" is the name of a registered learner method`},
		{"unknown", `"objective-perturbation", "py-lr"]` + "\x00" + `"objective-perturbation", "py-lrr"]`, `tuning.learners[1]: unknown learner "py-lrr"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			old, repl, _ := strings.Cut(tc.edit, "\x00")
			src := strings.Replace(methodSpec, old, repl, 1)
			if src == methodSpec {
				t.Fatalf("edit %q does not apply", old)
			}
			os.WriteFile(filepath.Join(dir, "method.py"), nil, 0o644)
			os.WriteFile(filepath.Join(dir, "helper.py"), nil, 0o644)
			path := filepath.Join(dir, "spec.toml")
			os.WriteFile(path, []byte(src), 0o644)
			_, err := Load(path, "", testKinds)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %q", err, tc.want)
			}
		})
	}
}
