package eksapi_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
	"github.com/fargatekit/fargatekit/internal/emulator/iamapi"
	"github.com/fargatekit/fargatekit/pkg/foundation"
)

// TestPodExecutionRoleTrust: CreateFargateProfile refuses a pod execution
// role of the emulator's IAM whose trust policy does not let
// eks-fargate-pods.amazonaws.com assume it, with EKS's text, and accepts
// the others, and roles IAM does not have.
func TestPodExecutionRoleTrust(t *testing.T) {
	const (
		ec2Only    = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
		tagOnly    = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"eks-fargate-pods.amazonaws.com"},"Action":"sts:TagSession"}]}`
		denied     = `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":{"Service":"eks-fargate-pods.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
		fargate    = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["ec2.amazonaws.com","eks-fargate-pods.amazonaws.com"]},"Action":["sts:AssumeRole"]}]}`
		misconfig  = "*types.InvalidParameterException: " + foundation.MisconfiguredTrust
		account    = "arn:aws:iam::111122223333:role/"
		otherOwner = "arn:aws:iam::999999999999:role/"
	)
	roles := []clusterconfig.Role{
		{Name: "ec2-only", TrustPolicy: ec2Only}, {Name: "tag-only", TrustPolicy: tagOnly}, {Name: "denied", TrustPolicy: denied},
		{Name: "fargate", TrustPolicy: fargate}, {Name: "no-trust-policy"},
	}
	tests := []struct {
		name    string
		role    string
		noRoles bool // without WithRoles, as before
		want    string
	}{
		{name: "trust without the Fargate principal", role: account + "ec2-only", want: misconfig},
		{name: "the Fargate principal without sts:AssumeRole", role: account + "tag-only", want: misconfig},
		{name: "the Fargate principal denied", role: account + "denied", want: misconfig},
		{name: "the Fargate principal among others", role: account + "fargate"},
		{name: "a role of the configuration without a trust policy (Fargate's)", role: account + "no-trust-policy"},
		{name: "the default pod execution role", role: account + clusterconfig.DefaultPodExecutionRole},
		{name: "a role IAM does not have", role: account + "elsewhere"},
		{name: "another account's role of the same name", role: otherOwner + "ec2-only"},
		{name: "without the emulator's IAM", role: account + "ec2-only", noRoles: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := clusterconfig.Default()
			cfg.IAM.Roles = roles
			var opts []eksapi.Option
			if !tt.noRoles {
				opts = append(opts, eksapi.WithRoles(iamapi.NewServer(cfg, nil)))
			}
			e := open(t, cfg, t.TempDir(), testingclock.NewFakeClock(t0), opts...)
			in := createInput("web")
			in.PodExecutionRoleArn = aws.String(tt.role)
			_, err := e.client.CreateFargateProfile(context.Background(), in)
			if got := apiError(err); got != tt.want {
				t.Errorf("CreateFargateProfile with %s: %q, want %q", tt.role, got, tt.want)
			}
			if tt.want != "" {
				if _, err := e.describe("web"); err == nil {
					t.Error("the refused profile exists")
				}
			}
		})
	}
}
