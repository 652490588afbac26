// Package awscli runs the real AWS CLI against the emulator in tests.
package awscli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	aws := lookPath(t)
	env := isolated(t.TempDir())
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

func lookPath(t testing.TB) string {
	t.Helper()
	aws, err := exec.LookPath("aws")
	if err != nil {
		t.Fatalf("the AWS CLI (aws) is not installed: run hack/tools.sh awscli (%v)", err)
	}
	return aws
}

// isolated is the environment of the CLI: the caller's without its AWS_
// variables, test credentials, and a configuration of its own under home.
func isolated(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=",
		"AWS_CONFIG_FILE="+filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "credentials"),
	)
}

// QuickWaiters returns a directory for AWS_DATA_PATH in which the AWS CLI's
// EKS waiters poll every second, as long in all as the CLI's own: a copy of
// the waiter model the installed CLI loads, with only the delays and the
// numbers of attempts changed. EKS's model polls every 10 or 30 seconds,
// which the emulator's second-long operations turn into dead time; the
// acceptors, what the waiters check, stay the CLI's. Without the model (a
// CLI that loads it otherwise), it returns "" and the waiters keep their
// pace.
func QuickWaiters(t testing.TB) string {
	t.Helper()
	path, version, model := waiterModel(t, "")
	if model == nil {
		t.Logf("the AWS CLI's debug log names no EKS waiter model: its waiters poll at their own pace")
		return ""
	}
	waiters, _ := model["waiters"].(map[string]any)
	if len(waiters) == 0 {
		t.Fatalf("the AWS CLI's EKS waiter model %s has no waiters", path)
	}
	for name, v := range waiters {
		w, _ := v.(map[string]any)
		delay, ok1 := w["delay"].(float64)
		attempts, ok2 := w["maxAttempts"].(float64)
		if !ok1 || !ok2 {
			t.Fatalf("the waiter %s of %s has no delay or maxAttempts", name, path)
		}
		w["delay"], w["maxAttempts"] = 1, delay*attempts
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "eks", version, "waiters-2.json")
	data, err := json.Marshal(model)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(file), 0o755)
	}
	if err == nil {
		err = os.WriteFile(file, data, 0o644)
	}
	if err != nil {
		t.Fatalf("writing the EKS waiter model: %v", err)
	}
	return dir
}

// loaded finds the EKS waiter model in the CLI's debug log: its path and
// API version.
var loaded = regexp.MustCompile(`(?m)Loading JSON file: (.+/eks/([^/]+)/waiters-2\.json(\.gz)?)$`)

// waiterModel returns the EKS waiter model the CLI loads with dataPath as
// AWS_DATA_PATH, its path and API version; a nil model when its debug log
// names none. The CLI waits on an endpoint that refuses at once: it loads
// the model, logs its path, and fails.
func waiterModel(t testing.TB, dataPath string) (path, version string, model map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, lookPath(t), "--debug", "--endpoint-url", "http://127.0.0.1:1",
		"eks", "wait", "fargate-profile-active", "--cluster-name", "x", "--fargate-profile-name", "x")
	home := t.TempDir() // no ~/.aws/models of the caller's
	cmd.Env = append(isolated(home), "HOME="+home, "AWS_MAX_ATTEMPTS=1", "AWS_DATA_PATH="+dataPath)
	out, _ := cmd.CombinedOutput()
	m := loaded.FindSubmatch(out)
	if m == nil {
		return "", "", nil
	}
	path, version = string(m[1]), string(m[2])
	data, err := os.ReadFile(path)
	if err == nil && m[3] != nil {
		var r *gzip.Reader
		if r, err = gzip.NewReader(bytes.NewReader(data)); err == nil {
			data, err = io.ReadAll(r)
		}
	}
	if err == nil {
		err = json.Unmarshal(data, &model)
	}
	if err != nil {
		t.Fatalf("reading the AWS CLI's EKS waiter model %s: %v", path, err)
	}
	return path, version, model
}
