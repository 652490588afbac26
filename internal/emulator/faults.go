package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/renameio/v2/maybe"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// FaultsFile is the file of a state directory that keeps the faults in
// force, so that they survive down and up.
const FaultsFile = "faults.json"

// Faults are the faults in force in an emulator (`fargatekit emulator
// fault`).
type Faults struct {
	// AZOutages are the AZs that are down, sorted.
	AZOutages []string `json:"azOutages,omitempty"`
	// FargatePatch is the Fargate OS patch under way or last done.
	FargatePatch *FargatePatch `json:"fargatePatch,omitempty"`
}

// ReadFaults reads the faults in force in the state directory dir; none
// when it keeps no file of them.
func ReadFaults(dir string) (Faults, error) {
	var f Faults
	path := filepath.Join(dir, FaultsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("reading the faults in force: %w", err)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// updateFaults reads the faults in force, lets change change them, and
// writes them whole if it says it did. The commands and the daemon both
// change them: a lock on the state directory's faults.lock keeps one from
// writing over what the other just wrote.
func updateFaults(dir string, change func(*Faults) (bool, error)) error {
	l, err := os.OpenFile(filepath.Join(dir, "faults.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("locking the faults in force: %w", err)
	}
	defer func() { _ = l.Close() }() // and the lock with it
	if err := lock(l); err != nil {
		return fmt.Errorf("locking the faults in force: %w", err)
	}
	f, err := ReadFaults(dir)
	if err != nil {
		return err
	}
	changed, err := change(&f)
	if err != nil || !changed {
		return err
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := maybe.WriteFile(filepath.Join(dir, FaultsFile), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing the faults in force: %w", err)
	}
	return nil
}

// StartAZOutage puts zone, an AZ of the cluster, down; it returns false
// when it already was. The daemon, once it reads it (within a second, or
// when it starts), stops the heartbeats of the zone's nodes and starts no
// pod or node there.
func (o *Options) StartAZOutage(zone string) (bool, error) {
	if !slices.Contains(o.Config.AvailabilityZones, zone) {
		return false, fmt.Errorf("%q is not an AZ of the cluster %s (its AZs: %s)", zone, o.Config.Metadata.Name, strings.Join(o.Config.AvailabilityZones, ", "))
	}
	var started bool
	err := updateFaults(o.StateDir, func(f *Faults) (bool, error) {
		if slices.Contains(f.AZOutages, zone) {
			return false, nil
		}
		f.AZOutages = append(f.AZOutages, zone)
		slices.Sort(f.AZOutages)
		started = true
		return true, nil
	})
	return started, err
}

// PatchFault is the name `fault clear` takes for a Fargate OS patch.
const PatchFault = "fargate-patch"

// ClearFaults ends the outage of zone, or the Fargate OS patch when zone is
// PatchFault, or every fault when zone is "". It returns the AZs it brought
// up again and whether it stopped a patch under way.
func (o *Options) ClearFaults(zone string) (up []string, patch bool, err error) {
	err = updateFaults(o.StateDir, func(f *Faults) (bool, error) {
		f.AZOutages = slices.DeleteFunc(f.AZOutages, func(z string) bool {
			if zone == "" || z == zone {
				up = append(up, z)
				return true
			}
			return false
		})
		if (zone == "" || zone == PatchFault) && f.FargatePatch != nil {
			patch = f.FargatePatch.Done == nil
			f.FargatePatch = nil
		}
		return len(up) > 0 || patch, nil
	})
	return up, patch, err
}

// outageHolder holds, in KWOK's place, the Leases of the nodes of an AZ
// that is down. KWOK takes a Lease another holds only once it expires, so
// it neither renews them nor runs the nodes' pods: the nodes stop
// heartbeating, and the controller-manager's node lifecycle marks them
// NotReady, taints them and evicts their pods as it would in a cluster.
const outageHolder = "fargatekit-emulator-az-outage"

// outageLeaseSeconds is the duration of a held Lease: long enough that KWOK
// does not take it back during an outage. The controller-manager reads
// only its renew time, which stays as KWOK last set it.
const outageLeaseSeconds = 365 * 24 * 3600

// faultInterval is how often the daemon reads the faults in force and
// holds the Leases of the nodes of the AZs that are down.
const faultInterval = time.Second

// outages applies the AZ outages in force.
type outages struct {
	stateDir string
	client   kubernetes.Interface
	// up is called with each AZ that is up again.
	up func(zone string)

	mu   sync.Mutex
	down map[string]bool
	// holding says Leases may still be held: checked until none is.
	holding bool
}

// Down says whether zone is down.
func (o *outages) Down(zone string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.down[zone]
}

// read reads the faults in force, and returns the AZs up again since the
// last read.
func (o *outages) read() ([]string, error) {
	f, err := ReadFaults(o.stateDir)
	if err != nil {
		return nil, err
	}
	down := map[string]bool{}
	for _, z := range f.AZOutages {
		down[z] = true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var up []string
	for z := range o.down {
		if !down[z] {
			up = append(up, z)
		}
	}
	for z := range down {
		if !o.down[z] {
			slog.Info("AZ outage: the AZ is down", "zone", z)
		}
	}
	o.down = down
	o.holding = o.holding || len(down) > 0
	return up, nil
}

// Run applies the faults in force until ctx ends; errors are logged and
// retried.
func (o *outages) Run(ctx context.Context) error {
	t := time.NewTicker(faultInterval)
	defer t.Stop()
	for {
		up, err := o.read()
		if err == nil {
			err = o.holdLeases(ctx)
		}
		if err != nil && ctx.Err() == nil {
			slog.Warn("applying the faults in force", "err", err)
		}
		for _, z := range up {
			slog.Info("AZ outage: the AZ is up again", "zone", z)
			o.up(z)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// holdLeases holds the Leases of the nodes of the AZs that are down, and
// lets those of the others expire, so that KWOK takes them back; it looks
// again on the next call until KWOK has.
func (o *outages) holdLeases(ctx context.Context) error {
	o.mu.Lock()
	holding, down := o.holding, o.down
	o.mu.Unlock()
	if !holding {
		return nil
	}
	nodes, err := o.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the nodes: %w", err)
	}
	zones := map[string]string{}
	for _, n := range nodes.Items {
		zones[n.Name] = n.Labels[corev1.LabelTopologyZone]
	}
	leases := o.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	list, err := leases.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the nodes' Leases: %w", err)
	}
	still := len(down) > 0
	var errs []error
	for i := range list.Items {
		l := &list.Items[i]
		held := outageHeld(l)
		_, exists := zones[l.Name]
		still = still || held && exists // until KWOK takes it back
		switch {
		case down[zones[l.Name]] && !held:
			l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds = new(outageHolder), new(int32(outageLeaseSeconds))
		case !down[zones[l.Name]] && held && (l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != 1):
			// Expired at once: KWOK takes it at its next try and renews it.
			l.Spec.LeaseDurationSeconds = new(int32(1))
		default:
			continue
		}
		// A conflict (KWOK renewed it meanwhile) is tried again next time.
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("the Lease of node %s: %w", l.Name, err))
		}
	}
	o.mu.Lock()
	o.holding = still || len(o.down) > 0
	o.mu.Unlock()
	return errors.Join(errs...)
}

// outageHeld reports whether a node's Lease is held for an AZ outage.
func outageHeld(l *coordinationv1.Lease) bool {
	return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == outageHolder
}
