package report

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Cluster is what `fargatekit scan` adds to a report: the cluster read and
// where its pods run. nil for check and plan.
type Cluster struct {
	Name string
	// Version is the control plane's minor version.
	Version string
	Region  string
	// Profiles are the Fargate profiles with their status; nil when they
	// could not be read, and ProfilesError says why.
	Profiles      []fargate.Profile
	ProfilesError string
	Analysis      *live.Result

	byRef map[object.Ref]*live.WorkloadState
}

type jsonCluster struct {
	Name          string                `json:"name"`
	Version       string                `json:"version"`
	Region        string                `json:"region"`
	Profiles      []jsonProfile         `json:"profiles"`
	ProfilesError string                `json:"profilesError,omitempty"`
	Nodes         jsonNodes             `json:"nodes"`
	PodsPerAZ     map[string]int        `json:"podsPerAZ"`
	Workloads     []jsonClusterWorkload `json:"workloads"`
}

type jsonProfile struct {
	Name      string             `json:"name"`
	Status    string             `json:"status"`
	Selectors []fargate.Selector `json:"selectors"`
}

type jsonNodes struct {
	Fargate int `json:"fargate"`
	EC2     int `json:"ec2"`
}

type jsonClusterWorkload struct {
	Object              jsonRef        `json:"object"`
	Pods                jsonPods       `json:"pods"`
	PodsPerAZ           map[string]int `json:"podsPerAZ"`
	BilledMonthlyUSD    float64        `json:"billedMonthlyUSD"`
	RequestedMonthlyUSD float64        `json:"requestedMonthlyUSD"`
}

type jsonPods struct {
	Fargate int `json:"fargate"`
	EC2     int `json:"ec2"`
	Pending int `json:"pending"`
}

func (c *Cluster) toJSON() *jsonCluster {
	out := &jsonCluster{Name: c.Name, Version: c.Version, Region: c.Region, ProfilesError: c.ProfilesError,
		Profiles: []jsonProfile{}, PodsPerAZ: map[string]int{}, Workloads: []jsonClusterWorkload{}}
	for _, p := range c.Profiles {
		out.Profiles = append(out.Profiles, jsonProfile{Name: p.Name, Status: p.Status, Selectors: nonNil(p.Selectors)})
	}
	if a := c.Analysis; a != nil {
		out.Nodes = jsonNodes{Fargate: a.FargateNodes, EC2: a.EC2Nodes}
		maps.Copy(out.PodsPerAZ, a.PodsPerAZ)
		for _, w := range a.Workloads {
			out.Workloads = append(out.Workloads, jsonClusterWorkload{
				Object: toJSONRef(w.Workload.Object.Ref), Pods: jsonPods{Fargate: w.Fargate, EC2: w.EC2, Pending: w.Pending},
				PodsPerAZ: w.PodsPerAZ, BilledMonthlyUSD: cents(w.BilledMonthlyUSD), RequestedMonthlyUSD: cents(w.RequestedMonthlyUSD),
			})
		}
	}
	return out
}

// state returns the live state of a workload, nil when the report has none.
func (c *Cluster) state(ref object.Ref) *live.WorkloadState {
	if c == nil || c.Analysis == nil {
		return nil
	}
	if c.byRef == nil { // the tables look every workload up: index them once
		c.byRef = make(map[object.Ref]*live.WorkloadState, len(c.Analysis.Workloads))
		for i := range c.Analysis.Workloads {
			c.byRef[c.Analysis.Workloads[i].Workload.Object.Ref] = &c.Analysis.Workloads[i]
		}
	}
	return c.byRef[ref]
}

// podsText words where a workload's pods run: "3 Fargate, 1 EC2, 1 Pending".
func podsText(s *live.WorkloadState) string {
	var parts []string
	for _, c := range []struct {
		n     int
		where string
	}{{s.Fargate, "Fargate"}, {s.EC2, "EC2"}, {s.Pending, "Pending"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.where))
		}
	}
	return cmp.Or(strings.Join(parts, ", "), "no pods")
}

// writeClusterText writes the cluster's header: its version, profiles,
// nodes, and Fargate pods per AZ.
func writeClusterText(b *bytes.Buffer, c *Cluster, p painter) {
	fmt.Fprintf(b, "%s %s (Kubernetes %s, %s)\n", p.paint(ansiBold, "Cluster"), c.Name, c.Version, c.Region)
	if c.Profiles == nil {
		fmt.Fprintf(b, "  Fargate profiles: not read (%s); findings that need them are left out\n", c.ProfilesError)
	} else {
		var names []string
		for _, pr := range c.Profiles {
			names = append(names, pr.Name+" "+pr.Status)
		}
		fmt.Fprintf(b, "  Fargate profiles: %s\n", cmp.Or(strings.Join(names, ", "), "none"))
	}
	if a := c.Analysis; a != nil {
		fmt.Fprintf(b, "  Nodes: %d Fargate, %d EC2\n", a.FargateNodes, a.EC2Nodes)
		if len(a.PodsPerAZ) > 0 {
			var parts []string
			for _, az := range slices.Sorted(maps.Keys(a.PodsPerAZ)) {
				parts = append(parts, fmt.Sprintf("%s %d", az, a.PodsPerAZ[az]))
			}
			fmt.Fprintf(b, "  Fargate pods per AZ: %s\n", strings.Join(parts, ", "))
		}
	}
	b.WriteByte('\n')
}
