package eksapi_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

func twoSeeds(c *clusterconfig.Config) {
	c.FargateProfiles = []clusterconfig.Profile{
		{Name: "s1", Selectors: []fargate.Selector{{Namespace: "kube-system"}}},
		{Name: "s2", Selectors: []fargate.Selector{{Namespace: "apps", Labels: map[string]string{"tier": "web"}}}, Subnets: []string{"subnet-private2"}},
	}
}

// TestFreshState checks the profiles of the configuration on a fresh state
// directory.
func TestFreshState(t *testing.T) {
	e := newEnv(t, twoSeeds)
	role := "arn:aws:iam::111122223333:role/" + eksapi.DefaultPodExecutionRole
	want := []fargate.Profile{
		{Name: "s1", Selectors: []fargate.Selector{{Namespace: "kube-system"}}, Subnets: []string{"subnet-private1", "subnet-private2", "subnet-private3"}, Status: "ACTIVE", PodExecutionRoleARN: role},
		{Name: "s2", Selectors: []fargate.Selector{{Namespace: "apps", Labels: map[string]string{"tier": "web"}}}, Subnets: []string{"subnet-private2"}, Status: "ACTIVE", PodExecutionRoleARN: role},
	}
	if diff := cmp.Diff(want, e.store.Active()); diff != "" {
		t.Errorf("Active() (-want +got):\n%s", diff)
	}
	for _, p := range e.store.Profiles() {
		if !arnRE.MatchString(p.ARN) || !p.CreatedAt.Equal(t0) || p.PodExecutionRoleARN != roleARN {
			t.Errorf("profile %s: ARN %s, createdAt %v, role %s", p.Name, p.ARN, p.CreatedAt, p.PodExecutionRoleARN)
		}
	}
	// The configuration only seeds a fresh directory: a restarted emulator
	// keeps the stored profiles, their ARNs included.
	e.cfg.FargateProfiles = nil
	if diff := cmp.Diff(e.store.Profiles(), e.reopen(t).store.Profiles()); diff != "" {
		t.Errorf("after a restart (-before +after):\n%s", diff)
	}
}

// TestPersistence restarts the store in the middle of a create and of a
// delete: nothing is lost and the operations complete on time.
func TestPersistence(t *testing.T) {
	e := newEnv(t, twoSeeds)
	created := e.create(t, "new")
	e.clock.Step(time.Minute)

	e2 := e.reopen(t)
	if diff := cmp.Diff(e.store.Profiles(), e2.store.Profiles()); diff != "" {
		t.Errorf("after a restart (-before +after):\n%s", diff)
	}
	var (
		mu      sync.Mutex
		changes []string
	)
	e2.store.OnChange(func(name, from, to string) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, name+" "+from+"->"+to)
	})
	steps := []struct {
		step time.Duration
		want string
	}{{0, "CREATING"}, {time.Minute - time.Millisecond, "CREATING"}, {time.Millisecond, "ACTIVE"}}
	for _, s := range steps {
		e2.clock.Step(s.step)
		if err := e2.store.Tick(e2.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if got := e2.status(t, "new"); got != s.want {
			t.Errorf("at %v: %s, want %s", e2.clock.Now().Sub(t0), got, s.want)
		}
	}
	e2.delete(t, "s1")
	e2.clock.Step(2 * time.Minute)

	e3 := e2.reopen(t)
	if got := e3.status(t, "s1"); got != "DELETING" {
		t.Errorf("s1 after a restart: %s, want DELETING", got)
	}
	e3.clock.Step(time.Minute)
	if got := e3.status(t, "s1"); got != "*types.ResourceNotFoundException: No Fargate Profile found with name: s1." {
		t.Errorf("s1 after ProfileDelete: %s", got)
	}
	var names []string
	for _, p := range e3.store.Profiles() {
		names = append(names, p.Name+" "+p.Status)
		if p.Name == "new" && p.ARN != *created.FargateProfileArn {
			t.Errorf("ARN changed: %s, was %s", p.ARN, *created.FargateProfileArn)
		}
	}
	if diff := cmp.Diff([]string{"new ACTIVE", "s2 ACTIVE"}, names); diff != "" {
		t.Errorf("profiles (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"new CREATING->ACTIVE", "s1 ACTIVE->DELETING"}, changes); diff != "" {
		t.Errorf("OnChange (-want +got):\n%s", diff)
	}
	files, err := os.ReadDir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Name() != eksapi.StateFile {
		t.Errorf("state directory holds %v, want only %s", files, eksapi.StateFile)
	}
}

// TestCorruptState checks that a state file that cannot be used is an error
// naming the file.
func TestCorruptState(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"empty", "", "unexpected end of JSON input"},
		{"truncated", `{"version":1,"cluster":"fargatekit","profiles":[`, "unexpected end of JSON input"},
		{"wrong type", `{"version":"1"}`, "cannot unmarshal"},
		{"version", `{"version":2,"cluster":"fargatekit"}`, "format version 2, want 1"},
		{"cluster", `{"version":1,"cluster":"prod"}`, `the profiles are those of cluster "prod", not "fargatekit"`},
		{"duplicate", `{"version":1,"cluster":"fargatekit","profiles":[{"fargateProfileName":"a","status":"ACTIVE"},{"fargateProfileName":"a","status":"ACTIVE"}]}`, `profile "a" appears twice`},
		{"status", `{"version":1,"cluster":"fargatekit","profiles":[{"fargateProfileName":"a","status":"READY"}]}`, `profile "a" has status "READY"`},
		{"control plane version", `{"version":1,"cluster":"fargatekit","controlPlane":{"version":"one","status":"ACTIVE"}}`, `controlPlane.version: invalid Kubernetes version "one"`},
		{"control plane update", `{"version":1,"cluster":"fargatekit","controlPlane":{"version":"1.34","status":"UPDATING"}}`, `controlPlane: status "UPDATING" with update "" to ""`},
		{"node group status", `{"version":1,"cluster":"fargatekit","controlPlane":{"version":"1.34","status":"ACTIVE"},"nodegroups":[{"nodegroupName":"a","status":"READY"}]}`, `node group "a" has status "READY"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, eksapi.StateFile)
			if err := os.WriteFile(path, []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := eksapi.NewStore(clusterconfig.Default(), dir, eksapi.WithClock(testingclock.NewFakeClock(t0)))
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewStore error %v, want one naming %s and saying %q", err, path, tt.want)
			}
		})
	}
}

// TestOldStateFile reads the state file of an emulator made before node
// groups (profiles only): its profiles are kept, the control plane and node
// groups come from the configuration, and the state moves to StateFile.
func TestOldStateFile(t *testing.T) {
	dir := t.TempDir()
	old := `{"version":1,"cluster":"fargatekit","profiles":[{"fargateProfileName":"kept","status":"ACTIVE","selectors":[{"namespace":"a"}]}]}`
	if err := os.WriteFile(filepath.Join(dir, "fargate-profiles.json"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := clusterconfig.Default()
	cfg.KubernetesVersion = "1.33"
	cfg.NodeGroups = []clusterconfig.NodeGroup{{Name: "system", AvailabilityZones: cfg.AvailabilityZones, DesiredCapacity: 1, MaxSize: 1, InstanceType: "m6i.large", KubeletVersion: "1.33", ReleaseVersion: clusterconfig.LatestRelease("1.33")}}
	s, err := eksapi.NewStore(cfg, dir, eksapi.WithClock(testingclock.NewFakeClock(t0)))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Profiles(); len(got) != 1 || got[0].Name != "kept" {
		t.Errorf("profiles %v, want kept", got)
	}
	if got := s.Nodegroups(); len(got) != 1 || got[0].Name != "system" || got[0].Version != "1.33" || got[0].Status != eksapi.NodegroupActive {
		t.Errorf("node groups %+v, want system at 1.33, ACTIVE", got)
	}
	if got := eksapi.SavedVersion(dir); got != "1.33" {
		t.Errorf("SavedVersion = %q, want 1.33", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "fargate-profiles.json")); !os.IsNotExist(err) {
		t.Errorf("the old state file is still there: %v", err)
	}
	if got := eksapi.SavedVersion(t.TempDir()); got != "" {
		t.Errorf("SavedVersion of an empty directory = %q", got)
	}
}
