package watch

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
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
