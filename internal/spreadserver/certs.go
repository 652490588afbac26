package spreadserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/retry"
)

// Renewal is how long before it expires a certificate of the Secret is
// replaced. The certificates are valid one year.
const Renewal = 30 * 24 * time.Hour

// Certificates keeps the webhook's serving certificate in a Secret of the
// cluster, so that every replica serves the same one: the first replica
// to start makes it (a CA and a certificate for the Service's names) and
// the others read it. The CA goes into the caBundle of the webhook
// configuration, which owns the Secret (deleting the configuration, as
// `helm uninstall` does, deletes it).
type Certificates struct {
	Client               kubernetes.Interface
	Namespace, Secret    string
	Service              string // the Service's name, in Namespace
	WebhookConfiguration string
}

// Secret keys: those of a kubernetes.io/tls Secret, and the CAs to trust.
const (
	keyCert = corev1.TLSCertKey
	keyKey  = corev1.TLSPrivateKeyKey
	keyCA   = "ca.crt"
)

// Ensure returns the serving certificate of the Secret, making the Secret
// when it is missing, unreadable or near expiry, and makes the webhook
// configuration its owner and the Secret's CAs its caBundle.
func (c *Certificates) Ensure(ctx context.Context) (*tls.Certificate, error) {
	hooks, err := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, c.WebhookConfiguration, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the webhook configuration %s, which gets the CA: %w", c.WebhookConfiguration, err)
	}
	owner := []metav1.OwnerReference{{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration", Name: hooks.Name, UID: hooks.UID}}
	var secret *corev1.Secret
	var pair tls.Certificate
	for attempt := 0; ; attempt++ {
		if attempt == 4 {
			return nil, fmt.Errorf("the certificate Secret %s/%s keeps changing under this replica", c.Namespace, c.Secret)
		}
		secret, err = c.Client.CoreV1().Secrets(c.Namespace).Get(ctx, c.Secret, metav1.GetOptions{})
		exists := err == nil
		switch {
		case apierrors.IsNotFound(err):
			secret = nil
		case err != nil:
			return nil, fmt.Errorf("reading the certificate Secret %s/%s: %w", c.Namespace, c.Secret, err)
		case secret.Type != corev1.SecretTypeTLS:
			return nil, fmt.Errorf("the Secret %s/%s is of type %s, not %s: delete it, or give --certificate-secret another name", c.Namespace, c.Secret, secret.Type, corev1.SecretTypeTLS)
		}
		var usable bool
		if exists {
			pair, usable = c.usable(secret)
		}
		if usable && ownedBy(secret, hooks.UID) {
			break
		}
		write := secret
		if !usable {
			if write, err = c.make(secret); err != nil {
				return nil, err
			}
		} else {
			// A webhook configuration made again (helm uninstall and install)
			// owns the Secret from now on, or the garbage collector takes it.
			write = secret.DeepCopy()
		}
		write.OwnerReferences = owner
		if exists {
			_, err = c.Client.CoreV1().Secrets(c.Namespace).Update(ctx, write, metav1.UpdateOptions{})
		} else {
			_, err = c.Client.CoreV1().Secrets(c.Namespace).Create(ctx, write, metav1.CreateOptions{})
		}
		switch {
		case err == nil && !usable:
			slog.Info("spread made its serving certificate", "secret", c.Namespace+"/"+c.Secret)
		case err == nil, apierrors.IsAlreadyExists(err), apierrors.IsConflict(err):
			// Read what is there now: ours, or another replica's.
		default:
			return nil, fmt.Errorf("writing the certificate Secret %s/%s: %w", c.Namespace, c.Secret, err)
		}
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		hooks, err := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, c.WebhookConfiguration, metav1.GetOptions{})
		if err != nil {
			return err
		}
		// The Secret as it is now: another replica may have renewed it
		// since, and its caBundle must not be written over with ours.
		if now, err := c.Client.CoreV1().Secrets(c.Namespace).Get(ctx, c.Secret, metav1.GetOptions{}); err == nil {
			secret = now
		}
		changed := false
		for i := range hooks.Webhooks {
			if !bytes.Equal(hooks.Webhooks[i].ClientConfig.CABundle, secret.Data[keyCA]) {
				hooks.Webhooks[i].ClientConfig.CABundle = secret.Data[keyCA]
				changed = true
			}
		}
		if !changed {
			return nil
		}
		_, err = c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, hooks, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("putting the CA into the webhook configuration %s: %w", c.WebhookConfiguration, err)
	}
	return &pair, nil
}

func ownedBy(s *corev1.Secret, uid types.UID) bool {
	return len(s.OwnerReferences) == 1 && s.OwnerReferences[0].UID == uid
}

// usable returns the Secret's pair when it parses, is for the Service and
// is not near expiry.
func (c *Certificates) usable(s *corev1.Secret) (tls.Certificate, bool) {
	pair, err := tls.X509KeyPair(s.Data[keyCert], s.Data[keyKey])
	if err != nil || len(s.Data[keyCA]) == 0 {
		return pair, false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || leaf.VerifyHostname(c.dnsNames()[0]) != nil {
		return pair, false
	}
	return pair, time.Now().Add(Renewal).Before(leaf.NotAfter)
}

// dnsNames are the names the API server may use for the Service; the
// first is the one it uses.
func (c *Certificates) dnsNames() []string {
	base := c.Service + "." + c.Namespace
	return []string{base + ".svc", c.Service, base, base + ".svc.cluster.local"}
}

// make returns a Secret with a new CA and certificate. The old Secret's
// CAs that are still valid stay trusted, so that a replica still serving
// the old certificate keeps working until it reads the new one.
func (c *Certificates) make(old *corev1.Secret) (*corev1.Secret, error) {
	names := c.dnsNames()
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(names[0], nil, names[1:])
	if err != nil {
		return nil, fmt.Errorf("making the webhook's certificate: %w", err)
	}
	certs, err := cert.ParseCertsPEM(certPEM)
	if err != nil || len(certs) != 2 {
		return nil, errors.Join(errors.New("the generated certificate is not a certificate and its CA"), err)
	}
	bundle := pem.EncodeToMemory(&pem.Block{Type: cert.CertificateBlockType, Bytes: certs[1].Raw})
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Secret,
			Labels: map[string]string{"app.kubernetes.io/name": "fargatekit-spread", "app.kubernetes.io/component": "webhook-certificate"}},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{keyCert: certPEM, keyKey: keyPEM},
	}
	if old != nil {
		s.ResourceVersion, s.UID = old.ResourceVersion, old.UID
		if previous, err := cert.ParseCertsPEM(old.Data[keyCA]); err == nil {
			for _, ca := range previous {
				if time.Now().Before(ca.NotAfter) {
					bundle = append(bundle, pem.EncodeToMemory(&pem.Block{Type: cert.CertificateBlockType, Bytes: ca.Raw})...)
				}
			}
		}
	}
	s.Data[keyCA] = bundle
	return s, nil
}
