package datasets

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	t.Parallel()
	want := []string{"adult", "bank", "ipums-br", "ipums-us", "kddcup99", "magic", "twitter"}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
}

// TestRegistry_PinnedShapes pins the real shapes. Provenance:
// docs/datasets.md (sources, counts and the commands that checked them) for
// records and labels; Dim counts the observed levels (TestRealData_*
// re-derive all of them from the files when present).
func TestRegistry_PinnedShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		records, positives        int
		numeric, categorical, dim int
		task                      string
	}{
		{"adult", 30162, 7508, 6, 8, 104, TaskClassification},
		{"magic", 19020, 12332, 10, 0, 10, TaskClassification},
		{"kddcup99", 494021, 396743, 38, 3, 118, TaskClassification},
		{"bank", 45211, 5289, 7, 9, 51, TaskClassification},
		{"twitter", 583250, 0, 77, 0, 77, TaskRegression},
		// docs/datasets.md, ipums: 39,928 and 38,000 records (Wang, Kifer &
		// Lee 2019, Section 7), 57 and 52 coded features; class balance
		// unknown.
		{"ipums-us", 39928, 0, 57, 0, 57, TaskClassification},
		{"ipums-br", 38000, 0, 52, 0, 52, TaskClassification},
	}
	for _, tt := range tests {
		e, ok := Lookup(tt.name)
		if !ok {
			t.Fatalf("%s not registered", tt.name)
		}
		if e.Records != tt.records || e.Positives != tt.positives || len(e.Numeric) != tt.numeric ||
			len(e.Categorical) != tt.categorical || e.Dim != tt.dim || e.Task != tt.task {
			t.Errorf("%s: records %d positives %d numeric %d categorical %d dim %d task %s; want %+v",
				tt.name, e.Records, e.Positives, len(e.Numeric), len(e.Categorical), e.Dim, e.Task, tt)
		}
		if len(e.Attributes) != tt.numeric+tt.categorical {
			t.Errorf("%s: %d attributes", tt.name, len(e.Attributes))
		}
	}
	if e, _ := Lookup("kddcup99"); !slices.Equal(e.Categorical, []string{"protocol_type", "service", "flag"}) {
		t.Errorf("kddcup99 categorical = %q", e.Categorical)
	}
}

func TestRegistry_Entries(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		e, _ := Lookup(name)
		// The IPUMS extracts are under the IPUMS terms, not CC BY, and
		// cannot be downloaded: they say how to obtain them instead.
		ipums := strings.HasPrefix(name, "ipums-")
		if e.Description == "" || e.Citation == "" || (e.License != "CC BY 4.0") != ipums || e.Target == "" {
			t.Errorf("%s: incomplete entry %+v", name, e)
		}
		for _, f := range e.Files {
			if (len(f.Sources) == 0) != (f.Manual != "") {
				t.Errorf("%s: %s: want either download sources or manual instructions, not both or neither", name, f.Name)
			}
			if ipums && (len(f.Sources) != 0 || f.SHA256 != "") {
				t.Errorf("%s: %s: IPUMS file with a download source or pinned checksum", name, f.Name)
			}
			for _, s := range f.Sources {
				if !strings.HasPrefix(s.URL, "http") || !slices.Contains([]string{FormatPlain, FormatGzip, FormatZip, FormatTarGz}, s.Format) {
					t.Errorf("%s: bad source %v", name, s)
				}
				if (s.Format == FormatZip || s.Format == FormatTarGz) != (len(s.Members) > 0) {
					t.Errorf("%s: source %v: members must be given exactly for archives", name, s)
				}
			}
			if f.SHA256 == "" && !strings.HasPrefix(f.Note, "no pinned checksum") {
				t.Errorf("%s: %s has no checksum and no note saying so", name, f.Name)
			}
			if f.SHA256 != "" && len(f.SHA256) != 64 {
				t.Errorf("%s: %s: malformed digest %q", name, f.Name, f.SHA256)
			}
		}
	}
	bank, _ := Lookup("bank")
	if got := bank.Files[0].Sources[0].String(); got != "zip https://archive.ics.uci.edu/static/public/222/bank+marketing.zip → bank.zip → bank-full.csv" {
		t.Errorf("bank source = %q", got)
	}
	tw, _ := Lookup("twitter")
	if tw.Files[0].SHA256 != "" || tw.Files[0].Name != "Twitter.data" {
		t.Errorf("twitter file = %+v, want Twitter.data with no pinned checksum", tw.Files[0])
	}
}

func TestLookup_ReturnsCopy(t *testing.T) {
	t.Parallel()
	e, _ := Lookup("bank")
	e.Files[0].Name = "changed"
	e.Files[0].Sources[0].Members[0] = "changed"
	e.Numeric[0] = "changed"
	f, _ := Lookup("bank")
	if f.Files[0].Name != "bank-full.csv" || f.Files[0].Sources[0].Members[0] != "bank.zip" || f.Numeric[0] != "age" {
		t.Error("mutating a Lookup result changed the registry")
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup(nope) succeeded")
	}
}

func TestLoad_UnknownAndBadOptions(t *testing.T) {
	t.Parallel()
	if _, err := Load("nope", Options{}); !errors.Is(err, ErrUnknownDataset) {
		t.Errorf("Load(nope) error = %v, want ErrUnknownDataset", err)
	}
	_, err := Load("magic", Options{Synthetic: "sometimes", Preprocess: Preprocessing{RowNorm: "l3"}})
	if err == nil || !strings.Contains(err.Error(), `synthetic: unknown value "sometimes"`) ||
		!strings.Contains(err.Error(), `preprocess.row_norm: unknown value "l3"`) {
		t.Errorf("error = %v, want both option errors", err)
	}
}

func TestLoad_MissingFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Load("magic", Options{DataDir: dir, Synthetic: SyntheticNever})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "magic04.data") {
		t.Errorf("never: error = %v, want ErrNotFound naming magic04.data", err)
	}
	ds, err := Load("magic", Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Source.Kind != KindSynthetic || !strings.Contains(ds.Source.Params["reason"], "magic04.data") {
		t.Errorf("auto: source = %v, want synthetic with the missing file as reason", ds.Source)
	}
}

// TestLoad_CorruptFile: a present file with the wrong content is an error
// in every mode but "always", never a silent synthetic fallback.
func TestLoad_CorruptFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content, err := os.ReadFile("testdata/magic_ok.data")
	if err != nil {
		t.Fatal(err)
	}
	writeGzip(t, filepath.Join(dir, "magic04.data.gz"), content)
	want := builtinEntry("magic").Files[0].SHA256
	for _, mode := range []string{SyntheticAuto, SyntheticNever} {
		_, err := Load("magic", Options{DataDir: dir, Synthetic: mode})
		var ce *ChecksumError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: error = %v, want *ChecksumError", mode, err)
		}
		for _, s := range []string{"magic04.data", magicOKSHA256, want} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not name %s", mode, err, s)
			}
		}
	}
	st, err := Inspect("magic", dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || st[0].State != StateMismatch || st[0].SHA256 != magicOKSHA256 || st[0].Want != want || !errors.Is(st[0].Err, ErrChecksum) {
		t.Errorf("Inspect = %+v", st)
	}
}

// TestLoad_TwitterUnverified reads a Twitter.data present in the data
// directory: with no pinned checksum it loads, marked unverified.
func TestLoad_TwitterUnverified(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content, err := os.ReadFile("testdata/twitter_ok.data")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Twitter.data"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := Load("twitter", Options{DataDir: dir, Synthetic: SyntheticNever, Preprocess: Preprocessing{TargetLog1p: true}})
	if err != nil {
		t.Fatal(err)
	}
	f := ds.Source.Files[0]
	if ds.Source.Kind != KindReal || f.Verified || f.SHA256 != twitterOKSHA256 || f.Records != 3 {
		t.Errorf("source = %+v", ds.Source)
	}
	if !strings.Contains(ds.Source.String(), "not pinned") {
		t.Errorf("Source.String() = %q, want it to say not pinned", ds.Source)
	}
	st, _ := Inspect("twitter", dir)
	if st[0].State != StateUnpinned || st[0].Err != nil || st[0].SHA256 != twitterOKSHA256 {
		t.Errorf("Inspect = %+v", st[0])
	}
	// 3 records against the 583,250 of the UCI page: a warning, from both.
	const w = "Twitter.data: 3 records, documented 583,250"
	if st[0].Warning != w || len(ds.Warnings) != 1 || ds.Warnings[0] != w || f.Warning != w {
		t.Errorf("warnings: Inspect %q, Load %q, file record %q; want %q", st[0].Warning, ds.Warnings, f.Warning, w)
	}
}

func TestInspect_Absent(t *testing.T) {
	t.Parallel()
	st, err := Inspect("kddcup99", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || st[0].State != StateAbsent || st[0].Err != nil || st[0].Name != "kddcup.data_10_percent" {
		t.Errorf("Inspect = %+v", st)
	}
	if _, err := Inspect("nope", ""); !errors.Is(err, ErrUnknownDataset) {
		t.Errorf("Inspect(nope) error = %v", err)
	}
}
