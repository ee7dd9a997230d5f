package results

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
)

// reference holds results/reference as it was when the binary was built.
//
//go:embed reference
var reference embed.FS

// ReferenceFS returns the reference results built into the binary: the
// results/reference folder of the source tree at build time, one folder per
// spec id holding summary.csv and manifest.json. Refreshing the references
// (`make references`) takes effect in the binary at the next build.
func ReferenceFS() fs.FS {
	sub, err := fs.Sub(reference, "reference")
	if err != nil {
		panic("results: embedded references: " + err.Error()) // "reference" is a valid path
	}
	return sub
}

// ReadSummaryCSVFS is [ReadSummaryCSV] for a file of fsys; name is a
// slash-separated path in fsys (see [fs.ValidPath]).
func ReadSummaryCSVFS(fsys fs.FS, name string) ([]SummaryRow, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return decodeSummaryCSV(b, name)
}

// ReadManifestFS reads and decodes a manifest.json of fsys. It is an error
// for the file to be unreadable, not to be a JSON object of the manifest
// schema, or to lack the spec id.
func ReadManifestFS(fsys fs.FS, name string) (Manifest, error) {
	var m Manifest
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return m, fmt.Errorf("results: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("results: %s: %w", name, err)
	}
	if m.Spec.ID == "" {
		return m, fmt.Errorf("results: %s: no spec id (not a dprepro manifest)", name)
	}
	return m, nil
}
