package cluster

import (
	"context"
	"fmt"

	rspb "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// HelmSelector selects the Secrets of Helm 3 releases at their deployed revision.
const HelmSelector = "owner=helm,status=deployed"

// oneSecret hands Helm's Secrets driver the one Secret already read, so that
// the release is decoded by Helm's own code.
type oneSecret struct {
	typedcorev1.SecretInterface
	secret *corev1.Secret
}

func (o oneSecret) Get(context.Context, string, metav1.GetOptions) (*corev1.Secret, error) {
	return o.secret, nil
}

// DecodeRelease decodes the Helm 3 release stored in a Secret.
func DecodeRelease(s *corev1.Secret) (*rspb.Release, error) {
	r, err := driver.NewSecrets(oneSecret{secret: s}).Get(s.Name)
	if err != nil {
		return nil, fmt.Errorf("decoding the Helm release in Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	rel, ok := r.(*rspb.Release)
	if !ok || rel == nil {
		return nil, fmt.Errorf("decoding the Helm release in Secret %s/%s: not a Helm 3 release", s.Namespace, s.Name)
	}
	return rel, nil
}
