package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

const cfnFixtures = "testdata/cloudformation"

func TestParseCloudFormationFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []fargate.Profile
	}{
		{file: "fargate.yaml", want: []fargate.Profile{
			// !Ref PrivateSubnet1 is left out.
			*prof("web", "", []string{"subnet-0b8d4f62e3ca5a712"}, sel("prod", "app", "web-?", "tier", "frontend"), sel("staging-*")),
			// FargateProfileName is a !Sub: the logical ID names the profile.
			*prof("BatchProfile", "", nil, sel("batch")),
		}},
		{file: "fargate.json", want: []fargate.Profile{
			*prof("kube-system", "", []string{"subnet-0b8d4f62e3ca5a712", "subnet-0c9e5a73f4db6b823"}, sel("kube-system", "k8s-app", "kube-dns")),
			// Fn::Join name; a namespace that is a Ref is read as "".
			*prof("JobsProfile", "", nil, sel(""), sel("cron")),
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(cfnFixtures, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseCloudFormation(tc.file, data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseCloudFormation(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []fargate.Profile
		wantErr    string
	}{
		{name: "no profile", data: "AWSTemplateFormatVersion: '2010-09-09'\nResources:\n  Bucket: {Type: AWS::S3::Bucket}\n"},
		{name: "no Resources", data: "Description: a fragment\n"},
		{name: "missing name, intrinsic labels, aliases",
			data: `Resources:
  Apps:
    Type: AWS::EKS::FargateProfile
    Properties:
      Selectors:
        - &sel
          Namespace: apps
          Labels:
            - {Key: app, Value: !Ref App}
            - {Key: !Select [0, [a]], Value: x}
            - {Key: enabled, Value: true}
        - *sel
      Subnets: !Ref Subnets
`,
			want: []fargate.Profile{{Name: "Apps", Selectors: []fargate.Selector{
				sel("apps", "app", "", "", "x", "enabled", "true"), sel("apps", "app", "", "", "x", "enabled", "true")}}}},
		{name: "long-form intrinsics", data: `{"Resources": {"P": {"Type": "AWS::EKS::FargateProfile", "Properties": {
			"FargateProfileName": {"Fn::Sub": "x"}, "Subnets": [{"Fn::ImportValue": "s"}, "subnet-1"],
			"Selectors": [{"Namespace": {"Fn::If": ["c", "a", "b"]}, "Labels": [{"Key": "k", "Value": {"Ref": "v"}}]}]}}}}`,
			want: []fargate.Profile{{Name: "P", Subnets: []string{"subnet-1"}, Selectors: []fargate.Selector{sel("", "k", "")}}}},
		{name: "odd shapes are skipped", data: `Resources:
  A: {Type: AWS::EKS::FargateProfile}
  B: {Type: AWS::EKS::FargateProfile, Properties: {Selectors: {Namespace: x}, Subnets: subnet-1}}
  C: [1, 2]
  D: {Type: !Ref T}
`, want: []fargate.Profile{{Name: "A"}, {Name: "B"}}},
		{name: "not YAML", data: "Resources: [a\n", wantErr: "f.yaml: not YAML or JSON"},
		{name: "not a mapping", data: "- Resources\n", wantErr: "expected a mapping with Resources"},
		{name: "empty", data: "", wantErr: "expected a mapping with Resources"},
		{name: "Resources a list", data: "Resources: [a]\n", wantErr: "line 1: Resources is not a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCloudFormation("f.yaml", []byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDetectsCloudFormation(t *testing.T) {
	for _, tc := range []struct {
		name, file, data string
		wantProfiles     []string
		wantErr          string
	}{
		{name: "YAML with short-form tags", file: "fargate.yaml", wantProfiles: []string{"web", "BatchProfile"}},
		{name: "JSON, a Ref namespace not validated", file: "fargate.json", wantProfiles: []string{"kube-system", "JobsProfile"}},
		{name: "no AWSTemplateFormatVersion", data: "Resources:\n  P:\n    Type: AWS::EKS::FargateProfile\n    Properties:\n      ClusterName: !Ref C\n      Selectors: [{Namespace: a}]\n",
			wantProfiles: []string{"P"}},
		{name: "no profile", data: "AWSTemplateFormatVersion: '2010-09-09'\nResources: {}\n", wantErr: "no AWS::EKS::FargateProfile resource in the CloudFormation template"},
		{name: "invalid profiles are reported",
			data:         `{"Resources": {"P": {"Type": "AWS::EKS::FargateProfile", "Properties": {"FargateProfileName": "eks-p", "Selectors": [{"Labels": []}]}}}}`,
			wantProfiles: nil, wantErr: `resource P (eks-p) is left out: fargateProfileName "eks-p" starts with the reserved prefix 'eks-'` + "\nselectors[0].namespace is required"},
		{name: "other resources: not CloudFormation", data: "Resources:\n  B: {Type: AWS::S3::Bucket}\n", wantErr: "no fargateProfile in the file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := parseFixture(t, cfnFixtures, tc.file, tc.data, tc.wantErr)
			var got []string
			for _, p := range set.Profiles {
				got = append(got, p.Name)
			}
			if diff := cmp.Diff(tc.wantProfiles, got); diff != "" {
				t.Errorf("profiles (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseCloudFormation(f *testing.F) {
	for _, file := range []string{"fargate.yaml", "fargate.json", "../../../../pkg/rules/builtin/testdata/foundation/cloudformation.yaml"} {
		data, err := os.ReadFile(filepath.Join(cfnFixtures, file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("Resources:\n  P: &p\n    Type: AWS::EKS::FargateProfile\n    Properties: {Selectors: [*p]}\n"))
	f.Fuzz(func(_ *testing.T, data []byte) {
		_, _ = ParseCloudFormation("fuzz.yaml", data)
		_ = isCloudFormation(data)
	})
}
