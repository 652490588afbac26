package spool

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

var testRules = []*rules.Rule{{ID: "FG001", Name: "one"}, {ID: "FG002", Name: "two"}, {ID: "FG003", Name: "three"}}

// findings returns n findings in a random order, with many ties on file and
// line (which the sort must keep in the order they were added).
func findings(n int, seed uint64) []rules.Finding {
	r := rand.New(rand.NewPCG(seed, 0))
	out := make([]rules.Finding, n)
	for i := range out {
		f := rules.Finding{
			Rule:     testRules[r.IntN(len(testRules))],
			Severity: rules.Severity(1 + r.IntN(3)),
			Object:   object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: fmt.Sprint("ns-", r.IntN(3)), Name: fmt.Sprint("d-", r.IntN(20))},
			Source:   object.Source{File: fmt.Sprintf("f%d.yaml", r.IntN(5)), Line: r.IntN(10)},
			Message:  fmt.Sprint("message ", r.IntN(3)),
		}
		if r.IntN(4) == 0 {
			f.Path = "spec.template.spec.containers[0]"
		}
		if r.IntN(5) == 0 {
			f.Details = map[string]string{"b": fmt.Sprint(i), "a": "ä\x00\n"}
		}
		out[i] = f
	}
	return out
}

// TestSpool adds findings to a spool that holds few of them at a time and
// reads them back twice: every finding, in the order a stable sort of all of
// them in memory gives, with nothing left on disk after Close.
func TestSpool(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n, limit int
		runs     bool
	}{
		{"held in memory", 500, 0, false},
		{"in many runs", 2000, 20_000, true},
		{"one finding per run", 50, 1, true},
		{"none", 0, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := findings(tc.n, uint64(tc.n))
			want := slices.Clone(in)
			slices.SortStableFunc(want, rules.CompareFindings)

			dir := t.TempDir()
			s := New(testRules)
			s.Limit, s.Dir = tc.limit, dir
			for _, f := range in {
				s.Add(f)
			}
			if s.Len() != tc.n {
				t.Errorf("Len() = %d, want %d", s.Len(), tc.n)
			}
			if len(s.runs) > 0 != tc.runs {
				t.Errorf("%d runs written; want some: %v", len(s.runs), tc.runs)
			}
			// The file has no name from the start: nothing is left however
			// the process ends.
			if files, _ := os.ReadDir(dir); len(files) != 0 && runtime.GOOS != "windows" {
				t.Errorf("%d files named in the directory", len(files))
			}
			for pass := range 2 {
				got := slices.Collect(s.All())
				if s.Err() != nil {
					t.Fatal(s.Err())
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b *rules.Rule) bool { return a == b })); diff != "" {
					t.Fatalf("pass %d (-want +got):\n%s", pass, diff)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if files, _ := os.ReadDir(dir); len(files) != 0 {
				t.Errorf("%d files left after Close", len(files))
			}
		})
	}
}

// TestSpoolCannotWrite: when no run can be written, the findings stay in
// memory, and they still come out whole and in order, with no error; when
// runs were written before, they merge with those.
func TestSpoolCannotWrite(t *testing.T) {
	in := findings(300, 7)
	want := slices.Clone(in)
	slices.SortStableFunc(want, rules.CompareFindings)
	same := cmp.Comparer(func(a, b *rules.Rule) bool { return a == b })

	s := New(testRules)
	s.Limit, s.Dir = 2_000, filepath.Join(t.TempDir(), "missing")
	for _, f := range in {
		s.Add(f)
	}
	if diff := cmp.Diff(want, slices.Collect(s.All()), same); diff != "" || s.Err() != nil {
		t.Errorf("no directory to write to: %v (-want +got):\n%s", s.Err(), diff)
	}

	s = New(testRules)
	s.Limit, s.Dir = 2_000, t.TempDir()
	for i, f := range in {
		if i == 200 {
			s.full = true // as after a failed write
		}
		s.Add(f)
	}
	if len(s.runs) == 0 || len(s.held) < 100 {
		t.Fatalf("%d runs, %d held: the case is not the one meant", len(s.runs), len(s.held))
	}
	if diff := cmp.Diff(want, slices.Collect(s.All()), same); diff != "" || s.Err() != nil {
		t.Errorf("runs and findings held: %v (-want +got):\n%s", s.Err(), diff)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSpoolDamaged reads a run cut short: the findings before the damage,
// then an error from Err, never a panic.
func TestSpoolDamaged(t *testing.T) {
	s := New(testRules)
	s.Limit, s.Dir = 2_000, t.TempDir()
	for _, f := range findings(100, 1) {
		s.Add(f)
	}
	all := s.All()
	info, err := s.file.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.file.Truncate(info.Size() - 3); err != nil {
		t.Fatal(err)
	}
	n := 0
	for range all {
		n++
	}
	if s.Err() == nil || n >= 100 {
		t.Errorf("read %d of 100 findings from a damaged file, error %v; want fewer and an error", n, s.Err())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// FuzzSpool writes a finding of any text to disk and reads it back.
func FuzzSpool(f *testing.F) {
	f.Add("Deployment", "web", "a.yaml", 3, "spec.replicas", "too many", "k", "v")
	f.Add("", "", "", -1, "", "", "", "")
	f.Fuzz(func(t *testing.T, kind, name, file string, line int, path, message, key, value string) {
		in := rules.Finding{
			Rule: testRules[0], Severity: rules.Warning,
			Object: object.Ref{APIVersion: "v1", Kind: kind, Name: name}, Source: object.Source{File: file, Line: line},
			Path: path, Message: message,
		}
		if key != "" {
			in.Details = map[string]string{key: value}
		}
		s := New(testRules)
		s.Limit, s.Dir = 1, t.TempDir()
		s.Add(in)
		s.Add(in)
		got := slices.Collect(s.All())
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]rules.Finding{in, in}, got, cmp.Comparer(func(a, b *rules.Rule) bool { return a == b })); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFindingRoundTrip writes a finding whose every field is set to a run
// and reads it back whole. A field added to rules.Finding (or to the types
// it holds) fails it until the test sets it and the codec writes it.
func TestFindingRoundTrip(t *testing.T) {
	want := rules.Finding{
		Rule:     testRules[1],
		Severity: rules.Warning,
		Object:   object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"},
		Source:   object.Source{File: "web.yaml", Line: 12},
		Path:     "spec.template.spec.hostNetwork",
		Message:  "the pod uses the host network",
		Details:  map[string]string{"profile": "shop"},
	}
	if zero := unsetFields(reflect.ValueOf(want), "Finding"); len(zero) > 0 {
		t.Fatalf("the test's finding leaves fields unset: %v", zero)
	}
	s := New(testRules)
	s.Limit, s.Dir = 1, t.TempDir() // every finding goes to a run on disk
	s.Add(want)
	defer func() { _ = s.Close() }()
	if len(s.runs) != 1 {
		t.Fatalf("%d runs written, want 1", len(s.runs))
	}
	got := slices.Collect(s.All())
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	if diff := cmp.Diff([]rules.Finding{want}, got, cmp.Comparer(func(a, b *rules.Rule) bool { return a == b })); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

// unsetFields names the fields of v, nested, that hold their zero value. A
// rule is written as its ID, so a *rules.Rule only needs to be set.
func unsetFields(v reflect.Value, path string) []string {
	if v.Type() == reflect.TypeFor[*rules.Rule]() || v.Kind() != reflect.Struct {
		if v.IsZero() {
			return []string{path}
		}
		return nil
	}
	var out []string
	for i := range v.NumField() {
		out = append(out, unsetFields(v.Field(i), path+"."+v.Type().Field(i).Name)...)
	}
	return out
}
