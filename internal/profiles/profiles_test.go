package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
)

func TestParseInline(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		want    fargate.Profile
		wantErr string
	}{
		{spec: "name=web,namespace=prod", want: fargate.Profile{Name: "web", Selectors: []fargate.Selector{{Namespace: "prod"}}}},
		{spec: "name=web,namespace=prod-*,labels=app=web,tier=front",
			want: fargate.Profile{Name: "web", Selectors: []fargate.Selector{{Namespace: "prod-*", Labels: map[string]string{"app": "web", "tier": "front"}}}}},
		{spec: "name=two,namespace=a,labels=x=1,namespace=b,subnets=subnet-1;subnet-2",
			want: fargate.Profile{Name: "two", Subnets: []string{"subnet-1", "subnet-2"},
				Selectors: []fargate.Selector{{Namespace: "a", Labels: map[string]string{"x": "1"}}, {Namespace: "b"}}}},
		{spec: "name=web", wantErr: "at least one selector"},
		{spec: "name=eks-web,namespace=a", wantErr: "reserved prefix"},
		{spec: "name=web,labels=a=b", wantErr: "labels= must follow a namespace="},
		{spec: "name=web,namespace=a,color=blue", wantErr: `unknown key "color"`},
		{spec: "name=web,namespace", wantErr: "is not key=value"},
		{spec: "name=web,namespace=a,labels=novalue", wantErr: `label "novalue" is not key=value`},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := ParseInline(tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Source = object.Source{File: "--fargate-profile"}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name         string
		data         string
		wantProfiles []string // name/status
		wantIdentity int
		wantErr      string
	}{
		{name: "eksctl", data: `apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: c, region: us-east-1}
fargateProfiles:
  - name: a
    selectors: [{namespace: a}]
  - name: b
    selectors: [{namespace: b, labels: {app: x}}]
iam:
  podIdentityAssociations:
    - {namespace: a, serviceAccountName: sa}
`, wantProfiles: []string{"a/", "b/"}, wantIdentity: 1},
		{name: "describe", data: `{"fargateProfile": {"fargateProfileName": "web", "status": "DELETING", "selectors": [{"namespace": "prod"}], "tags": {}}}`,
			wantProfiles: []string{"web/DELETING"}},
		{name: "list", data: `{"fargateProfiles": [{"fargateProfileName": "a", "selectors": [{"namespace": "a"}]}, {"fargateProfileName": "b", "selectors": [{"namespace": "b"}]}]}`,
			wantProfiles: []string{"a/", "b/"}},
		{name: "emulator configuration", data: `apiVersion: fargatekit.io/v1alpha1
kind: EmulatorConfig
metadata: {name: shop}
fargateProfiles:
  - {name: apps, selectors: [{namespace: apps}]}
`, wantProfiles: []string{"apps/"}},
		{name: "emulator configuration with an error", data: "apiVersion: fargatekit.io/v1alpha1\nkind: EmulatorConfig\nfargateProfiles: [{name: apps}]\n",
			wantErr: "emulator configuration: fargateProfiles[0].selectors: is empty"},
		{name: "no profile", data: `{"cluster": {"name": "c"}}`, wantErr: "no fargateProfile in the file"},
		{name: "not yaml", data: "a: [b\n", wantErr: "not YAML or JSON"},
		{name: "eksctl with an invalid profile", data: "kind: ClusterConfig\nfargateProfiles:\n  - name: ok\n    selectors: [{namespace: a}]\n  - name: eks-bad\n    selectors: [{}]\n",
			wantProfiles: []string{"ok/"}, wantErr: "fargateProfiles[1] (eks-bad) is left out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := Parse("f", []byte(tc.data))
			if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			var got []string
			for _, p := range set.Profiles {
				got = append(got, p.Name+"/"+p.Status)
			}
			if diff := cmp.Diff(tc.wantProfiles, got); diff != "" {
				t.Errorf("profiles (-want +got):\n%s", diff)
			}
			if len(set.PodIdentity) != tc.wantIdentity {
				t.Errorf("%d pod identity associations, want %d", len(set.PodIdentity), tc.wantIdentity)
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	if _, err := ReadFile("does-not-exist.yaml"); err == nil || !strings.Contains(err.Error(), "does-not-exist.yaml") {
		t.Errorf("error %v does not name the file", err)
	}
}

// parseFixture runs Parse on a fixture file of dir (or on data when file is
// empty) and checks that it fails with an error containing wantErr, or
// succeeds when wantErr is empty.
func parseFixture(t *testing.T, dir, file, data, wantErr string) Set {
	t.Helper()
	raw := []byte(data)
	if file != "" {
		var err error
		if raw, err = os.ReadFile(filepath.Join(dir, file)); err != nil {
			t.Fatal(err)
		}
	}
	set, err := Parse("f", raw)
	if (err != nil) != (wantErr != "") || (err != nil && !strings.Contains(err.Error(), wantErr)) {
		t.Fatalf("error %v, want %q", err, wantErr)
	}
	return set
}

// FuzzParse: any file gives a set or an error, never a panic; what an
// eksctl ClusterConfig says of its managed node groups is on the cluster's
// version.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: shop, version: \"1.33\"}\nmanagedNodeGroups: [{name: a, releaseVersion: 1.33.0-20261101}]\nfargateProfiles: [{name: p, selectors: [{namespace: apps}]}]\n",
		"apiVersion: fargatekit.io/v1alpha1\nkind: EmulatorConfig\nmetadata: {name: lab}\nkubernetesVersion: \"1.34\"\nmanagedNodeGroups: [{name: system, desiredCapacity: 1, instanceType: m6i.large, kubeletVersion: \"1.33\"}]\n",
		`{"fargateProfile": {"fargateProfileName": "apps", "selectors": [{"namespace": "apps", "labels": {"a": "b"}}]}}`,
		"kind: ClusterConfig\nmanagedNodeGroups: [{}, {name: 1}]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := Parse("f.yaml", data)
		if err != nil || set.Format != FormatEksctl {
			return
		}
		for _, ng := range set.Managed {
			if ng.Version != set.Version {
				t.Errorf("node group %q on %q, the cluster on %q", ng.Name, ng.Version, set.Version)
			}
		}
	})
}
