package watchcmd

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	restclient "k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
)

// answer is what the API server's service proxy answers.
type answer struct {
	body string
	err  error
}

func (a answer) DoRaw(context.Context) ([]byte, error) { return []byte(a.body), a.err }
func (a answer) Stream(context.Context) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader(a.body)), a.err
}

// TestServedByAPIServer: install waits for the Service to answer through
// the API server, and when it does not, names the pod nothing placed.
func TestServedByAPIServer(t *testing.T) {
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "fargatekit-watch-1", Namespace: release,
		Labels: map[string]string{"app.kubernetes.io/name": "fargatekit-watch"}}}
	for _, tc := range []struct {
		name     string
		failures int // proxy calls that fail before one succeeds
		pod      *corev1.Pod
		want     string
	}{
		{name: "served at once"},
		{name: "served once the endpoint is there", failures: 2},
		{name: "never placed", failures: -1, pod: pending, want: "its pod fargatekit-watch-1 is Pending: no node takes it"},
		{name: "placed, not reached", failures: -1, want: "no endpoints available for service"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			if tc.pod != nil {
				if _, err := client.CoreV1().Pods(release).Create(context.Background(), tc.pod, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			calls := 0
			client.PrependProxyReactor("services", func(clienttesting.Action) (bool, restclient.ResponseWrapper, error) {
				calls++
				if tc.failures < 0 || calls <= tc.failures {
					return true, answer{err: errors.New(`no endpoints available for service "fargatekit-watch"`)}, nil
				}
				return true, answer{body: "ok"}, nil
			})
			err := servedByAPIServer(context.Background(), client, time.Second)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want == "" && calls != tc.failures+1:
				t.Errorf("%d proxy calls, want %d", calls, tc.failures+1)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}
