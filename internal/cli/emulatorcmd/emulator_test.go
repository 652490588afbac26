package emulatorcmd

import (
	"strings"
	"testing"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator"
)

// TestEnvLines: `emulator env` points the EKS, EC2 and IAM endpoints of the
// SDKs and the AWS CLI v2 at the one AWS endpoint of the emulator.
func TestEnvLines(t *testing.T) {
	o := &emulator.Options{Config: clusterconfig.Default(), StateDir: "/tmp/fk", EKSPort: 8780}
	env := map[string]string{}
	for _, l := range envLines(o) {
		for _, kv := range strings.Fields(strings.TrimPrefix(l, "export ")) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	for _, k := range []string{"AWS_ENDPOINT_URL_EKS", "AWS_ENDPOINT_URL_EC2", "AWS_ENDPOINT_URL_IAM"} {
		if env[k] != "http://127.0.0.1:8780" {
			t.Errorf("%s=%q, want the emulator's AWS endpoint http://127.0.0.1:8780", k, env[k])
		}
	}
	if env["KUBECONFIG"] != "/tmp/fk/kubeconfig" || env["AWS_REGION"] != "us-east-1" || env["AWS_DEFAULT_REGION"] != "us-east-1" {
		t.Errorf("env %v", env)
	}
}
