package fargate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestIsRefusalEvent: the messages Event composes for a refused pod are
// refusals; fargate-scheduler's messages for a pod that waits are not.
func TestIsRefusalEvent(t *testing.T) {
	s := DefaultSettings()
	refused := func(spec corev1.PodSpec) string {
		t.Helper()
		msg := Event("apps", Refusals(&spec, SizePod(&spec), false, s))
		if msg == "" {
			t.Fatalf("%+v: no refusal", spec)
		}
		return msg
	}
	for _, tc := range []struct {
		message string
		want    bool
	}{
		{refused(corev1.PodSpec{HostNetwork: true, Containers: []corev1.Container{{Name: "a"}}}), true},
		{refused(corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/arch": "arm64"}, Containers: []corev1.Container{{Name: "a"}}}), true},
		{"Fargate could not start the pod: availability zone us-east-1a is unavailable", false},
		{"InsufficientFreeAddressesInSubnet: subnet-0a has no free address", false},
		{"", false},
	} {
		if got := IsRefusalEvent(tc.message); got != tc.want {
			t.Errorf("IsRefusalEvent(%q) = %v, want %v", tc.message, got, tc.want)
		}
	}
}
