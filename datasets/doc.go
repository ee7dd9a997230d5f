// Package datasets loads the public datasets of the dprepro experiments as
// design matrices: a registry of named datasets (adult, magic, kddcup99,
// bank, twitter, ipums-us, ipums-br, and any a Go module registers),
// streaming loaders that verify SHA-256 checksums, users' own data files
// (csv, tsv, npy), the preprocessing the reproduced papers use, synthetic
// stand-ins for absent files, and a downloader.
//
//	ds, err := datasets.Load("magic", datasets.Options{
//		Preprocess: datasets.Preprocessing{Intercept: true}, // maxabs columns, l2-max rows
//	})
//
// # Registry and providers
//
// A dataset is a [Provider]: a name, a one-line description, and a Read
// that returns the raw table with its provenance ([Source]); [Load]
// applies the preprocessing afterwards, the same way for every provider.
// One registry holds them: the built-in datasets from the start, and what a
// user's Go module adds with [Register] before it calls cli.Main. [Names]
// lists both; [Lookup] returns the file-level [Entry] of a built-in one.
// Provenance is checked: a provider's data is [KindReal] only with the
// SHA-256 of every file it read, and anything computed is [KindSynthetic]
// with a named generator.
//
// # Your own data file
//
// A spec's [data.files.NAME] table describes a csv, tsv or npy file
// ([FileOptions], [LoadFile]): the label column (or, for npy, its index or
// a separate labels file), the value read as +1, the categorical columns,
// an optional SHA-256 pin. It is read whenever it is named, never replaced
// by a stand-in, and its path and digest go into the manifest and the
// checkpoint identity.
//
// # Data directory
//
// The project never ships data. Real files live in a data directory found
// by one search order, the binary's and the scripts' ([ResolveDataDir]):
// the --data-dir flag, else $DPREPRO_DATA, else
// os.UserCacheDir()/dprepro/data (where [Fetch] downloads by default), else
// os.TempDir()/dprepro/data. The first two are named by the user
// ([DataDir.Named]): a named directory that does not exist is an error
// ([DataDir.Check], [ErrDataDir]), and so is a file missing from it unless
// the spec allows the stand-in. A file NAME may be stored plain or as
// NAME.gz (read through compress/gzip); the plain file wins when both
// exist. [Fetch] downloads missing files from their canonical UCI URLs.
//
// # File states
//
// [Inspect] classifies each file as one [FileState]: absent; verified;
// present, not pinned; checksum mismatch; corrupt (a .gz that fails when
// read to the end, trailer included); not a regular file (a directory,
// FIFO, socket or device, never opened); a broken symbolic link (a loop, or
// a link to nothing); unreadable. [Load] classifies through the same code,
// so `dprepro list`, `dprepro data verify` and `dprepro run` agree. Anything
// but a regular file at NAME or NAME.gz is a failure, never absence. An
// unpinned file's records are counted and a count more than 10 % away from
// the documented one is a warning (FileStatus.Warning, Dataset.Warnings),
// not a failure. [Available] answers, from a stat alone, whether a load
// would fail for the directory or an absent file.
//
// # Checksums
//
// The registry pins the SHA-256 of each decompressed file (docs/datasets.md
// gives the digests, sources and how they were checked). Loaders hash while
// they parse and
// report a mismatch as a *ChecksumError naming the file and both digests; a
// present but bad file is never silently replaced by synthetic data. The Twitter
// file and the IPUMS extracts have no pinned checksum: they are read if
// present, and their FileRecord says Verified = false.
//
// # IPUMS extracts
//
// The IPUMS census extracts (ipums-us.txt, ipums-br.txt) may not be
// redistributed: users who hold them place them in the data directory as a
// plain matrix (one record per line, whitespace-separated numbers, the 0/1
// label last; features named f1 … fd). [Fetch] refuses them with an error
// wrapping [ErrNoDownload] that says how to obtain them; their stand-ins
// come from a hand-set census-like layout (planted-logistic-census/v1).
//
// # Parsing and encoding
//
// Loaders produce a [Table] with numeric and categorical attributes kept
// apart. Malformed lines are errors (*ParseError) naming the file, the line
// and the problem: wrong field count, bad number, unknown label. Adult
// records with a '?' are dropped and counted. Categorical attributes are
// one-hot encoded in full (one indicator per observed level, levels sorted,
// no reference level dropped; the intercept is a separate feature), named
// "attribute=level".
//
// # Described, not guessed
//
// Once the records are read and before the design matrix is built, Load
// hands the matrix's [Shape] (n, and d after one-hot encoding) to
// Options.Admit, which a run uses to check its memory estimate with the
// real sizes. A classification dataset's label mapping is counted
// ([Dataset.Labels]: each value as read, its records and its class). What
// looks like a slip is a warning ([Dataset.Warnings]): a label value that
// differs from a data file's positive one only by case or surrounding
// space, a categorical attribute in which most records have a level of
// their own (an identifier). A value that a scaling cannot carry out in
// float64 (a column sum beyond 1.8e308 under zscore, a row norm under
// column_scale "none") is an *OverflowError naming the file, the column or
// record and the scaling, never a matrix of NaN or silent zeros.
//
// # Synthetic stand-ins
//
// A stand-in has the same n, the same feature names and d after one-hot,
// and the same class balance as the real data, with labels from a planted
// model. Source.Kind is then "synthetic", Source.String starts with
// "SYNTHETIC", and Source.Params records the generator's parameters and the
// reason. Results computed on a stand-in say nothing about the real data;
// they only exercise the pipeline at the real size. It replaces an absent
// file only when no data directory was named (Options.Synthetic "auto", the
// default: the newcomer's first run) or when the spec allows it ("allow");
// "never" makes an absent file an error; "always" forces the stand-in.
//
// # Randomness
//
// Only the synthetic stand-ins are random. Their generator is the stream
// randx.New(Options.Seed, "datasets/synthetic", name) of package core/randx
// (SHA-256 into a ChaCha8 seed); the same seed gives the same table on the
// same platform. The global source is never used.
//
// # Errors and panics
//
// Every problem with names, options or files is a returned error, wrapped
// with the operation and dataset ("datasets: load adult: …") and naming the
// file and directory; the sentinels ErrUnknownDataset, ErrDataDir,
// ErrNotFound, ErrChecksum, ErrCorrupt, ErrNotRegular, ErrBadLink,
// ErrUnreadable, ErrDuplicateDataset, ErrNoFiles and ErrProvider work with
// errors.Is.
// Panics mark broken internal invariants only.
//
// # Privacy caveat
//
// By default (Preprocessing.Scaling "data-dependent") preprocessing scales
// by dataset-wide quantities (max |value|, means, max row norm) and encodes
// the categorical levels that occur. The reproduced papers do the same, but
// these are data-dependent, non-private steps: the differential-privacy
// guarantees of the downstream mechanisms are stated for the preprocessed
// rows, not for the raw records. Scaling "public" takes every scale from a
// declared [Domain] (documented for adult, magic and bank: Entry.Domain)
// and clips each record into it, so that neighbouring raw datasets give
// neighbouring design matrices and the guarantees hold for the raw records
// ([PublicInfo]). This harness is a simulation for reproducing
// experiments, not hardened DP.
package datasets
