package watch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// TestEndpoints: /readyz answers once ready; the profiles are served with
// --profiling only.
func TestEndpoints(t *testing.T) {
	for _, profiling := range []bool{false, true} {
		var ready atomic.Bool
		mux := endpoints(prometheus.NewRegistry(), &ready, profiling)
		get := func(path string) int {
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			return rec.Code
		}
		if code := get("/readyz"); code != http.StatusServiceUnavailable {
			t.Errorf("/readyz before the first analysis: %d", code)
		}
		ready.Store(true)
		for path, want := range map[string]int{"/readyz": 200, "/healthz": 200, "/metrics": 200, "/debug/pprof/heap": map[bool]int{false: 404, true: 200}[profiling]} {
			if code := get(path); code != want {
				t.Errorf("profiling %v: %s answers %d, want %d", profiling, path, code, want)
			}
		}
	}
}

// TestClientGoMetrics: /metrics serves client-go's requests, under the
// name controller-runtime's controllers serve them.
func TestClientGoMetrics(t *testing.T) {
	clientmetrics.RequestResult.Increment(context.Background(), "200", "GET", "10.0.0.9:443")
	var ready atomic.Bool
	rec := httptest.NewRecorder()
	endpoints(prometheus.NewRegistry(), &ready, false).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if want := `rest_client_requests_total{code="200",host="10.0.0.9:443",method="GET"} `; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("/metrics has no %s:\n%s", want, rec.Body.String())
	}
}
