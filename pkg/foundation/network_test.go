package foundation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestEgressOf(t *testing.T) {
	nat := Route{Destination: DefaultRoute, Target: TargetNATGateway, TargetID: "nat-1"}
	igw := Route{Destination: DefaultRoute, Target: TargetInternetGateway, TargetID: "igw-1"}
	local := Route{Destination: "10.0.0.0/16", Target: TargetOther, TargetID: "local"}
	endpoints := []Endpoint{
		{Service: "com.amazonaws.us-east-1.ecr.api", VPC: "vpc-1"},
		{Service: "com.amazonaws.us-east-1.ecr.dkr", VPC: "vpc-1"},
		{Service: "com.amazonaws.us-east-1.s3", VPC: "vpc-1", RouteTables: []string{"rtb-1"}},
	}
	tests := []struct {
		name      string
		routes    []Route
		endpoints []Endpoint
		want      Egress
		pulls     bool
	}{
		{name: "NAT", routes: []Route{local, nat}, want: Egress{Outbound: &nat, MissingEndpoints: []string{"ecr.api", "ecr.dkr", "s3"}}, pulls: true},
		{name: "public", routes: []Route{local, igw}, want: Egress{Public: &igw, MissingEndpoints: []string{"ecr.api", "ecr.dkr", "s3"}}},
		{name: "isolated", routes: []Route{local}, want: Egress{MissingEndpoints: []string{"ecr.api", "ecr.dkr", "s3"}}},
		{name: "isolated with endpoints", routes: []Route{local}, endpoints: endpoints, want: Egress{}, pulls: true},
		{name: "s3 on another route table", routes: []Route{local}, endpoints: append(endpoints[:2:2], Endpoint{Service: "com.amazonaws.us-east-1.s3", VPC: "vpc-1", RouteTables: []string{"rtb-2"}}),
			want: Egress{MissingEndpoints: []string{"s3"}}},
		{name: "endpoints of another VPC", routes: []Route{local}, endpoints: []Endpoint{{Service: "com.amazonaws.us-east-1.ecr.api", VPC: "vpc-2"}},
			want: Egress{MissingEndpoints: []string{"ecr.api", "ecr.dkr", "s3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &Foundation{Endpoints: tt.endpoints}
			rt := &RouteTable{ID: "rtb-1", VPC: "vpc-1", Routes: tt.routes}
			got := f.EgressOf(&Subnet{ID: "subnet-1", VPC: "vpc-1"}, rt)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("EgressOf (-want +got):\n%s", diff)
			}
			if got.PullsImages() != tt.pulls {
				t.Errorf("PullsImages = %v, want %v", got.PullsImages(), tt.pulls)
			}
		})
	}
}

func TestRouteTableOf(t *testing.T) {
	f := &Foundation{RouteTables: []RouteTable{
		{ID: "rtb-main", VPC: "vpc-1", Main: true},
		{ID: "rtb-a", VPC: "vpc-1", Subnets: []string{"subnet-a"}},
		{ID: "rtb-other-main", VPC: "vpc-2", Main: true},
	}}
	for subnet, want := range map[Subnet]string{
		{ID: "subnet-a", VPC: "vpc-1"}: "rtb-a",
		{ID: "subnet-b", VPC: "vpc-1"}: "rtb-main",
		{ID: "subnet-c", VPC: "vpc-2"}: "rtb-other-main",
		{ID: "subnet-d", VPC: "vpc-3"}: "",
		{ID: "subnet-e"}:               "",
	} {
		rt, ok := f.RouteTableOf(&subnet)
		got := ""
		if ok {
			got = rt.ID
		}
		if got != want {
			t.Errorf("RouteTableOf(%s) = %q, want %q", subnet.ID, got, want)
		}
	}
}
