package foundation

import "testing"

func TestECRImage(t *testing.T) {
	for image, want := range map[string]bool{
		"111122223333.dkr.ecr.us-east-1.amazonaws.com/shop/web:1.2":               true,
		"111122223333.dkr.ecr-fips.us-gov-west-1.amazonaws.com/web@sha256:" + hex: true,
		"111122223333.dkr.ecr.cn-north-1.amazonaws.com.cn/web":                    true,
		"602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns:v1.11.4":        true,
		"public.ecr.aws/nginx/nginx:1.27":                                         false,
		"nginx":                                                                   false,
		"docker.io/library/nginx:1.27":                                            false,
		"1111.dkr.ecr.us-east-1.amazonaws.com/web":                                false, // not an account ID
		"111122223333.dkr.ecr.us-east-1.amazonaws.com.evil.example/web":           false,
		"NOT A REFERENCE":                                                         false,
	} {
		if got := ECRImage(image); got != want {
			t.Errorf("ECRImage(%q) = %v, want %v", image, got, want)
		}
	}
}

const hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestPull: a subnet without a NAT route pulls only ECR images, and only
// with all three endpoints; a role with no managed policy pulls no ECR
// image; what the foundation does not know does not fail.
func TestPull(t *testing.T) {
	const (
		ecr    = "111122223333.dkr.ecr.us-east-1.amazonaws.com/web:1"
		hub    = "nginx:1.27"
		good   = "arn:aws:iam::111122223333:role/fargate"
		bare   = "arn:aws:iam::111122223333:role/bare"
		other  = "arn:aws:iam::111122223333:role/other"
		inline = "arn:aws:iam::111122223333:role/inline"
		absent = "arn:aws:iam::111122223333:role/absent"
	)
	nat := Route{Destination: DefaultRoute, Target: TargetNATGateway, TargetID: "nat-1"}
	f := &Foundation{
		Subnets: []Subnet{{ID: "subnet-nat", VPC: "vpc-1"}, {ID: "subnet-isolated", VPC: "vpc-1"}, {ID: "subnet-endpoints", VPC: "vpc-2"}, {ID: "subnet-unrouted", VPC: "vpc-3"}},
		RouteTables: []RouteTable{
			{ID: "rtb-nat", VPC: "vpc-1", Subnets: []string{"subnet-nat"}, Routes: []Route{nat}},
			{ID: "rtb-isolated", VPC: "vpc-1", Subnets: []string{"subnet-isolated"}},
			{ID: "rtb-endpoints", VPC: "vpc-2", Subnets: []string{"subnet-endpoints"}},
		},
		Endpoints: []Endpoint{
			{Service: "com.amazonaws.us-east-1.ecr.api", VPC: "vpc-2"},
			{Service: "com.amazonaws.us-east-1.ecr.dkr", VPC: "vpc-2"},
			{Service: "com.amazonaws.us-east-1.s3", VPC: "vpc-2", RouteTables: []string{"rtb-endpoints"}},
		},
		Roles: []Role{
			{Name: "fargate", ARN: good, Policies: []string{"arn:aws:iam::aws:policy/" + PodExecutionPolicy}, PoliciesKnown: true},
			{Name: "bare", ARN: bare, PoliciesKnown: true},
			{Name: "other", ARN: other, Policies: []string{"arn:aws:iam::111122223333:policy/ecr-read"}, PoliciesKnown: true},
			{Name: "inline", ARN: inline, InlinePolicies: []string{"ecr-read"}, PoliciesKnown: true},
		},
	}
	tests := []struct {
		subnet, role, image string
		want                PullFailure
	}{
		{"subnet-nat", good, hub, ""},
		{"subnet-nat", good, ecr, ""},
		{"subnet-isolated", good, hub, PullNoRoute},
		{"subnet-isolated", good, ecr, PullNoRoute},
		{"subnet-endpoints", good, ecr, ""},
		{"subnet-endpoints", good, hub, PullOnlyECR},
		{"subnet-nat", bare, ecr, PullDenied},
		{"subnet-nat", bare, hub, ""},
		{"subnet-nat", other, ecr, ""},
		{"subnet-nat", inline, ecr, ""},
		{"subnet-nat", absent, ecr, ""},
		{"subnet-unknown", good, hub, ""},
		{"subnet-unrouted", good, hub, ""},
	}
	for _, tt := range tests {
		if got := f.Pull(tt.subnet, tt.role, tt.image); got != tt.want {
			t.Errorf("Pull(%s, %s, %s) = %q, want %q", tt.subnet, RoleName(tt.role), tt.image, got, tt.want)
		}
	}
}
