// Package admission serves mutating admission webhooks for pods: it reads
// an AdmissionReview (admission.k8s.io/v1), asks a PodMutator for a JSON
// patch, and answers. The emulator's Fargate webhook and spread's webhook
// share it. A request it cannot read is allowed unchanged, as the API
// server does with a webhook of failurePolicy Ignore that fails.
package admission

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// PatchOp is one JSON patch (RFC 6902) operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// String describes a patch for logs and tests.
func (p PatchOp) String() string { return fmt.Sprintf("%s %s %v", p.Op, p.Path, p.Value) }

// MapEntry sets key in the string map at path (/metadata/labels), creating
// the map when the object has none.
func MapEntry(path string, m map[string]string, key, value string) []PatchOp {
	if m == nil {
		return []PatchOp{{Op: "add", Path: path, Value: map[string]string{key: value}}}
	}
	return []PatchOp{{Op: "add", Path: path + "/" + escape(key), Value: value}}
}

// MapEntries sets several keys (key, value, key, value...) in the string
// map at path, creating the map when the object has none.
func MapEntries(path string, m map[string]string, kv ...string) []PatchOp {
	if m == nil {
		add := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			add[kv[i]] = kv[i+1]
		}
		return []PatchOp{{Op: "add", Path: path, Value: add}}
	}
	var ops []PatchOp
	for i := 0; i+1 < len(kv); i += 2 {
		ops = append(ops, MapEntry(path, m, kv[i], kv[i+1])...)
	}
	return ops
}

// escape writes a map key as a JSON pointer token.
func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

var errNoRequest = errors.New("no request")

// PodMutator returns the patch for a pod being created; nil leaves it
// unchanged. An error also leaves it unchanged: the handler reports it
// through Handler's onError.
type PodMutator func(req *admissionv1.AdmissionRequest, pod *corev1.Pod) ([]PatchOp, error)

// Handler answers AdmissionReview requests for pods with mutate's patches.
// Anything that is not a pod's creation is allowed unchanged. onError, if
// set, hears of every request that could not be mutated as intended.
func Handler(mutate PodMutator, onError func(error)) http.Handler {
	fail := func(err error) {
		if onError != nil {
			onError(err)
		}
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err != nil {
			fail(fmt.Errorf("reading the request: %w", err))
			http.Error(rw, "reading the request", http.StatusBadRequest)
			return
		}
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			fail(fmt.Errorf("the request is not an AdmissionReview (%w)", cmp.Or(err, errNoRequest)))
			http.Error(rw, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		req := review.Request
		resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
		if req.Operation == admissionv1.Create && req.Kind.Kind == "Pod" && req.SubResource == "" {
			if ops, err := podPatch(mutate, req); err != nil {
				fail(err)
			} else if ops != nil {
				patch, err := json.Marshal(ops)
				if err != nil {
					fail(fmt.Errorf("encoding the patch: %w", err))
				} else {
					pt := admissionv1.PatchTypeJSONPatch
					resp.Patch, resp.PatchType = patch, &pt
				}
			}
		}
		review.Response, review.Request = resp, nil
		rw.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(rw).Encode(&review); err != nil {
			slog.Warn("admission webhook cannot answer", "err", err)
		}
	})
}

func podPatch(mutate PodMutator, req *admissionv1.AdmissionRequest) ([]PatchOp, error) {
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		return nil, fmt.Errorf("reading pod %s/%s: %w", req.Namespace, req.Name, err)
	}
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	return mutate(req, &pod)
}

// Register creates the MutatingWebhookConfiguration, or replaces the one
// of its name.
func Register(ctx context.Context, client kubernetes.Interface, desired *admissionregistrationv1.MutatingWebhookConfiguration) error {
	hooks := client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	existing, err := hooks.Get(ctx, desired.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = hooks.Create(ctx, desired, metav1.CreateOptions{})
	case err == nil:
		desired.ResourceVersion = existing.ResourceVersion
		_, err = hooks.Update(ctx, desired, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("registering the webhook %s: %w", desired.Name, err)
	}
	return nil
}
