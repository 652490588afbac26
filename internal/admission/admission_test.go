package admission

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func review(t *testing.T, op admissionv1.Operation, kind string, obj any) string {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	r := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u1", Operation: op, Namespace: "apps",
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: kind}, Object: runtime.RawExtension{Raw: raw}},
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestHandler(t *testing.T) {
	label := func(_ *admissionv1.AdmissionRequest, pod *corev1.Pod) ([]PatchOp, error) {
		if pod.Name == "broken" {
			return nil, errors.New("cannot decide")
		}
		return MapEntry("/metadata/labels", pod.Labels, "a/b", pod.Namespace), nil
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}}}
	tests := []struct {
		name      string
		body      string
		status    int
		patch     string // "" for none
		errorSeen bool
	}{
		{"a pod created", review(t, admissionv1.Create, "Pod", pod), http.StatusOK, `[{"op":"add","path":"/metadata/labels/a~1b","value":"apps"}]`, false},
		{"a pod updated", review(t, admissionv1.Update, "Pod", pod), http.StatusOK, "", false},
		{"not a pod", review(t, admissionv1.Create, "Service", pod), http.StatusOK, "", false},
		{"the mutator fails", review(t, admissionv1.Create, "Pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "broken"}}), http.StatusOK, "", true},
		{"an unreadable pod", review(t, admissionv1.Create, "Pod", map[string]any{"spec": "no"}), http.StatusOK, "", true},
		{"not JSON", "{", http.StatusBadRequest, "", true},
		{"no request", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, http.StatusBadRequest, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen error
			rec := httptest.NewRecorder()
			Handler(label, func(err error) { seen = err }).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", strings.NewReader(tt.body)))
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if (seen != nil) != tt.errorSeen {
				t.Errorf("error reported: %v, want one: %v", seen, tt.errorSeen)
			}
			if tt.status != http.StatusOK {
				return
			}
			var out admissionv1.AdmissionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatal(err)
			}
			if out.Response == nil || out.Response.UID != "u1" || !out.Response.Allowed {
				t.Fatalf("response %+v: want u1 allowed", out.Response)
			}
			if diff := cmp.Diff(tt.patch, string(out.Response.Patch)); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMapEntry(t *testing.T) {
	if got := MapEntry("/metadata/labels", nil, "k", "v"); got[0].Path != "/metadata/labels" {
		t.Errorf("no map: %v, want the map added", got)
	}
	if got := MapEntry("/metadata/annotations", map[string]string{}, "x~y/z", "v"); got[0].Path != "/metadata/annotations/x~0y~1z" {
		t.Errorf("escaped key: %v", got)
	}
}
