package emulator

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
)

func TestDeprecatedRequests(t *testing.T) {
	metrics := `# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.
# TYPE apiserver_requested_deprecated_apis gauge
apiserver_requested_deprecated_apis{group="storage.k8s.io",removed_release="1.35",resource="volumeattributesclasses",subresource="",version="v1alpha1"} 1
apiserver_requested_deprecated_apis{group="",removed_release="",resource="componentstatuses",subresource="",version="v1"} 1
apiserver_requested_deprecated_apis{group="batch",removed_release="1.25",resource="cronjobs",subresource="",version="v1beta1"} 0
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",verb="GET"} 12
`
	got, err := deprecatedRequests([]byte(metrics))
	if err != nil {
		t.Fatal(err)
	}
	want := []eksapi.DeprecatedRequest{
		{Group: "", Version: "v1", Resource: "componentstatuses"},
		{Group: "storage.k8s.io", Version: "v1alpha1", Resource: "volumeattributesclasses", RemovedRelease: "1.35"},
	}
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Errorf("deprecated requests (-want +got):\n%s", diff)
	}
	if _, err := deprecatedRequests([]byte("not metrics {")); err == nil {
		t.Error("metrics that do not parse gave no error")
	}
	if got, err := deprecatedRequests(nil); err != nil || len(got) != 0 {
		t.Errorf("no metrics: %v %v", got, err)
	}
}

var cmpSorted = cmp.Transformer("sorted", func(rs []eksapi.DeprecatedRequest) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Group+"/"+r.Version+"/"+r.Resource+"@"+r.RemovedRelease)
	}
	slices.Sort(out)
	return out
})
