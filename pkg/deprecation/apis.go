package deprecation

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/fargatekit/fargatekit/pkg/eks"
)

//go:embed data/apis.yaml
var apisYAML []byte

// API is one deprecated or removed Kubernetes API version of one kind.
type API struct {
	// GroupVersion is the apiVersion as written in a manifest, such as
	// "extensions/v1beta1" or "v1" for the core group.
	GroupVersion string
	// Kind is the object kind, such as "Deployment".
	Kind string
	// DeprecatedIn is the first minor version that warns about this API,
	// such as "1.16"; empty if no source gives one.
	DeprecatedIn string
	// RemovedIn is the first minor version that no longer serves this API;
	// empty if it is not removed.
	RemovedIn string
	// Replacement is the group/version to migrate to (the kind stays the
	// same unless Notes says otherwise); empty if there is none.
	Replacement string
	// ReplacementSince is the minor version where Replacement became
	// available; empty if unknown or there is no replacement.
	ReplacementSince string
	// Notes summarises the changes required when migrating; may be empty.
	Notes string
	// DefaultOff is true for alpha and off-by-default versions, which a
	// cluster only served if it enabled them.
	DefaultOff bool
}

// Status is the state of an API version in a given Kubernetes release.
type Status int

const (
	// Served means the API version is served without deprecation warnings.
	Served Status = iota
	// Deprecated means the API version is still served but deprecated.
	Deprecated
	// Removed means the API version is no longer served.
	Removed
)

// String returns "served", "deprecated" or "removed".
func (s Status) String() string {
	switch s {
	case Served:
		return "served"
	case Deprecated:
		return "deprecated"
	case Removed:
		return "removed"
	default:
		return fmt.Sprintf("Status(%d)", int(s))
	}
}

// StatusAt returns the status of a in the Kubernetes minor version target
// (such as "1.25", as returned by eks.ParseMinor): Removed if RemovedIn is
// set and target >= RemovedIn, else Deprecated if DeprecatedIn is set and
// target >= DeprecatedIn, else Served. Versions compare numerically.
func (a API) StatusAt(target string) Status {
	switch {
	case a.RemovedIn != "" && eks.CompareMinor(target, a.RemovedIn) >= 0:
		return Removed
	case a.DeprecatedIn != "" && eks.CompareMinor(target, a.DeprecatedIn) >= 0:
		return Deprecated
	default:
		return Served
	}
}

// key identifies an entry.
type key struct {
	groupVersion, kind string
}

// table is the parsed embedded data.
type table struct {
	all   []API // sorted as All documents
	index map[key]API
}

// data is the parsed embedded data/apis.yaml. The file is part of the
// build, so a parse error is a programming error and panics.
var data = sync.OnceValue(func() table {
	t, err := parseAPIs(apisYAML)
	if err != nil {
		panic(fmt.Sprintf("deprecation: embedded data/apis.yaml: %v", err))
	}
	return t
})

// Lookup returns the entry for the exact apiVersion and kind, such as
// ("extensions/v1beta1", "Deployment"). The second result is false if the
// pair is not deprecated or removed.
func Lookup(apiVersion, kind string) (API, bool) {
	a, ok := data().index[key{apiVersion, kind}]
	return a, ok
}

// All returns every entry, sorted by RemovedIn (numerically, with entries
// that are not removed last), then GroupVersion, then Kind. The caller may
// modify the returned slice.
func All() []API {
	return slices.Clone(data().all)
}

// NewestRemoval returns the newest minor version in which the data removes
// an API, such as "1.40": removals announced after it are not known.
func NewestRemoval() string {
	newest := ""
	for _, a := range data().all {
		if a.RemovedIn != "" && (newest == "" || eks.CompareMinor(a.RemovedIn, newest) > 0) {
			newest = a.RemovedIn
		}
	}
	return newest
}

// compareAPIs orders entries as documented on All.
func compareAPIs(a, b API) int {
	if c := compareRemovedIn(a.RemovedIn, b.RemovedIn); c != 0 {
		return c
	}
	if c := cmp.Compare(a.GroupVersion, b.GroupVersion); c != 0 {
		return c
	}
	return cmp.Compare(a.Kind, b.Kind)
}

// compareRemovedIn compares removal versions, with "" (not removed) last.
func compareRemovedIn(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	default:
		return eks.CompareMinor(a, b)
	}
}

// apiFile is the shape of data/apis.yaml.
type apiFile struct {
	APIs []apiRow `yaml:"apis"`
}

// apiRow is one entry of data/apis.yaml.
type apiRow struct {
	GroupVersion     string `yaml:"groupVersion"`
	Kind             string `yaml:"kind"`
	DeprecatedIn     string `yaml:"deprecatedIn,omitempty"`
	RemovedIn        string `yaml:"removedIn,omitempty"`
	Replacement      string `yaml:"replacement,omitempty"`
	ReplacementSince string `yaml:"replacementSince,omitempty"`
	Notes            string `yaml:"notes,omitempty"`
	DefaultOff       bool   `yaml:"defaultOff,omitempty"`
}

// parseAPIs decodes and validates a data file.
func parseAPIs(b []byte) (table, error) {
	var f apiFile
	// yaml.v3 keeps a scalar's text for a string field: an unquoted 1.20 stays "1.20".
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return table{}, fmt.Errorf("decode apis: %w", err)
	}
	if len(f.APIs) == 0 {
		return table{}, fmt.Errorf("no apis")
	}
	t := table{
		all:   make([]API, 0, len(f.APIs)),
		index: make(map[key]API, len(f.APIs)),
	}
	for i, row := range f.APIs {
		a := API{
			GroupVersion:     row.GroupVersion,
			Kind:             row.Kind,
			DeprecatedIn:     row.DeprecatedIn,
			RemovedIn:        row.RemovedIn,
			Replacement:      row.Replacement,
			ReplacementSince: row.ReplacementSince,
			Notes:            strings.TrimSpace(row.Notes),
			DefaultOff:       row.DefaultOff,
		}
		if err := a.validate(); err != nil {
			return table{}, fmt.Errorf("apis[%d] (%s %s): %w", i, a.GroupVersion, a.Kind, err)
		}
		k := key{a.GroupVersion, a.Kind}
		if _, dup := t.index[k]; dup {
			return table{}, fmt.Errorf("apis[%d]: duplicate entry for %s %s", i, a.GroupVersion, a.Kind)
		}
		t.index[k] = a
		t.all = append(t.all, a)
	}
	slices.SortFunc(t.all, compareAPIs)
	return t, nil
}

// validate checks one entry.
func (a API) validate() error {
	if a.GroupVersion == "" {
		return fmt.Errorf("groupVersion is required")
	}
	if !strings.HasPrefix(apiVersionPart(a.GroupVersion), "v") {
		return fmt.Errorf("groupVersion %q has no version", a.GroupVersion)
	}
	if a.Kind == "" {
		return fmt.Errorf("kind is required")
	}
	if a.DeprecatedIn == "" && a.RemovedIn == "" {
		return fmt.Errorf("deprecatedIn or removedIn is required")
	}
	for _, v := range []struct{ name, value string }{
		{"deprecatedIn", a.DeprecatedIn},
		{"removedIn", a.RemovedIn},
		{"replacementSince", a.ReplacementSince},
	} {
		if v.value == "" {
			continue
		}
		m, err := eks.ParseMinor(v.value)
		if err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		if m != v.value {
			return fmt.Errorf("%s %q: want canonical form %q", v.name, v.value, m)
		}
	}
	if a.DeprecatedIn != "" && a.RemovedIn != "" && eks.CompareMinor(a.RemovedIn, a.DeprecatedIn) <= 0 {
		return fmt.Errorf("removedIn %s is not after deprecatedIn %s", a.RemovedIn, a.DeprecatedIn)
	}
	if a.Replacement == "" && a.ReplacementSince != "" {
		return fmt.Errorf("replacementSince %s without a replacement", a.ReplacementSince)
	}
	if a.Replacement == a.GroupVersion {
		return fmt.Errorf("replacement is the same group/version")
	}
	return nil
}

// apiVersionPart returns the version part of a group/version ("v1beta1"
// for "apps/v1beta1", "v1" for "v1").
func apiVersionPart(gv string) string {
	if i := strings.LastIndexByte(gv, '/'); i >= 0 {
		return gv[i+1:]
	}
	return gv
}
