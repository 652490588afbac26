package emulator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
)

// TestFaultsFile: outages are kept sorted in the state directory, an AZ of
// another cluster is refused naming the cluster's, clear ends one or all.
func TestFaultsFile(t *testing.T) {
	o := &Options{StateDir: t.TempDir(), Config: clusterconfig.Default()}
	for _, z := range []string{"us-east-1c", "us-east-1a", "us-east-1c"} {
		if _, err := o.StartAZOutage(z); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := o.StartAZOutage("eu-west-1a"); err == nil || !strings.Contains(err.Error(), `"eu-west-1a" is not an AZ of the cluster fargatekit (its AZs: us-east-1a, us-east-1b, us-east-1c)`) {
		t.Errorf("an AZ of another region: %v", err)
	}
	f, err := ReadFaults(o.StateDir)
	if err != nil || !cmp.Equal(f.AZOutages, []string{"us-east-1a", "us-east-1c"}) {
		t.Errorf("faults %+v, %v; want us-east-1a and us-east-1c down", f, err)
	}
	if cleared, _, err := o.ClearFaults("us-east-1c"); err != nil || !cmp.Equal(cleared, []string{"us-east-1c"}) {
		t.Errorf("clear us-east-1c: %v, %v", cleared, err)
	}
	if cleared, _, err := o.ClearFaults("us-east-1b"); err != nil || len(cleared) != 0 {
		t.Errorf("clear us-east-1b, which is up: %v, %v", cleared, err)
	}
	if started, err := o.StartFargatePatch(time.Minute, time.Second); err != nil || !started {
		t.Fatalf("a patch: %v, %v", started, err)
	}
	if started, err := o.StartFargatePatch(time.Minute, time.Second); err != nil || started {
		t.Errorf("a second patch while one is under way: started %v, %v", started, err)
	}
	if cleared, patch, err := o.ClearFaults(PatchFault); err != nil || len(cleared) != 0 || !patch {
		t.Errorf("clear fargate-patch: %v, %v, %v; want the patch stopped, no AZ up", cleared, patch, err)
	}
	if _, err := o.StartFargatePatch(time.Minute, time.Second); err != nil {
		t.Fatal(err)
	}
	if cleared, patch, err := o.ClearFaults(""); err != nil || !cmp.Equal(cleared, []string{"us-east-1a"}) || !patch {
		t.Errorf("clear all: %v, %v, %v", cleared, patch, err)
	}
	if f, err := ReadFaults(o.StateDir); err != nil || len(f.AZOutages) != 0 || f.FargatePatch != nil {
		t.Errorf("after clearing: %+v, %v", f, err)
	}
	if err := os.WriteFile(filepath.Join(o.StateDir, FaultsFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFaults(o.StateDir); err == nil || !strings.Contains(err.Error(), FaultsFile) {
		t.Errorf("a torn faults file: %v, want an error naming it", err)
	}
}

// TestHoldLeases: the Leases of the nodes of an AZ that is down are held
// in KWOK's place, with their renew time as it was; once the AZ is up they
// expire, so that KWOK takes them, and are left alone after that.
func TestHoldLeases(t *testing.T) {
	ctx := context.Background()
	renewed := metav1.NewMicroTime(time.Now().Add(-3 * time.Second))
	var objects []runtime.Object
	for name, zone := range map[string]string{"fargate-a": "us-east-1a", "fargate-b": "us-east-1b"} {
		objects = append(objects,
			&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}}},
			&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: new("kwok"), LeaseDurationSeconds: new(int32(40)), RenewTime: &renewed}})
	}
	client := fake.NewClientset(objects...)
	dir := t.TempDir()
	o := &Options{StateDir: dir, Config: clusterconfig.Default()}
	if _, err := o.StartAZOutage("us-east-1a"); err != nil {
		t.Fatal(err)
	}
	var up []string
	faults := &outages{stateDir: dir, client: client, up: func(z string) { up = append(up, z) }}
	lease := func(name string) coordinationv1.LeaseSpec {
		l, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l.Spec
	}
	pass := func() {
		t.Helper()
		came, err := faults.read()
		if err == nil {
			err = faults.holdLeases(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		up = append(up, came...)
	}
	pass()
	if a := lease("fargate-a"); *a.HolderIdentity != outageHolder || *a.LeaseDurationSeconds != outageLeaseSeconds || !a.RenewTime.Equal(&renewed) {
		t.Errorf("the Lease of a node of the AZ down: %+v, want held with its renew time", a)
	}
	if b := lease("fargate-b"); *b.HolderIdentity != "kwok" {
		t.Errorf("the Lease of a node of an AZ up: %+v, want KWOK's", b)
	}
	if !faults.Down("us-east-1a") || faults.Down("us-east-1b") {
		t.Error("Down does not say us-east-1a, only it")
	}
	if _, _, err := o.ClearFaults(""); err != nil {
		t.Fatal(err)
	}
	pass()
	if a := lease("fargate-a"); *a.HolderIdentity != outageHolder || *a.LeaseDurationSeconds != 1 || !cmp.Equal(up, []string{"us-east-1a"}) {
		t.Errorf("once up: the Lease %+v (want expired), AZs up %v", a, up)
	}
	// KWOK takes it: the next passes leave it alone, and then stop looking.
	l, _ := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "fargate-a", metav1.GetOptions{})
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = new("kwok"), new(int32(40))
	if _, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pass()
	if a := lease("fargate-a"); *a.HolderIdentity != "kwok" || faults.holding {
		t.Errorf("after KWOK took it back: %+v, still holding %v", a, faults.holding)
	}
}
