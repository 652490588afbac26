package cluster

import (
	"testing"

	"helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestEKSCluster(t *testing.T) {
	const arn = "arn:aws:eks:eu-west-1:111122223333:cluster/shop"
	exec := func(args ...string) *clientcmdapi.AuthInfo {
		return &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "aws", Args: args}}
	}
	for _, tc := range []struct {
		name               string
		cluster            string
		user               *clientcmdapi.AuthInfo
		wantName, wantRegn string
	}{
		{"aws eks update-kubeconfig", arn, exec("--region", "eu-west-1", "eks", "get-token", "--cluster-name", "shop", "--output", "json"), "shop", "eu-west-1"},
		{"the ARN alone (the emulator)", arn, &clientcmdapi.AuthInfo{Token: "x"}, "shop", "eu-west-1"},
		{"eksctl: --cluster-name=N, region in env", "shop.eu-west-1.eksctl.io", &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
			Args: []string{"eks", "get-token", "--cluster-name=prod"}, Env: []clientcmdapi.ExecEnvVar{{Name: "AWS_DEFAULT_REGION", Value: "us-west-2"}}}}, "prod", "us-west-2"},
		{"aws-iam-authenticator -i", "kind", exec("token", "-i", "legacy"), "legacy", ""},
		{"the exec entry wins over the ARN", arn, exec("eks", "get-token", "--cluster-name", "other"), "other", "eu-west-1"},
		{"near miss: an ARN of another service", "arn:aws:ecs:eu-west-1:111122223333:cluster/shop", &clientcmdapi.AuthInfo{}, "", ""},
		{"near miss: a flag without a value", "kind", exec("eks", "get-token", "--cluster-name"), "", ""},
		{"near miss: kind", "kind-kind", &clientcmdapi.AuthInfo{}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := clientcmdapi.NewConfig()
			cfg.Clusters[tc.cluster] = &clientcmdapi.Cluster{Server: "https://example"}
			cfg.AuthInfos["u"] = tc.user
			cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: tc.cluster, AuthInfo: "u"}
			name, region, _ := EKSCluster(cfg, "ctx")
			if name != tc.wantName || region != tc.wantRegn {
				t.Errorf("EKSCluster = %q, %q; want %q, %q", name, region, tc.wantName, tc.wantRegn)
			}
		})
	}
	if name, region, profile := EKSCluster(clientcmdapi.NewConfig(), "missing"); name != "" || region != "" || profile != "" {
		t.Errorf("a missing context gave %q, %q", name, region)
	}
}

func TestEKSClusterProfile(t *testing.T) {
	cfg := clientcmdapi.NewConfig()
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		Args: []string{"eks", "get-token", "--cluster-name", "shop"}, Env: []clientcmdapi.ExecEnvVar{{Name: "AWS_PROFILE", Value: "prod-admin"}}}}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	if _, _, profile := EKSCluster(cfg, "ctx"); profile != "prod-admin" {
		t.Errorf("profile %q, want prod-admin from the exec environment", profile)
	}
	cfg.AuthInfos["u"].Exec.Args = append(cfg.AuthInfos["u"].Exec.Args, "--profile", "other")
	if _, _, profile := EKSCluster(cfg, "ctx"); profile != "other" {
		t.Errorf("profile %q, want other from --profile", profile)
	}
}

func TestSameEndpoint(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://ABC.gr7.us-east-1.eks.amazonaws.com", "https://abc.gr7.us-east-1.eks.amazonaws.com/", true},
		{"https://abc.eks.amazonaws.com:443", "https://abc.eks.amazonaws.com", true},
		{"https://127.0.0.1:6443", "https://127.0.0.1:6443", true},
		{"https://abc.eks.amazonaws.com", "https://def.eks.amazonaws.com", false},
		{"https://127.0.0.1:6443", "https://127.0.0.1:6444", false},
	} {
		if got := SameEndpoint(tc.a, tc.b); got != tc.want {
			t.Errorf("SameEndpoint(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestDecodeRelease(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want string
	}{
		{"not base64", "%%%", "decoding the Helm release in Secret apps/sh.helm.release.v1.web.v1: "},
		{"not JSON", "bm90IGpzb24=", "decoding the Helm release in Secret apps/sh.helm.release.v1.web.v1: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.web.v1", Namespace: "apps"}, Data: map[string][]byte{"release": []byte(tc.data)}}
			_, err := DecodeRelease(s)
			if err == nil || len(err.Error()) <= len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
				t.Errorf("DecodeRelease: %v, want an error starting %q", err, tc.want)
			}
		})
	}
}

// TestReleaseObjects: a release Helm's own driver stored decodes into the
// objects of its manifest, placed in the release.
func TestReleaseObjects(t *testing.T) {
	client := fake.NewClientset()
	rel := &rspb.Release{Name: "web", Namespace: "apps", Version: 3, Info: &rspb.Info{Status: common.StatusDeployed},
		Manifest: "---\n# Source: web/templates/pdb.yaml\napiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\nspec:\n  minAvailable: 1\n"}
	if err := driver.NewSecrets(client.CoreV1().Secrets("apps")).Create("sh.helm.release.v1.web.v3", rel); err != nil {
		t.Fatal(err)
	}
	s, err := client.CoreV1().Secrets("apps").Get(t.Context(), "sh.helm.release.v1.web.v3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := releaseObjects(s)
	if err != nil || len(got) != 1 {
		t.Fatalf("releaseObjects = %v, %v", got, err)
	}
	o := got[0].Object
	if o.Ref.APIVersion != "policy/v1beta1" || o.Ref.Namespace != "apps" || o.Source.File != "helm release apps/web" || o.Source.Line != 3 {
		t.Errorf("object %+v at %+v", o.Ref, o.Source)
	}
}
