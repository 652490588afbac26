package foundation

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// documented is the trust policy of the EKS User Guide (pod-execution-role).
const documented = `{
  "Version": "2012-10-17",
  "Statement": [{
    "Effect": "Allow",
    "Condition": {"ArnLike": {"aws:SourceArn": "arn:aws:eks:us-east-1:111122223333:fargateprofile/shop/*"}},
    "Principal": {"Service": "eks-fargate-pods.amazonaws.com"},
    "Action": "sts:AssumeRole"
  }]
}`

func TestParseTrust(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    Trust
		wantErr bool
	}{
		{name: "documented", doc: documented, want: Trust{Fargate: true,
			SourceARNs: []string{"arn:aws:eks:us-east-1:111122223333:fargateprofile/shop/*"}}},
		{name: "URL-encoded as GetRole returns it", doc: url.QueryEscape(documented), want: Trust{Fargate: true,
			SourceARNs: []string{"arn:aws:eks:us-east-1:111122223333:fargateprofile/shop/*"}}},
		{name: "one statement, lists, account condition",
			doc: `{"Statement":{"Effect":"Allow","Principal":{"Service":["ec2.amazonaws.com","eks-fargate-pods.amazonaws.com"]},` +
				`"Action":["sts:TagSession","sts:AssumeRole"],"Condition":{"StringEquals":{"aws:SourceAccount":["111122223333"]}}}}`,
			want: Trust{Fargate: true, SourceAccounts: []string{"111122223333"}}},
		{name: "action wildcard", doc: `{"Statement":[{"Effect":"Allow","Principal":{"Service":"eks-fargate-pods.amazonaws.com"},"Action":"sts:*"}]}`,
			want: Trust{Fargate: true}},
		{name: "EC2 node role: near miss", doc: `{"Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`},
		{name: "URL-encoded heredoc", doc: url.QueryEscape("\n  " + documented + "\n"), want: Trust{Fargate: true,
			SourceARNs: []string{"arn:aws:eks:us-east-1:111122223333:fargateprofile/shop/*"}}},
		{name: "allowed, then denied", doc: `{"Statement":[{"Effect":"Allow","Principal":{"Service":"eks-fargate-pods.amazonaws.com"},"Action":"sts:AssumeRole"},` +
			`{"Effect":"Deny","Principal":"*","Action":"sts:*"}]}`},
		{name: "denied", doc: `{"Statement":[{"Effect":"Deny","Principal":{"Service":"eks-fargate-pods.amazonaws.com"},"Action":"sts:AssumeRole"}]}`},
		{name: "other action", doc: `{"Statement":[{"Effect":"Allow","Principal":{"Service":"eks-fargate-pods.amazonaws.com"},"Action":"sts:AssumeRoleWithWebIdentity"}]}`},
		{name: "account principal", doc: `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"sts:AssumeRole"}]}`},
		{name: "not JSON", doc: `{`, wantErr: true},
		{name: "bad action kept apart", doc: `{"Statement":[{"Effect":"Allow","Principal":{"Service":"eks-fargate-pods.amazonaws.com"},"Action":3},` +
			`{"Effect":"Allow","Principal":{"Service":"eks-fargate-pods.amazonaws.com"},"Action":"sts:AssumeRole"}]}`,
			want: Trust{Fargate: true}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTrust(tt.doc)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseTrust error = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ParseTrust (-want +got):\n%s", diff)
			}
		})
	}
}

func TestForeign(t *testing.T) {
	shop := Cluster{Name: "shop", Region: "us-east-1", Account: "111122223333"}
	tests := []struct {
		name    string
		trust   Trust
		cluster Cluster
		profile string
		want    []string
	}{
		{name: "no condition", trust: Trust{Fargate: true}, cluster: shop, profile: "apps"},
		{name: "its cluster", trust: Trust{SourceARNs: []string{"arn:aws:eks:us-east-1:111122223333:fargateprofile/shop/*"}}, cluster: shop, profile: "apps"},
		{name: "another cluster", trust: Trust{SourceARNs: []string{"arn:aws:eks:us-east-1:111122223333:fargateprofile/blog/*"}}, cluster: shop, profile: "apps",
			want: []string{"arn:aws:eks:us-east-1:111122223333:fargateprofile/blog/*"}},
		{name: "another account", trust: Trust{SourceARNs: []string{"arn:aws:eks:us-east-1:999988887777:fargateprofile/shop/*"}}, cluster: shop, profile: "apps",
			want: []string{"arn:aws:eks:us-east-1:999988887777:fargateprofile/shop/*"}},
		{name: "one of two matches", trust: Trust{SourceARNs: []string{"arn:aws:eks:*:*:fargateprofile/blog/*", "arn:aws:eks:*:*:fargateprofile/shop/*"}}, cluster: shop, profile: "apps"},
		{name: "another profile", trust: Trust{SourceARNs: []string{"arn:aws:eks:us-east-1:111122223333:fargateprofile/shop/web/*"}}, cluster: shop, profile: "apps",
			want: []string{"arn:aws:eks:us-east-1:111122223333:fargateprofile/shop/web/*"}},
		{name: "unknown account matches", trust: Trust{SourceARNs: []string{"arn:aws:eks:us-east-1:999988887777:fargateprofile/shop/*"}}, cluster: Cluster{Name: "shop"}, profile: "apps"},
		{name: "not an ARN", trust: Trust{SourceARNs: []string{"shop"}}, cluster: shop, profile: "apps", want: []string{"shop"}},
		{name: "source account", trust: Trust{SourceAccounts: []string{"999988887777"}}, cluster: shop, profile: "apps", want: []string{"999988887777"}},
		{name: "source account matches", trust: Trust{SourceAccounts: []string{"111122223333"}}, cluster: shop, profile: "apps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.trust.Foreign(tt.cluster, tt.profile)); diff != "" {
				t.Errorf("Foreign (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRoleName(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:iam::111122223333:role/fargate":         "fargate",
		"arn:aws:iam::111122223333:role/teams/a/fargate": "fargate",
		"arn:aws-cn:iam::111122223333:role/fargate-cn":   "fargate-cn",
		"arn:aws:iam::111122223333:user/fargate":         "",
		"fargate":                                        "",
	} {
		if got := RoleName(arn); got != want {
			t.Errorf("RoleName(%q) = %q, want %q", arn, got, want)
		}
	}
}

func FuzzParseTrust(f *testing.F) {
	f.Add(documented)
	f.Add(`{"Statement":{"Effect":"Allow","Principal":"*","Action":"*","Condition":{"StringLike":{"aws:SourceArn":["a","b"]}}}}`)
	f.Add("%7B%22Statement%22%3A%5B%5D%7D")
	f.Fuzz(func(t *testing.T, doc string) {
		trust, err := ParseTrust(doc)
		if err == nil && !trust.Fargate && (len(trust.SourceARNs) > 0 || len(trust.SourceAccounts) > 0) {
			t.Errorf("conditions %v without a statement for Fargate", trust)
		}
		_ = trust.Foreign(Cluster{Name: "c", Region: "r", Account: "1"}, "p")
	})
}
