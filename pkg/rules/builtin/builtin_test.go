package builtin_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/internal/rulefixture"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/builtin"
)

func TestRegistry(t *testing.T) {
	reg := builtin.Registry()
	if got, want := len(reg.Rules()), len(builtin.Rules()); got != want {
		t.Fatalf("registry has %d rules, list has %d", got, want)
	}
}

// TestEveryRefusalHasOneRule: what fargate-scheduler refuses, check reports,
// each reason under exactly one rule.
func TestEveryRefusalHasOneRule(t *testing.T) {
	by := map[fargate.RefusalKind][]string{}
	for _, r := range builtin.Rules() {
		if r.Refusal != "" {
			by[r.Refusal] = append(by[r.Refusal], r.ID)
			if r.Severity != rules.Blocker && r.Check == nil {
				t.Errorf("%s reports refusals but is a %s", r.ID, r.Severity)
			}
		}
	}
	for _, k := range fargate.RefusalKinds {
		if len(by[k]) != 1 {
			t.Errorf("refusal %q is reported by rules %v, want exactly one", k, by[k])
		}
	}
}

// TestRules runs every rule on its fixtures in testdata/<ID>-<name>/ and
// compares the lines it reports with the fixture's `# want:` comments. Every
// rule needs a fixture where it fires and one (a near miss) where it must not.
func TestRules(t *testing.T) {
	for _, r := range builtin.Rules() {
		t.Run(r.ID+"-"+r.Name, func(t *testing.T) {
			dir := filepath.Join("testdata", r.ID+"-"+r.Name)
			files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
			if len(files) == 0 {
				t.Fatalf("no fixtures in %s", dir)
			}
			fires, quiet := 0, 0
			for _, path := range files {
				fx, err := rulefixture.Read(path)
				if err != nil {
					t.Fatal(err)
				}
				if len(fx.Wants[r.ID])+len(fx.WantObjects[r.ID]) > 0 {
					fires++
				} else {
					quiet++
				}
				engine := rules.NewEngine(fx.Context, []*rules.Rule{r}, rules.Options{})
				manifest.Parse(path, fx.Data, engine.Add, func(e manifest.Error) { t.Errorf("input error: %v", e) })
				var got []int
				var gotObjects []string
				for _, f := range engine.Result().Findings {
					if f.Message == "" {
						t.Errorf("%s:%d: empty message", path, f.Source.Line)
					}
					key := fmt.Sprintf("%s:%d", r.ID, f.Source.Line)
					if f.Source.File != path { // a resource of the fixture's foundation file
						gotObjects = append(gotObjects, f.Object.String())
						key = r.ID + " " + f.Object.String()
					} else {
						got = append(got, f.Source.Line)
					}
					want, ok := fx.Severities[key]
					if !ok {
						want = r.Severity
					}
					if f.Severity != want {
						t.Errorf("%s: %s on %s is a %s, want a %s", path, r.ID, key, f.Severity, want)
					}
				}
				if diff := cmp.Diff(fx.WantObjects[r.ID], gotObjects, cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
					t.Errorf("%s: foundation resources reported (-want +got):\n%s", path, diff)
				}
				wantLines := fx.Wants[r.ID]
				sort.Ints(got)
				sort.Ints(wantLines)
				if diff := cmp.Diff(wantLines, got); diff != "" {
					t.Errorf("%s: finding lines (-want +got):\n%s", path, diff)
				}
			}
			if fires == 0 || quiet == 0 {
				t.Errorf("%s needs a fixture where the rule fires (%d) and a near miss where it does not (%d)", dir, fires, quiet)
			}
		})
	}
}

// TestIgnoreAnnotation checks that fargatekit.io/ignore suppresses a rule by ID or name, and only that rule.
func TestIgnoreAnnotation(t *testing.T) {
	const doc = `apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations:
    fargatekit.io/ignore: %s
spec:
  hostNetwork: true
  hostPID: true
  containers: [{name: c, image: nginx}]
`
	for _, tc := range []struct{ ignore, want string }{
		{"FG006", "FG007"},
		{"host-network", "FG007"},
		{"FG006,host-pid", ""},
		{"FG099", "FG006 FG007"},
	} {
		t.Run(tc.ignore, func(t *testing.T) {
			ctx := &rules.Context{Namespace: "default", TargetVersion: "1.35"}
			engine := rules.NewEngine(ctx, builtin.Rules(), rules.Options{})
			manifest.Parse("pod.yaml", []byte(strings.Replace(doc, "%s", tc.ignore, 1)), engine.Add, func(e manifest.Error) { t.Fatal(e) })
			var got []string
			for _, f := range engine.Result().Findings {
				if f.Rule.ID == "FG006" || f.Rule.ID == "FG007" {
					got = append(got, f.Rule.ID)
				}
			}
			if diff := cmp.Diff(strings.Fields(tc.want), got, cmpEmpty); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return strings.Join(a, " ") == strings.Join(b, " ") })

// TestSeverityOverride checks that Options.Severity changes a rule's severity.
func TestSeverityOverride(t *testing.T) {
	ctx := &rules.Context{Namespace: "default", TargetVersion: "1.35"}
	engine := rules.NewEngine(ctx, builtin.Rules(), rules.Options{Severity: map[string]rules.Severity{"FG006": rules.Info}})
	manifest.Parse("pod.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {hostNetwork: true, containers: [{name: c}]}\n"),
		engine.Add, func(e manifest.Error) { t.Fatal(e) })
	found := false
	for _, f := range engine.Result().Findings {
		if f.Rule.ID == "FG006" {
			found = true
			if f.Severity != rules.Info {
				t.Errorf("FG006 severity = %v, want info", f.Severity)
			}
		}
	}
	if !found {
		t.Error("FG006 did not fire")
	}
}

// TestPrepare: running the per-object rules ahead with Engine.Prepare, on
// many goroutines at once, finds what Engine.Add alone finds, on every
// fixture with every rule.
func TestPrepare(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, path := range files {
		fx, err := rulefixture.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		var objects []*object.Object
		manifest.Parse(path, fx.Data, func(o *object.Object) { objects = append(objects, o) }, func(manifest.Error) {})
		result := func(prepare bool) []string {
			engine := rules.NewEngine(fx.Context, builtin.Rules(), rules.Options{})
			if prepare {
				var wg sync.WaitGroup
				for _, o := range objects {
					wg.Go(func() { engine.Prepare(o) })
				}
				wg.Wait()
			}
			for _, o := range objects {
				engine.Add(o)
			}
			res := engine.Result()
			out := []string{fmt.Sprintf("%d workloads", res.Workloads.Len())}
			for _, f := range res.Findings {
				out = append(out, fmt.Sprintf("%s %s:%d %s %s", f.Rule.ID, f.Source.File, f.Source.Line, f.Severity, f.Message))
			}
			return out
		}
		if diff := cmp.Diff(result(false), result(true)); diff != "" {
			t.Errorf("%s (-Add +Prepare):\n%s", path, diff)
		}
	}
}
