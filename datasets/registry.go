package datasets

import (
	"fmt"
	"slices"
)

// Task names used in [Entry.Task] and [Dataset.Task].
const (
	TaskClassification = "classification"
	TaskRegression     = "regression"
)

// Download formats used in [Download.Format].
const (
	// FormatPlain: the response body is the file itself.
	FormatPlain = "plain"
	// FormatGzip: the response body is the file, gzip-compressed.
	FormatGzip = "gzip"
	// FormatZip: the response body is a zip archive; Members names the path
	// of the file inside it. With several Members every member but the last
	// is itself a zip archive (a zip inside a zip, as for bank).
	FormatZip = "zip"
	// FormatTarGz: the response body is a gzip-compressed tar archive;
	// Members[0] names the file inside it.
	FormatTarGz = "tar.gz"
)

// Entry is the registry record of one named dataset: where its files come
// from, how to check them, and what the parsed table looks like.
//
// Entries returned by [Lookup] are copies; changing one does not change the
// registry.
type Entry struct {
	// Name is the registry key, e.g. "adult".
	Name string
	// Description says in one sentence what a record is and what is predicted.
	Description string
	// Citation is the dataset citation (docs/datasets.md lists them).
	Citation string
	// License is the licence the data is distributed under.
	License string
	// Task is TaskClassification (labels ±1) or TaskRegression (real target).
	Task string
	// Files lists the files the loader reads. Files[0] is the data file.
	Files []FileSpec
	// Records is the number of records the loader keeps from the real file
	// (after dropping incomplete records); 0 means unknown.
	Records int
	// Positives is the number of records labelled +1 in the real file
	// (classification only); 0 means unknown or not applicable.
	Positives int
	// Attributes names every raw attribute in file order, excluding the label
	// or target.
	Attributes []string
	// Numeric names the numeric attributes, in file order.
	Numeric []string
	// Categorical names the categorical attributes, in file order.
	Categorical []string
	// Target names the label or target column.
	Target string
	// Dim is the number of design-matrix columns after full one-hot encoding
	// of every attribute, before any intercept; 0 means unknown.
	Dim int
	// Domain is the documented public domain of the records (the range of
	// each numeric attribute, the levels of each categorical one) that
	// Preprocessing.Scaling "public" scales by; nil when the documentation
	// gives none (see domain_builtin.go for the sources).
	Domain *Domain

	format *format
	synth  *synthSchema
}

// FileSpec describes one file of a dataset.
type FileSpec struct {
	// Name is the plain file name the loader looks for in the data directory
	// (it also accepts Name+".gz").
	Name string
	// SHA256 is the lowercase hex SHA-256 digest of the decompressed file.
	// Empty means no pinned checksum: the file is read but cannot be verified.
	SHA256 string
	// Size is the decompressed size in bytes; 0 means unknown.
	Size int64
	// Sources lists the canonical download locations, tried in order by
	// [Fetch].
	Sources []Download
	// Note explains anything unusual, e.g. why there is no pinned checksum.
	Note string
	// Manual, for a file with no Sources, says why it cannot be downloaded
	// and how the user obtains it; [Fetch] returns it in its error
	// (wrapping [ErrNoDownload]) and [Load] with Synthetic "never" appends
	// it to the not-found error. Empty for downloadable files.
	Manual string
}

// Download is one way to obtain a file: a URL and how to extract the file
// from what it serves.
type Download struct {
	// URL is the canonical download address.
	URL string
	// Format is FormatPlain, FormatGzip, FormatZip or FormatTarGz.
	Format string
	// Members is the path of the file inside the archive (zip, tar.gz),
	// outermost first; empty for plain and gzip.
	Members []string
}

// String describes the download, e.g.
// "zip https://…/bank+marketing.zip → bank.zip → bank-full.csv".
func (d Download) String() string {
	s := d.Format + " " + d.URL
	for _, m := range d.Members {
		s += " → " + m
	}
	return s
}

// Lookup returns a copy of the registry entry of the built-in dataset name:
// its files, checksums, citation and shape. A dataset registered with
// [Register] (a [Provider] of a user's Go module) has no Entry: Lookup
// reports false for it, and [Registered] returns it.
func Lookup(name string) (Entry, bool) {
	e, ok := registry.entry(name)
	if !ok {
		return Entry{}, false
	}
	return e.clone(), true
}

// lookup returns the built-in entry of name, or an error wrapping
// ErrUnknownDataset (a name nobody registered) or ErrNoFiles (a Go
// provider, which has no files to inspect, fetch or read here).
func lookup(name string) (*Entry, error) {
	if e, ok := registry.entry(name); ok {
		return e, nil
	}
	if _, ok := registry.get(name); ok {
		return nil, fmt.Errorf("%w: %q is computed by a Go provider (registered with datasets.Register)", ErrNoFiles, name)
	}
	return nil, fmt.Errorf("%w %q (registered: %v)", ErrUnknownDataset, name, Names())
}

func (e *Entry) clone() Entry {
	c := *e
	c.Files = make([]FileSpec, len(e.Files))
	for i, f := range e.Files {
		f.Sources = slices.Clone(f.Sources)
		for j := range f.Sources {
			f.Sources[j].Members = slices.Clone(f.Sources[j].Members)
		}
		c.Files[i] = f
	}
	c.Attributes = slices.Clone(e.Attributes)
	c.Numeric = slices.Clone(e.Numeric)
	c.Categorical = slices.Clone(e.Categorical)
	if e.Domain != nil {
		d := e.Domain.Clone()
		c.Domain = &d
	}
	return c
}

// Pinned shapes of the real files. Provenance: the record and label counts
// are those of docs/datasets.md, which gives the commands that count them
// in the checksum-pinned files, and TestRealData_* re-derives them from
// those files. The one-hot dimensions are the numbers of observed levels in
// those files.
const (
	adultRecords   = 30162 // 32,561 records minus 2,399 containing '?'
	adultPositives = 7508  // ">50K" among the 30,162 complete records
	adultDim       = 104   // 6 numeric + 98 one-hot indicators

	magicRecords   = 19020
	magicPositives = 12332 // class "g"
	magicDim       = 10

	kddRecords   = 494021
	kddPositives = 396743 // 494,021 − 97,278 "normal."
	kddDim       = 118    // 38 numeric + 3 + 66 + 11 one-hot indicators

	bankRecords   = 45211
	bankPositives = 5289 // y = "yes"
	bankDim       = 51   // 7 numeric + 44 one-hot indicators

	twitterRecords = 583250 // UCI landing page; no local copy to check
	twitterDim     = 77

	// IPUMS extracts of PrivGene (Zhang et al. 2013) as used by Wang, Kifer
	// & Lee (2019): record counts from their Section 7 and Table 1, coded
	// dimensions of the plain-matrix form (docs/datasets.md, ipums, which
	// notes that their Table 1 gives 53 for BR); no local copy to check, and
	// the class balance is not documented (Positives = 0).
	ipumsUSRecords = 39928
	ipumsUSDim     = 57
	ipumsBRRecords = 38000
	ipumsBRDim     = 52
)

// ipumsLicense is the Entry.License of the IPUMS extracts.
const ipumsLicense = "IPUMS terms of use: free for research, redistribution forbidden without permission " +
	"(https://www.ipums.org/about/terms)"

// ipumsPrivGene cites the paper whose coded extracts later DP papers reuse.
const ipumsPrivGene = "Coded extract as used by Zhang, J., Xiao, X., Yang, Y., Zhang, Z., and Winslett, M. (2013). " +
	"PrivGene: differentially private model fitting using genetic algorithms. Proc. ACM SIGMOD 2013, 665-676. " +
	"https://doi.org/10.1145/2463676.2465330"

// ipumsManual returns FileSpec.Manual for an IPUMS extract.
func ipumsManual(file, site string, d int) string {
	return fmt.Sprintf("the IPUMS terms of use forbid redistributing census extracts, so %s cannot be downloaded "+
		"automatically: obtain the extract yourself from %s (free registration; agree to the terms), code it as "+
		"a plain matrix (one record per line, %d space-separated feature values, then the 0/1 label) and place it "+
		"in the data directory as %s or %s.gz", file, site, d, file, file)
}

// fill derives the attribute lists and target of e from its format.
func (e *Entry) fill() *Entry {
	for _, a := range e.format.attrs {
		e.Attributes = append(e.Attributes, a.name)
		if a.kind == numericAttr {
			e.Numeric = append(e.Numeric, a.name)
		} else {
			e.Categorical = append(e.Categorical, a.name)
		}
	}
	e.Target = e.format.target
	return e
}

func numericAttrs(names ...string) []attribute {
	a := make([]attribute, len(names))
	for i, n := range names {
		a[i] = attribute{name: n, kind: numericAttr}
	}
	return a
}

// builtinEntries returns the entries of the built-in datasets; the
// package-level registry is initialised from them (see provider.go).
func builtinEntries() []*Entry {
	return []*Entry{(&Entry{
		Name: "adult",
		Description: "UCI Adult (1994 US Census extract): predict whether income exceeds $50K/yr; " +
			"adult.data with records containing '?' dropped",
		Citation: "Becker, B. and Kohavi, R. (1996). Adult [Dataset]. UCI Machine Learning Repository. " +
			"https://doi.org/10.24432/C5XW20",
		License: "CC BY 4.0",
		Task:    TaskClassification,
		Files: []FileSpec{{
			Name:   "adult.data",
			SHA256: "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
			Size:   3974305,
			Sources: []Download{
				{URL: "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data", Format: FormatPlain},
				{URL: "https://archive.ics.uci.edu/static/public/2/adult.zip", Format: FormatZip, Members: []string{"adult.data"}},
			},
		}},
		Records:   adultRecords,
		Positives: adultPositives,
		Dim:       adultDim,
		Domain:    adultDomain,
		format:    adultFormat,
		synth:     adultSynth,
	}).fill(), (&Entry{
		Name:        "magic",
		Description: "UCI MAGIC Gamma Telescope: classify Cherenkov shower images as gamma (g, +1) or hadron (h, −1)",
		Citation: "Bock, R. (2004). MAGIC Gamma Telescope [Dataset]. UCI Machine Learning Repository. " +
			"https://doi.org/10.24432/C52C8B",
		License: "CC BY 4.0",
		Task:    TaskClassification,
		Files: []FileSpec{{
			Name:   "magic04.data",
			SHA256: "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a",
			Size:   1477391,
			Sources: []Download{
				{URL: "https://archive.ics.uci.edu/ml/machine-learning-databases/magic/magic04.data", Format: FormatPlain},
				{URL: "https://archive.ics.uci.edu/static/public/159/magic+gamma+telescope.zip", Format: FormatZip, Members: []string{"magic04.data"}},
			},
		}},
		Records:   magicRecords,
		Positives: magicPositives,
		Dim:       magicDim,
		Domain:    magicDomain,
		format:    magicFormat,
		synth:     magicSynth,
	}).fill(), (&Entry{
		Name:        "kddcup99",
		Description: "KDD Cup 1999 network intrusion data, 10% training subset: classify connections as attack (+1) or normal (−1)",
		Citation: "Stolfo, S., Fan, W., Lee, W., Prodromidis, A., and Chan, P. (1999). KDD Cup 1999 Data [Dataset]. " +
			"UCI Machine Learning Repository. https://doi.org/10.24432/C51C7N",
		License: "CC BY 4.0",
		Task:    TaskClassification,
		Files: []FileSpec{{
			Name:   "kddcup.data_10_percent",
			SHA256: "f8c8267ebcd9c0ed1fd7d6277fe5bfff8732e9b7db8e61b873542b2a534b6f9a",
			Size:   74889749,
			Sources: []Download{
				{URL: "https://archive.ics.uci.edu/ml/machine-learning-databases/kddcup99-mld/kddcup.data_10_percent.gz", Format: FormatGzip},
				{URL: "http://kdd.ics.uci.edu/databases/kddcup99/kddcup.data_10_percent.gz", Format: FormatGzip},
			},
		}},
		Records:   kddRecords,
		Positives: kddPositives,
		Dim:       kddDim,
		format:    kddFormat,
		synth:     kddSynth,
	}).fill(), (&Entry{
		Name:        "bank",
		Description: "UCI Bank Marketing (bank-full.csv): predict whether a client subscribes a term deposit (y)",
		Citation: "Moro, S., Rita, P., and Cortez, P. (2014). Bank Marketing [Dataset]. UCI Machine Learning Repository. " +
			"https://doi.org/10.24432/C5K306. Related paper: S. Moro, P. Cortez and P. Rita, \"A Data-Driven Approach " +
			"to Predict the Success of Bank Telemarketing\", Decision Support Systems 62:22-31, 2014",
		License: "CC BY 4.0",
		Task:    TaskClassification,
		Files: []FileSpec{{
			Name:   "bank-full.csv",
			SHA256: "d1513ec63b385506f7cfce9f2c5caa9fe99e7ba4e8c3fa264b3aaf0f849ed32d",
			Size:   4610348,
			Sources: []Download{
				{URL: "https://archive.ics.uci.edu/static/public/222/bank+marketing.zip", Format: FormatZip, Members: []string{"bank.zip", "bank-full.csv"}},
				{URL: "https://archive.ics.uci.edu/ml/machine-learning-databases/00222/bank.zip", Format: FormatZip, Members: []string{"bank-full.csv"}},
			},
		}},
		Records:   bankRecords,
		Positives: bankPositives,
		Dim:       bankDim,
		Domain:    bankDomain,
		format:    bankFormat,
		synth:     bankSynth,
	}).fill(), (&Entry{
		Name: "twitter",
		Description: "UCI Buzz in social media, Twitter regression set: predict the mean number of active " +
			"discussions (Annotation) from 77 activity features (11 families × 7 time steps)",
		Citation: "Kawala, F., Douzal, A., Gaussier, E., and Diemert, E. (2013). Buzz in social media [Dataset]. " +
			"UCI Machine Learning Repository. https://archive.ics.uci.edu/dataset/248/buzz+in+social+media",
		License: "CC BY 4.0",
		Task:    TaskRegression,
		Files: []FileSpec{{
			Name: "Twitter.data",
			Sources: []Download{
				{URL: "https://archive.ics.uci.edu/ml/machine-learning-databases/00248/regression.tar.gz", Format: FormatTarGz,
					Members: []string{"regression/Twitter/Twitter.data"}},
			},
			Note: "no pinned checksum: no copy could be obtained to pin one, so the file is read unverified " +
				"(FileRecord.Verified = false)",
		}},
		Records: twitterRecords,
		Dim:     twitterDim,
		format:  twitterFormat,
		synth:   twitterSynth,
	}).fill(), (&Entry{
		Name: "ipums-us",
		Description: "IPUMS-USA census extract of PrivGene (Zhang et al. 2013), as in Wang, Kifer & Lee (2019) " +
			"Tables 5 and 6: predict a 0/1 label (−1/+1) from 57 coded features (partly one-hot); " +
			"not redistributable: the user must supply ipums-us.txt (plain matrix, label last)",
		Citation: "Ruggles, S., et al. IPUMS USA [Dataset]. Minneapolis, MN: Minnesota Population Center, " +
			"University of Minnesota. https://usa.ipums.org. " + ipumsPrivGene,
		License: ipumsLicense,
		Task:    TaskClassification,
		Files: []FileSpec{{
			Name: "ipums-us.txt",
			Note: "no pinned checksum: the extract is not redistributable and no copy was available to pin one, " +
				"so the file is read unverified (FileRecord.Verified = false)",
			Manual: ipumsManual("ipums-us.txt", "https://usa.ipums.org", ipumsUSDim),
		}},
		Records: ipumsUSRecords,
		Dim:     ipumsUSDim,
		format:  ipumsUSFormat,
		synth:   ipumsUSSynth,
	}).fill(), (&Entry{
		Name: "ipums-br",
		Description: "IPUMS-International census extract for Brazil of PrivGene (Zhang et al. 2013), as in " +
			"Wang, Kifer & Lee (2019) Tables 5 and 6: predict a 0/1 label (−1/+1) from 52 coded features " +
			"(partly one-hot); not redistributable: the user must supply ipums-br.txt (plain matrix, label last)",
		Citation: "Minnesota Population Center. Integrated Public Use Microdata Series, International [Dataset]. " +
			"Minneapolis, MN: University of Minnesota. https://international.ipums.org. " + ipumsPrivGene,
		License: ipumsLicense,
		Task:    TaskClassification,
		Files: []FileSpec{{
			Name: "ipums-br.txt",
			Note: "no pinned checksum: the extract is not redistributable and no copy was available to pin one, " +
				"so the file is read unverified (FileRecord.Verified = false)",
			Manual: ipumsManual("ipums-br.txt", "https://international.ipums.org", ipumsBRDim),
		}},
		Records: ipumsBRRecords,
		Dim:     ipumsBRDim,
		format:  ipumsBRFormat,
		synth:   ipumsBRSynth,
	}).fill()}
}
