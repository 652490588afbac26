package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
)

func valid(id, name string) *Rule {
	return &Rule{ID: id, Name: name, Category: CategoryFargate, Severity: Blocker, Summary: "s", Doc: "d", Remediation: "r",
		Check: func(*Context, *object.Object, *Workload) []Finding { return nil }}
}

func TestRegistry(t *testing.T) {
	if _, err := NewRegistry(valid("FG001", "a"), valid("FG002", "b")); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		rules []*Rule
		want  string
	}{
		"duplicate ID":   {[]*Rule{valid("FG001", "a"), valid("FG001", "b")}, `"FG001" is used twice`},
		"duplicate name": {[]*Rule{valid("FG001", "a"), valid("FG002", "a")}, `"a" is used twice`},
		"bad ID":         {[]*Rule{valid("X1", "a")}, "ID must look like"},
		"bad name":       {[]*Rule{valid("FG001", "Host_Network")}, "kebab-case"},
		"two checks": {[]*Rule{func() *Rule {
			r := valid("FG001", "a")
			r.CheckCluster = func(*Context, *Cluster, func(Finding)) {}
			return r
		}()}, "sets exactly one of Refusal, Check and CheckCluster"},
		"refusal and cluster check": {[]*Rule{func() *Rule {
			r := valid("FG001", "a")
			r.Check, r.Refusal = nil, fargate.RefusePrivileged
			r.CheckCluster = func(*Context, *Cluster, func(Finding)) {}
			return r
		}()}, "sets exactly one of Refusal, Check and CheckCluster"},
		"unknown refusal": {[]*Rule{func() *Rule {
			r := valid("FG001", "a")
			r.Check, r.Refusal = nil, "teleport"
			return r
		}()}, `refusal "teleport" is not a fargate.RefusalKind`},
		"no doc": {[]*Rule{func() *Rule { r := valid("FG001", "a"); r.Doc = ""; return r }()}, "required"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewRegistry(tc.rules...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSeverity(t *testing.T) {
	for _, s := range []Severity{Info, Warning, Blocker} {
		got, err := ParseSeverity(strings.ToUpper(s.String()))
		if err != nil || got != s {
			t.Errorf("ParseSeverity(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseSeverity("critical"); err == nil {
		t.Error("unknown severity must be an error")
	}
}

// TestSelected: the index gives what matching every workload gives, in the
// workloads' order and with their numbers, for every kind of selector.
func TestSelected(t *testing.T) {
	var ws []*Workload
	for i, l := range []map[string]string{{"app": "web", "tier": "front"}, {"app": "web"}, {"app": "api"}, nil, {"app": "web", "tier": "back"}, {"": ""}} {
		for _, ns := range []string{"a", "b"} {
			ws = append(ws, &Workload{Ref: object.Ref{Kind: "Deployment", Name: fmt.Sprint(i)}, Namespace: ns, Labels: l})
		}
	}
	c := Cluster{Workloads: NewWorkloads(ws...)}
	for _, s := range []string{"app=web", "app==web,tier=back", "app in (web)", "app in (web,api)", "app!=web", "tier", "!tier", "app=none", ""} {
		sel, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range []string{"a", "b", "c"} {
			var want, got []string
			for i, w := range ws {
				if w.Namespace == ns && sel.Matches(labels.Set(w.Labels)) {
					want = append(want, fmt.Sprint(i, " ", w.Ref.Name))
				}
			}
			for i, w := range c.Selected(ns, sel) {
				got = append(got, fmt.Sprint(i, " ", w.Ref.Name))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s in %s (-want +got):\n%s", s, ns, diff)
			}
		}
	}
	for range c.Selected("a", labels.Nothing()) {
		t.Error("Nothing selected a workload")
	}
}
