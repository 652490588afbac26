package builtin_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/internal/profiles"
	"github.com/fargatekit/fargatekit/pkg/fargate"
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

// fixture directives, written as comments at the top of a fixture file:
//
//	# profiles: name=web,namespace=prod          (repeatable; inline profile syntax)
//	# pod-identity: namespace/serviceaccount     (repeatable)
//	# target-version: 1.25
//
// and expectations on the line a finding must point at:
//
//	hostNetwork: true  # want: FG006
var (
	directive = regexp.MustCompile(`^#\s*(profiles|pod-identity|target-version):\s*(.+)$`)
	want      = regexp.MustCompile(`#\s*want:\s*(.+)$`)
)

type fixture struct {
	ctx   *rules.Context
	wants map[string][]int // rule ID → lines
}

func readFixture(t *testing.T, path string, data []byte) fixture {
	t.Helper()
	price, err := fargate.PriceIn(fargate.DefaultRegion)
	if err != nil {
		t.Fatal(err)
	}
	fx := fixture{
		ctx:   &rules.Context{Namespace: "default", TargetVersion: "1.35", Region: fargate.DefaultRegion, Price: price},
		wants: map[string][]int{},
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if m := directive.FindStringSubmatch(strings.TrimSpace(text)); m != nil {
			switch m[1] {
			case "profiles":
				p, err := profiles.ParseInline(m[2])
				if err != nil {
					t.Fatalf("%s:%d: %v", path, line, err)
				}
				fx.ctx.Profiles = append(fx.ctx.Profiles, p)
			case "pod-identity":
				ns, sa, _ := strings.Cut(m[2], "/")
				fx.ctx.PodIdentity = append(fx.ctx.PodIdentity, rules.PodIdentityAssociation{Namespace: ns, ServiceAccount: sa})
			case "target-version":
				fx.ctx.TargetVersion = m[2]
			}
			continue
		}
		if m := want.FindStringSubmatch(text); m != nil {
			for _, id := range strings.Fields(m[1]) {
				fx.wants[id] = append(fx.wants[id], line)
			}
		}
	}
	return fx
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
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				fx := readFixture(t, path, data)
				if len(fx.wants[r.ID]) > 0 {
					fires++
				} else {
					quiet++
				}
				engine := rules.NewEngine(fx.ctx, []*rules.Rule{r}, rules.Options{})
				manifest.Parse(path, data, engine.Add, func(e manifest.Error) { t.Errorf("input error: %v", e) })
				var got []int
				for _, f := range engine.Result().Findings {
					got = append(got, f.Source.Line)
					if f.Message == "" {
						t.Errorf("%s:%d: empty message", path, f.Source.Line)
					}
				}
				wantLines := fx.wants[r.ID]
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
