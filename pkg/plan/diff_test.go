package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
)

func TestDiff(t *testing.T) {
	p := func(name string, sels ...fargate.Selector) fargate.Profile {
		return fargate.Profile{Name: name, Selectors: sels, Subnets: []string{"s2", "s1"}, Source: object.Source{File: "old.yaml"}}
	}
	ns := func(n string, labels map[string]string) fargate.Selector {
		return fargate.Selector{Namespace: n, Labels: labels}
	}
	before := []fargate.Profile{p("keep", ns("a", nil), ns("b", nil)), p("same-labels", ns("c", map[string]string{})), p("gone", ns("d", nil)), p("changed", ns("e", nil))}
	after := []fargate.Profile{p("keep", ns("b", nil), ns("a", nil)), p("same-labels", ns("c", nil)), p("changed", ns("e", map[string]string{"x": "y"})), p("new", ns("f", nil))}
	for i := range after {
		after[i].Source.File = "new.yaml" // where a profile is declared is no difference
		after[i].Subnets = []string{"s1", "s2"}
	}
	changes, unchanged := Diff(before, after)
	var got []string
	for _, c := range changes {
		got = append(got, c.Address+":"+map[bool]string{true: "before"}[c.Before != nil]+"/"+map[bool]string{true: "after"}[c.After != nil])
	}
	if diff := cmp.Diff([]string{"changed:before/after", "gone:before/", "new:/after"}, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if len(unchanged) != 2 || unchanged[0].Name != "keep" || unchanged[1].Name != "same-labels" {
		t.Errorf("unchanged %+v: selector order, no labels and empty labels, and subnet order are no change", unchanged)
	}
}
