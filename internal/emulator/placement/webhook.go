// Package placement emulates the two EKS components that put pods on
// Fargate: the admission webhook that sends pods matched by an ACTIVE
// Fargate profile to fargate-scheduler, and fargate-scheduler itself. Both
// decide with the functions `fargatekit check` uses (fargate.Place,
// fargate.Refusals): one engine, which the parity test holds to.
package placement

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// Names EKS uses.
const (
	// WebhookConfigurationName is the MutatingWebhookConfiguration of EKS's
	// Fargate webhook. The API server calls mutating webhooks in order of
	// their configurations' names.
	WebhookConfigurationName = "0500-amazon-eks-fargate-mutation.amazonaws.com"
	// WebhookPath is where the webhook is served.
	WebhookPath = "/mutate-pods"
)

// Webhook mutates pods at creation the way EKS's Fargate webhook does.
type Webhook struct {
	// Profiles returns the ACTIVE profiles at the time of the call.
	Profiles func() []fargate.Profile
}

// Mutate decides what EKS does to a pod being created in namespace ns: nil
// when it leaves the pod alone, else the JSON patch that sends it to
// fargate-scheduler with its profile label and compute-type annotation.
func (w *Webhook) Mutate(ns string, pod *corev1.Pod) ([]PatchOp, string) {
	active := w.Profiles()
	if active == nil {
		active = []fargate.Profile{} // none ACTIVE, which is not Place's "no profiles known"
	}
	p := fargate.Place(active, ns, &corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec})
	if !p.Fargate {
		return nil, ""
	}
	ops := []PatchOp{{Op: "add", Path: "/spec/schedulerName", Value: fargate.SchedulerName}}
	ops = append(ops, mapEntry("/metadata/labels", pod.Labels, fargate.ProfileLabel, p.Profile)...)
	ops = append(ops, mapEntry("/metadata/annotations", pod.Annotations, fargate.ComputeTypeAnnotation, "fargate")...)
	return ops, p.Profile
}

// PatchOp is one JSON patch (RFC 6902) operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// mapEntry sets key in the map at path, creating the map when it is absent.
func mapEntry(path string, m map[string]string, key, value string) []PatchOp {
	if m == nil {
		return []PatchOp{{Op: "add", Path: path, Value: map[string]string{key: value}}}
	}
	return []PatchOp{{Op: "add", Path: path + "/" + escape(key), Value: value}}
}

// escape writes a map key as a JSON pointer token.
func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// ServeHTTP answers AdmissionReview requests (admission.k8s.io/v1) for pods.
// Anything it cannot read is allowed unchanged, as a webhook with
// failurePolicy Ignore would be bypassed.
func (w *Webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		http.Error(rw, "reading the request", http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(rw, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	var pod corev1.Pod
	if review.Request.Operation == admissionv1.Create && review.Request.Kind.Kind == "Pod" {
		if err := json.Unmarshal(review.Request.Object.Raw, &pod); err != nil {
			slog.Warn("webhook cannot read the pod", "err", err)
		} else if ops, profile := w.Mutate(review.Request.Namespace, &pod); ops != nil {
			patch, err := json.Marshal(ops)
			if err == nil {
				pt := admissionv1.PatchTypeJSONPatch
				resp.Patch, resp.PatchType = patch, &pt
				slog.Debug("pod sent to Fargate", "namespace", review.Request.Namespace, "name", cmpName(&pod), "profile", profile)
			}
		}
	}
	review.Response = resp
	review.Request = nil
	rw.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(rw).Encode(&review); err != nil {
		slog.Warn("webhook cannot answer", "err", err)
	}
}

func cmpName(p *corev1.Pod) string {
	if p.Name != "" {
		return p.Name
	}
	return p.GenerateName
}

// Configuration returns the MutatingWebhookConfiguration that registers the
// webhook at url, trusted through caBundle (PEM). failurePolicy is Ignore:
// what EKS uses is unconfirmed, and Ignore keeps the cluster usable while
// the emulator's daemon restarts.
func Configuration(url string, caBundle []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	ignore := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	never := admissionregistrationv1.NeverReinvocationPolicy
	timeout := int32(10)
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: WebhookConfigurationName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "0500-amazon-eks-fargate-mutation.amazonaws.com",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			FailurePolicy:           &ignore,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy:      &never,
			TimeoutSeconds:          &timeout,
		}},
	}
}

// String describes a patch for logs and tests.
func (p PatchOp) String() string { return fmt.Sprintf("%s %s %v", p.Op, p.Path, p.Value) }
