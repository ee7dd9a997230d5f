package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/dprepro/dprepro/runner"
)

// k8sManifest is the Kubernetes launcher, relative to the cli folder.
var k8sManifest = filepath.Join("..", "scripts", "k8s-indexed-job.yaml")

// decodeJobStrict decodes a manifest into the official batch/v1 Job type
// as the API server's strict field validation (kubectl apply
// --validate=strict) does: a duplicate key, a field the type does not
// have, or a known field spelled in another case is an error.
func decodeJobStrict(manifest []byte) (*batchv1.Job, error) {
	data, err := yaml.YAMLToJSONStrict(manifest)
	if err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	var job batchv1.Job
	strict, err := json.UnmarshalStrict(data, &job, json.DisallowDuplicateFields, json.DisallowUnknownFields)
	if err != nil {
		return nil, err
	}
	if len(strict) > 0 {
		return nil, errors.Join(strict...)
	}
	return &job, nil
}

// TestK8sIndexedJob_Decode decodes scripts/k8s-indexed-job.yaml strictly
// into k8s.io/api's batch/v1 Job and checks that it shards as the
// clusters guide (docs/clusters.md) says, without a cluster: an Indexed Job whose completion count is
// the --shard-count of its command; that command, expanded by sh with
// each JOB_COMPLETION_INDEX, parsed by run's own flags, runs shard i of
// that count into its own folder on the mounted volume, with as many
// workers as the pod requests CPUs; and the merge command in the file's
// header reads those folders with the same spec, profile and data.
func TestK8sIndexedJob_Decode(t *testing.T) {
	manifest, err := os.ReadFile(k8sManifest)
	if err != nil {
		t.Fatal(err)
	}
	job, err := decodeJobStrict(manifest)
	if err != nil {
		t.Fatalf("%s: %v", k8sManifest, err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Fatalf("apiVersion %q kind %q: want batch/v1 Job", job.APIVersion, job.Kind)
	}
	spec := job.Spec
	if mode := spec.CompletionMode; mode == nil || *mode != batchv1.IndexedCompletion {
		t.Fatalf("completionMode %s: want Indexed (JOB_COMPLETION_INDEX is set only then)", ptrString(mode))
	}
	if spec.Completions == nil || *spec.Completions < 1 {
		t.Fatalf("completions %v: an Indexed Job needs a count >= 1", spec.Completions)
	}
	completions := int(*spec.Completions)
	if spec.Parallelism == nil || *spec.Parallelism < 1 || *spec.Parallelism > *spec.Completions {
		t.Errorf("parallelism %v: want 1..completions (%d)", spec.Parallelism, completions)
	}
	if spec.BackoffLimit == nil || *spec.BackoffLimit < 1 {
		t.Errorf("backoffLimit %v: a pod that dies must be retried (it resumes from its checkpoint)", spec.BackoffLimit)
	}
	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyOnFailure && pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q: a Job's pods must use OnFailure or Never", pod.RestartPolicy)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	for _, e := range c.Env {
		// With --shard auto, Slurm's variables win over Kubernetes' index.
		if e.Name == "JOB_COMPLETION_INDEX" || strings.HasPrefix(e.Name, "SLURM_ARRAY_TASK_") {
			t.Errorf("the container sets %s itself: the index must come from Kubernetes", e.Name)
		}
	}
	if len(c.Command) != 2 || c.Command[0] != "/bin/sh" || c.Command[1] != "-c" || len(c.Args) != 1 {
		t.Fatalf("command %q args %q: want /bin/sh -c SCRIPT", c.Command, c.Args)
	}
	script := c.Args[0]
	if !strings.Contains(script, "go build -buildvcs=true -o bin/dprepro ./cmd/dprepro &&") {
		t.Errorf("the script does not build bin/dprepro from the checkout first: %q", script)
	}
	_, last, ok := strings.Cut(script, "&& exec ")
	if !ok {
		t.Fatalf("no '&& exec' of the binary in %q", script)
	}
	mounts := map[string]string{} // mount path -> claim name
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.PersistentVolumeClaim != nil {
				mounts[m.MountPath] = v.PersistentVolumeClaim.ClaimName
			}
		}
	}
	onVolume := func(p string) bool {
		for mp := range mounts {
			if strings.HasPrefix(p, strings.TrimSuffix(mp, "/")+"/") {
				return true
			}
		}
		return false
	}

	var run runFlags
	var spec0 string
	outs := map[string]int{}
	for i := range completions {
		// sh expands the command as the pod's shell does.
		cmd := exec.Command("/bin/sh", "-c", `printf '%s\n' `+last)
		cmd.Env = append(os.Environ(), "JOB_COMPLETION_INDEX="+strconv.Itoa(i))
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("sh: %v", err)
		}
		args := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(args) < 2 || args[0] != "bin/dprepro" || args[1] != "run" {
			t.Fatalf("the pod runs %q, want bin/dprepro run ...", args)
		}
		var f runFlags
		fs := newFlagSet("run", nil)
		f.registerRun(fs)
		f.registerData(fs)
		f.registerShard(fs)
		specs, err := parseInterleaved(fs, args[2:])
		if err != nil {
			t.Fatalf("dprepro run %q: %v", args[2:], err)
		}
		if len(specs) != 1 {
			t.Fatalf("dprepro run names specs %q, want one", specs)
		}
		if i == 0 && f.shard != "auto" {
			t.Errorf("--shard %q: want auto (the index from JOB_COMPLETION_INDEX)", f.shard)
		}
		if i == 0 && f.shards != completions {
			t.Errorf("--shard-count %d: want completions (%d)", f.shards, completions)
		}
		getenv := func(k string) string {
			if k == "JOB_COMPLETION_INDEX" {
				return strconv.Itoa(i)
			}
			return ""
		}
		sh, err := f.shardOf(getenv)
		if err != nil || sh.Index != i || sh.Count != completions {
			t.Errorf("JOB_COMPLETION_INDEX=%d: shard %+v (%v), want %d/%d", i, sh, err, i, completions)
		}
		if j, dup := outs[f.out]; dup {
			t.Errorf("indexes %d and %d write to the same --out %s", j, i, f.out)
		}
		outs[f.out] = i
		if !onVolume(f.out) || !onVolume(f.dataDir) {
			t.Errorf("--out %s and --data-dir %s must be on a mounted claim (%v)", f.out, f.dataDir, mounts)
		}
		run, spec0 = f, specs[0]
	}

	// The spec, at the profile, as the image would load it (the checkout
	// at workingDir); the merge names it by its built-in id.
	if c.WorkingDir == "" {
		t.Error("no workingDir: the spec path is relative to the checkout")
	}
	if _, err := os.Stat(filepath.Join("..", spec0)); err != nil {
		t.Errorf("the spec %s is not in the repository: %v", spec0, err)
	}
	if err := registerBuiltins(); err != nil {
		t.Fatal(err)
	}
	s, err := runner.Kinds.LoadBuiltin(spec0, run.profile)
	if err != nil {
		t.Fatal(err)
	}
	var cpus int64
	if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		cpus = q.Value()
	}
	if int64(run.workers) != cpus {
		t.Errorf("--workers %d, but the pod requests %d CPUs", run.workers, cpus)
	}
	for out := range outs {
		if filepath.Base(out) != strconv.Itoa(outs[out]) {
			t.Errorf("--out %s of index %d: want the index as the last element", out, outs[out])
		}
	}

	// The header: kubectl wait names the Job; the merge reads every
	// shard's folder (the glob of their parent) with the same spec,
	// profile and data.
	if !bytes.Contains(manifest, []byte("job/"+job.Name+"\n")) {
		t.Errorf("the header's kubectl wait does not name job/%s", job.Name)
	}
	m := regexp.MustCompile(`(?m)^#\s+(bin/dprepro merge .*\\\n(?:#.*\\\n)*#.*)$`).FindSubmatch(manifest)
	if m == nil {
		t.Fatal("no bin/dprepro merge command in the header")
	}
	merge := regexp.MustCompile(`\\\n#\s*`).ReplaceAllString(string(m[1]), " ")
	fields := strings.Fields(merge)
	flagValue := func(name string) string {
		for j := 0; j+1 < len(fields); j++ {
			if fields[j] == name {
				return fields[j+1]
			}
		}
		return ""
	}
	if fields[2] != s.ID {
		t.Errorf("the merge names spec %q, the pods run %q", fields[2], s.ID)
	}
	if p := flagValue("--profile"); p != run.profile {
		t.Errorf("the merge's --profile %q, the pods' %q", p, run.profile)
	}
	if d := flagValue("--data-dir"); d != run.dataDir {
		t.Errorf("the merge's --data-dir %q, the pods' %q (the checkpoints record the data)", d, run.dataDir)
	}
	glob := regexp.MustCompile(`--shards \$\(ls -d (\S+) `).FindStringSubmatch(merge)
	if glob == nil || filepath.Dir(glob[1]) != filepath.Dir(run.out) || filepath.Base(glob[1]) != "*" {
		t.Errorf("the merge's --shards %q does not list the pods' folders %s/<i>", glob, filepath.Dir(run.out))
	}
	if o := flagValue("--out"); o == "" || !onVolume(o) {
		t.Errorf("the merge's --out %q: want a folder on the claim", o)
	}
}

// ptrString prints an optional field: its value, or "unset".
func ptrString[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// TestK8sIndexedJob_Strict checks that decodeJobStrict refuses what the
// API server's strict validation refuses, so that the test above proves
// something: a misspelt field, a field in the wrong case, a field at the
// wrong level and a duplicate key, each made from the real manifest.
func TestK8sIndexedJob_Strict(t *testing.T) {
	manifest, err := os.ReadFile(k8sManifest)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, old, new string }{
		{"misspelt", "completionMode: Indexed", "completionsMode: Indexed"},
		{"case", "  parallelism:", "  Parallelism:"},
		{"level", "      restartPolicy: OnFailure", "      restartPolicy: OnFailure\n      completions: 10"},
		{"duplicate", "  parallelism: 10", "  parallelism: 10\n  parallelism: 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(manifest, []byte(tt.old)) {
				t.Fatalf("the manifest no longer holds %q: update the case", tt.old)
			}
			bad := bytes.Replace(manifest, []byte(tt.old), []byte(tt.new), 1)
			if _, err := decodeJobStrict(bad); err == nil {
				t.Errorf("%q -> %q decoded without an error", tt.old, tt.new)
			}
		})
	}
}
