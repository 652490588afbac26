package spreadserver

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/util/cert"
)

func TestCertificates(t *testing.T) {
	ctx := context.Background()
	hooks := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: WebhookConfigurationName, UID: "hooks-uid"},
		Webhooks:   []admissionregistrationv1.MutatingWebhook{{Name: "namespace.spread.fargatekit.io"}, {Name: "pod.spread.fargatekit.io"}},
	}
	client := fake.NewClientset(hooks)
	c := &Certificates{Client: client, Namespace: "spread", Secret: "spread-tls", Service: "spread",
		WebhookConfiguration: WebhookConfigurationName}

	first, err := c.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := client.CoreV1().Secrets("spread").Get(ctx, "spread-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Secret was not made: %v", err)
	}
	if len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != "hooks-uid" {
		t.Errorf("the Secret's owners %+v, want the webhook configuration", secret.OwnerReferences)
	}
	verify := func(leaf []byte, bundle []byte) error {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(bundle) {
			t.Fatal("the caBundle holds no certificate")
		}
		l, err := x509.ParseCertificate(leaf)
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.Verify(x509.VerifyOptions{Roots: pool, DNSName: "spread.spread.svc"})
		return err
	}
	caBundle := func() [][]byte {
		got, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, WebhookConfigurationName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out [][]byte
		for _, w := range got.Webhooks {
			out = append(out, w.ClientConfig.CABundle)
		}
		return out
	}
	bundles := caBundle()
	if !bytes.Equal(bundles[0], secret.Data["ca.crt"]) || !bytes.Equal(bundles[1], secret.Data["ca.crt"]) {
		t.Fatal("the webhooks' caBundle is not the Secret's ca.crt")
	}
	if err := verify(first.Certificate[0], bundles[0]); err != nil {
		t.Errorf("the API server would not trust the certificate for the Service's name: %v", err)
	}

	// Another replica reads the same certificate.
	second, err := c.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Certificate[0], second.Certificate[0]) {
		t.Error("a second replica made another certificate")
	}

	// 30 days before expiry it is renewed; the old CA stays trusted.
	oldCA, oldLeaf := nearExpiry(t, client, secret, 10*24*time.Hour)
	renewed, err := c.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(oldLeaf, renewed.Certificate[0]) {
		t.Fatal("a certificate 10 days from expiry was not renewed")
	}
	bundles = caBundle()
	cas, err := cert.ParseCertsPEM(bundles[0])
	if err != nil || len(cas) != 2 || !cas[1].Equal(oldCA) {
		t.Fatalf("after renewal the caBundle holds %d CAs (%v), want the new and the old", len(cas), err)
	}
	if err := verify(renewed.Certificate[0], bundles[0]); err != nil {
		t.Errorf("the renewed certificate is not trusted: %v", err)
	}
	if err := verify(oldLeaf, bundles[0]); err != nil {
		t.Errorf("a replica still serving the old certificate is not trusted: %v", err)
	}

	// A Secret whose certificate is not for this Service is replaced.
	other := *c
	other.Service = "elsewhere"
	moved, err := other.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(moved.Certificate[0])
	if leaf.VerifyHostname("elsewhere.spread.svc") != nil {
		t.Errorf("the certificate is for %v, want the Service elsewhere", leaf.DNSNames)
	}

	// A webhook configuration made again takes the Secret over, certificate kept.
	if err := client.Tracker().Delete(admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"), "", WebhookConfigurationName); err != nil {
		t.Fatal(err)
	}
	again := hooks.DeepCopy()
	again.UID = "hooks-uid-2"
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, again, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kept, err := other.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret, _ = client.CoreV1().Secrets("spread").Get(ctx, "spread-tls", metav1.GetOptions{})
	if !bytes.Equal(kept.Certificate[0], moved.Certificate[0]) || len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != "hooks-uid-2" {
		t.Errorf("after the webhook configuration was made again: owners %+v, certificate kept %v", secret.OwnerReferences, bytes.Equal(kept.Certificate[0], moved.Certificate[0]))
	}
	if len(caBundle()[0]) == 0 {
		t.Error("the new webhook configuration got no caBundle")
	}

	opaque := *c
	opaque.Secret = "opaque"
	if _, err := client.CoreV1().Secrets("spread").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "spread", Name: "opaque"}, Type: corev1.SecretTypeOpaque}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := opaque.Ensure(ctx); err == nil || !strings.Contains(err.Error(), "is of type Opaque") {
		t.Errorf("a Secret of another type: %v", err)
	}

	missing := *c
	missing.WebhookConfiguration = "nope"
	if _, err := missing.Ensure(ctx); err == nil || !strings.Contains(err.Error(), "webhook configuration nope") {
		t.Errorf("without the webhook configuration: %v", err)
	}
}

// nearExpiry replaces the Secret's CA and certificate with ones that expire
// in left, as a year-old Secret would hold; it returns them.
func nearExpiry(t *testing.T, client kubernetes.Interface, s *corev1.Secret, left time.Duration) (*x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	notAfter := time.Now().Add(left)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "old-ca"}, NotBefore: notAfter.AddDate(-1, 0, 0), NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "old"}, DNSNames: []string{"spread.spread.svc"},
		NotBefore: caTmpl.NotBefore, NotAfter: notAfter, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	s = s.DeepCopy()
	s.Data = map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		"ca.crt":  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
	}
	if _, err := client.CoreV1().Secrets(s.Namespace).Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ca, leafDER
}
