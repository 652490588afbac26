package cluster_test

import (
	"context"
	"net/http/httptest"
	"os"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/ec2api"
	"github.com/fargatekit/fargatekit/internal/emulator/iamapi"
	"github.com/fargatekit/fargatekit/internal/profiles"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/builtin"
)

// TestFoundation reads the foundation of the emulator's prerequisites
// scenario with the real EC2 and IAM clients, and runs the foundation rules
// on it: the subnet without a NAT route and the copied role are reported,
// the NAT-routed subnet, the VPC's DNS and the role's trust are not.
func TestFoundation(t *testing.T) {
	data, err := os.ReadFile("../../examples/emulator/prerequisites/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clusterconfig.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	ec2Server, err := ec2api.NewServer(cfg, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ec2Srv, iamSrv := httptest.NewServer(ec2Server), httptest.NewServer(iamapi.NewServer(cfg, nil))
	t.Cleanup(ec2Srv.Close)
	t.Cleanup(iamSrv.Close)
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	e := &cluster.EKS{Cluster: cfg.Metadata.Name, Region: "us-east-1",
		EC2: ec2.New(ec2.Options{Region: "us-east-1", BaseEndpoint: aws.String(ec2Srv.URL), Credentials: creds}),
		IAM: iam.New(iam.Options{Region: "us-east-1", BaseEndpoint: aws.String(iamSrv.URL), Credentials: creds}),
	}
	var fargateProfiles []fargate.Profile
	for _, p := range cfg.FargateProfiles {
		fp := p.Profile()
		fp.PodExecutionRoleARN = cfg.RoleARN(clusterconfig.DefaultPodExecutionRole)
		fargateProfiles = append(fargateProfiles, fp)
	}
	f, errs := e.Foundation(context.Background(), cluster.Description{VPCID: cfg.VPC.ID, ARN: cfg.ClusterARN()}, fargateProfiles)
	if len(errs) > 0 {
		t.Fatalf("reading the foundation: %v", errs)
	}
	if v := f.VPCs[0]; v.DNSSupport == nil || !*v.DNSSupport || v.DNSHostnames == nil || !*v.DNSHostnames {
		t.Errorf("VPC DNS attributes: %+v", v)
	}
	if f.Cluster.Account != cfg.AccountID || f.Cluster.Region != "us-east-1" {
		t.Errorf("cluster %+v", f.Cluster)
	}
	want := []string{
		"FG055 Subnet/subnet-private3: subnet subnet-private3 of Fargate profile apps cannot pull images: route table rtb-0privatec has no default route through a NAT gateway, and the VPC lacks the ecr.api, ecr.dkr, s3 endpoints",
		"FG057 IAMRole/" + clusterconfig.DefaultPodExecutionRole + ": the trust policy of pod execution role AmazonEKSFargatePodExecutionRole allows only arn:aws:eks:us-east-1:111122223333:fargateprofile/blog/*: not Fargate profile apps of cluster shop",
		"FG058 IAMRole/" + clusterconfig.DefaultPodExecutionRole + ": pod execution role AmazonEKSFargatePodExecutionRole of Fargate profile apps has no AmazonEKSFargatePodExecutionRolePolicy: Fargate cannot pull images from Amazon ECR",
	}
	if diff := cmp.Diff(want, prerequisites(f)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	// check on the configuration reports the same (its FG059, judged from
	// the node groups it declares, scan leaves to the pods it sees).
	set, err := profiles.ReadFile("../../examples/emulator/prerequisites/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, prerequisites(set.Foundation)); diff != "" {
		t.Errorf("check on the configuration and scan on the emulator disagree (-scan +check):\n%s", diff)
	}
	// The emulator's fargate-scheduler decides image pulls on the
	// configuration's foundation: the same answers as the live one.
	role := cfg.RoleARN(clusterconfig.DefaultPodExecutionRole)
	for _, s := range cfg.VPC.Subnets.Private {
		for _, image := range []string{"nginx:1.27", "111122223333.dkr.ecr.us-east-1.amazonaws.com/shop/api:1"} {
			if live, emulated := f.Pull(s.ID, role, image), cfg.Foundation().Pull(s.ID, role, image); live != emulated {
				t.Errorf("pulling %s in %s: %q live, %q in the emulator", image, s.ID, live, emulated)
			}
		}
	}
}

// prerequisites are the findings of FG053–FG058 on f, as "ID Kind/Name: message", sorted.
func prerequisites(f *foundation.Foundation) []string {
	engine := rules.NewEngine(&rules.Context{Foundation: f}, builtin.Rules(), rules.Options{})
	var out []string
	for _, fd := range engine.Result().Findings {
		if fd.Rule.ID >= "FG053" && fd.Rule.ID <= "FG058" {
			out = append(out, fd.Rule.ID+" "+fd.Object.Kind+"/"+fd.Object.Name+": "+fd.Message)
		}
	}
	slices.Sort(out)
	return out
}
