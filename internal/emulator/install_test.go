package emulator

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

var testChart = HostChart{
	Component: "thing", Namespace: "things", Release: "thing", Deployment: "thing-deploy",
	Command:       []string{"thing", "serve"},
	LoopbackFlags: []string{"--listen", "--metrics-listen"},
}

// thingDeployment is the chart's Deployment with one container.
func thingDeployment(c corev1.Container) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "thing-deploy", Namespace: "things"}}
	d.Spec.Template.Spec = corev1.PodSpec{ServiceAccountName: "thing-sa", Containers: []corev1.Container{c}}
	return d
}

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

// TestStandIn: the host process runs the container's command on loopback
// with the service account's token, or says why it cannot.
func TestStandIn(t *testing.T) {
	for _, tc := range []struct {
		name      string
		container corev1.Container
		args, env []string
		err       string
	}{{
		name: "stand-in",
		container: corev1.Container{
			Command: []string{"thing"},
			Args:    []string{"serve", "--listen=:8443", "--metrics-listen=:8080", "--other=:9", "--listen=0.0.0.0:1"},
			Env:     []corev1.EnvVar{fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace"), {Name: "PLAIN", Value: "v"}},
		},
		args: []string{"thing", "serve", "--kubeconfig", "KUBECONFIG",
			"--listen=127.0.0.1:8443", "--metrics-listen=127.0.0.1:8080", "--other=:9", "--listen=0.0.0.0:1"},
		env: []string{"POD_NAME=thing-host", "POD_NAMESPACE=things", "PLAIN=v"},
	}, {
		name:      "other command",
		container: corev1.Container{Args: []string{"thing", "watch"}},
		err:       `the chart's container runs "thing watch", not thing serve`,
	}, {
		name:      "short command",
		container: corev1.Container{Args: []string{"thing"}},
		err:       `the chart's container runs "thing", not thing serve`,
	}, {
		name:      "env from a secret",
		container: corev1.Container{Args: []string{"thing", "serve"}, Env: []corev1.EnvVar{{Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{}}}}},
		err:       "the chart's container has env S from a source the emulator does not fill",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			admin := filepath.Join(dir, "admin-kubeconfig")
			cfg := clientcmdapi.NewConfig()
			cfg.Clusters["kwok"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
			cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "admin"}
			cfg.Contexts["kwok"] = &clientcmdapi.Context{Cluster: "kwok", AuthInfo: "admin"}
			cfg.CurrentContext = "kwok"
			if err := clientcmd.WriteToFile(*cfg, admin); err != nil {
				t.Fatal(err)
			}
			client := fake.NewClientset(thingDeployment(tc.container))
			client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.GetSubresource() != "token" {
					return false, nil, nil
				}
				return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: "sa-token"}}, nil
			})

			args, env, err := testChart.standIn(context.Background(), client, admin, dir)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			kubeconfig := filepath.Join(dir, "kubeconfig")
			for i, a := range tc.args {
				tc.args[i] = strings.ReplaceAll(a, "KUBECONFIG", kubeconfig)
			}
			if diff := cmp.Diff(tc.args, args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.env, env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			sa, err := clientcmd.LoadFromFile(kubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			c := sa.Contexts[sa.CurrentContext]
			if c == nil || c.AuthInfo != "thing-sa" || c.Namespace != "things" ||
				sa.AuthInfos["thing-sa"].Token != "sa-token" || sa.Clusters[c.Cluster].Server != "https://127.0.0.1:6443" {
				t.Errorf("the service account's kubeconfig is not the admin's cluster with the account's token: %+v", sa)
			}
		})
	}
}

// TestAWSEnv: a chart's pod calls the emulator's EKS, EC2 and IAM APIs
// with credentials the SDK accepts.
func TestAWSEnv(t *testing.T) {
	got := map[string]any{}
	for _, e := range AWSEnv("http://127.0.0.1:4566") {
		m := e.(map[string]any)
		got[m["name"].(string)] = m["value"]
	}
	want := map[string]any{
		"AWS_ENDPOINT_URL_EKS": "http://127.0.0.1:4566", "AWS_ENDPOINT_URL_EC2": "http://127.0.0.1:4566", "AWS_ENDPOINT_URL_IAM": "http://127.0.0.1:4566",
		"AWS_ACCESS_KEY_ID": "emulator", "AWS_SECRET_ACCESS_KEY": "emulator",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AWSEnv (-want +got):\n%s", diff)
	}
}
