// Package placement emulates the two EKS components that put pods on
// Fargate: the admission webhook that sends pods matched by an ACTIVE
// Fargate profile to fargate-scheduler, and fargate-scheduler itself. Both
// decide with the functions `fargatekit check` uses (fargate.Place,
// fargate.Refusals): one engine, which the parity test holds to.
package placement

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fargatekit/fargatekit/internal/admission"
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
	// Logging returns the logging state of a Fargate pod created now
	// (ReadLogging), which the pod's Logging annotation records; nil, or an
	// error: no annotation.
	Logging func(context.Context) (fargate.Logging, error)
}

// LoggingProblemAnnotation carries to fargate-scheduler the problem of the
// invalid aws-logging ConfigMap a pod was created under, which its
// LoggingDisabled event names: decided when the pod is created.
const LoggingProblemAnnotation = "fargatekit.io/logging-problem"

// loggingTimeout bounds the webhook's reading of the logging ConfigMap,
// well within the API server's 10 s for the whole call.
const loggingTimeout = 2 * time.Second

// Mutate decides what EKS does to a pod being created in namespace ns: nil
// when it leaves the pod alone, else the JSON patch that sends it to
// fargate-scheduler with its profile label, compute-type annotation and
// logging state.
func (w *Webhook) Mutate(ctx context.Context, ns string, pod *corev1.Pod) ([]admission.PatchOp, string) {
	active := w.Profiles()
	if active == nil {
		active = []fargate.Profile{} // none ACTIVE, which is not Place's "no profiles known"
	}
	p := fargate.Place(active, ns, &corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec})
	if !p.Fargate {
		return nil, ""
	}
	ops := []admission.PatchOp{{Op: "add", Path: "/spec/schedulerName", Value: fargate.SchedulerName}}
	ops = append(ops, admission.MapEntry("/metadata/labels", pod.Labels, fargate.ProfileLabel, p.Profile)...)
	annotations := []string{fargate.ComputeTypeAnnotation, "fargate"}
	if w.Logging != nil {
		ctx, cancel := context.WithTimeout(ctx, loggingTimeout)
		defer cancel()
		switch l, err := w.Logging(ctx); {
		case err != nil:
			slog.Warn("deciding a Fargate pod's logging: no Logging annotation", "namespace", ns, "err", err)
		case l.Problem != "":
			annotations = append(annotations, fargate.LoggingAnnotation, l.Annotation, LoggingProblemAnnotation, l.Problem)
		default:
			annotations = append(annotations, fargate.LoggingAnnotation, l.Annotation)
		}
	}
	ops = append(ops, admission.MapEntries("/metadata/annotations", pod.Annotations, annotations...)...)
	return ops, p.Profile
}

// ReadLogging decides, from the aws-logging ConfigMap as it is now, the
// logging of a Fargate pod created now (fargate.LoggingOf).
func ReadLogging(ctx context.Context, client kubernetes.Interface, s fargate.Settings) (fargate.Logging, error) {
	src := fargate.LoggingSource{}
	ns, err := client.CoreV1().Namespaces().Get(ctx, fargate.LoggingNamespace, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fargate.Logging{}, fmt.Errorf("reading namespace %s: %w", fargate.LoggingNamespace, err)
	}
	if err == nil && fargate.LoggingNamespaceEnabled(ns.Labels) {
		cm, err := client.CoreV1().ConfigMaps(fargate.LoggingNamespace).Get(ctx, fargate.LoggingConfigMap, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fargate.Logging{}, fmt.Errorf("reading ConfigMap %s/%s: %w", fargate.LoggingNamespace, fargate.LoggingConfigMap, err)
		}
		if err == nil {
			src = fargate.LoggingSource{Found: true, Data: cm.Data}
		}
	}
	return fargate.LoggingOf(src, s), nil
}

// ServeHTTP answers AdmissionReview requests (admission.k8s.io/v1) for pods.
// Anything it cannot read is allowed unchanged, as a webhook with
// failurePolicy Ignore would be bypassed.
func (w *Webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	admission.Handler(func(req *admissionv1.AdmissionRequest, pod *corev1.Pod) ([]admission.PatchOp, error) {
		ops, profile := w.Mutate(r.Context(), req.Namespace, pod)
		if ops != nil {
			slog.Debug("pod sent to Fargate", "namespace", req.Namespace, "name", cmp.Or(pod.Name, pod.GenerateName), "profile", profile)
		}
		return ops, nil
	}, func(err error) { slog.Warn("Fargate webhook", "err", err) }).ServeHTTP(rw, r)
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
