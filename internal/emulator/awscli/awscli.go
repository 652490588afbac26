// Package awscli runs the real AWS CLI against the emulator in tests.
package awscli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Runner returns a function that runs the AWS CLI (v1 or v2) against
// endpoint, answering in JSON, and returns its stdout and stderr. The CLI
// sees test credentials and its own empty configuration, none of the
// caller's AWS_ variables. It fails t when the CLI is not installed.
func Runner(t testing.TB, endpoint string) func(args ...string) (stdout, stderr string, err error) {
	t.Helper()
	aws, err := exec.LookPath("aws")
	if err != nil {
		t.Fatalf("the AWS CLI (aws) is not installed: run hack/tools.sh awscli (%v)", err)
	}
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=",
		"AWS_CONFIG_FILE="+filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "credentials"),
	)
	return func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, aws, append([]string{"--endpoint-url", endpoint, "--output", "json"}, args...)...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
}
