package eksapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
	fkeks "github.com/fargatekit/fargatekit/pkg/eks"
)

// at134 is a cluster at 1.34 with node group "system" at 1.34 and "old" at
// 1.33, with a control-plane update of a minute.
func at134(c *clusterconfig.Config) {
	c.KubernetesVersion = "1.34"
	c.Timings.ClusterUpdate.Duration = time.Minute
	c.NodeGroups = []clusterconfig.NodeGroup{
		{Name: "system", AvailabilityZones: c.AvailabilityZones, DesiredCapacity: 2, MaxSize: 3, InstanceType: "m6i.large", KubeletVersion: "1.34", ReleaseVersion: clusterconfig.LatestRelease("1.34")},
		{Name: "old", AvailabilityZones: c.AvailabilityZones, DesiredCapacity: 1, MaxSize: 1, InstanceType: "m6i.large", KubeletVersion: "1.33", ReleaseVersion: "1.33.2-20250901"},
	}
}

func (e *env) cluster134() (version, status string) {
	out, err := e.client.DescribeCluster(context.Background(), &eks.DescribeClusterInput{Name: aws.String(cluster)})
	if err != nil {
		return apiError(err), ""
	}
	return aws.ToString(out.Cluster.Version), string(out.Cluster.Status)
}

func (e *env) updateVersion(ng, version, release string) (*types.Update, error) {
	out, err := e.client.UpdateNodegroupVersion(context.Background(), &eks.UpdateNodegroupVersionInput{
		ClusterName: aws.String(cluster), NodegroupName: aws.String(ng), Version: optional(version), ReleaseVersion: optional(release),
	})
	if err != nil {
		return nil, err
	}
	return out.Update, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

// TestUpdateClusterVersion checks EKS's refusals of a control-plane update,
// in their order, then an update through UPDATING to ACTIVE on the fake
// clock, as DescribeCluster, DescribeUpdate and ListUpdates show it.
func TestUpdateClusterVersion(t *testing.T) {
	e := newEnv(t, at134)
	ctx := context.Background()
	update := func(v string) (*types.Update, error) {
		out, err := e.client.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String(cluster), Version: aws.String(v)})
		if err != nil {
			return nil, err
		}
		return out.Update, nil
	}
	for _, tc := range []struct{ version, want string }{
		{"1.34", "*types.InvalidParameterException: Unsupported Kubernetes minor version update from 1.34 to 1.34"},
		{"1.33", "*types.InvalidParameterException: Unsupported Kubernetes minor version update from 1.34 to 1.33"},
		{"1.99", "*types.InvalidParameterException: unsupported Kubernetes version"},
		{"1.35", "*types.InvalidParameterException: Update failed because of Nodegroups old must be updated to match cluster version 1.34 before updating cluster version"},
	} {
		_, err := update(tc.version)
		if got := apiError(err); got != tc.want {
			t.Errorf("update to %s: %s, want %s", tc.version, got, tc.want)
		}
	}
	// The node group brought to 1.34: now Fargate nodes behind refuse it.
	if _, err := e.updateVersion("old", "", ""); err != nil {
		t.Fatalf("UpdateNodegroupVersion old: %v", err)
	}
	ng := e.store.Nodegroups()[0]
	if err := e.store.FinishNodegroupUpdate(ng.Name, ng.Update); err != nil {
		t.Fatal(err)
	}
	e.cluster.fargate = map[string]string{"fargate-ip-10-0-1-5.ec2.internal": "1.33", "fargate-ip-10-0-1-6.ec2.internal": "1.34"}
	_, err := update("1.35")
	if want := "*types.InvalidParameterException: Update failed because of Fargate nodes fargate-ip-10-0-1-5.ec2.internal must be updated to match cluster version 1.34 before updating cluster version: recreate their pods"; apiError(err) != want {
		t.Errorf("update with a Fargate node behind: %s, want %s", apiError(err), want)
	}
	e.cluster.fargate = nil

	u, err := update("1.35")
	if err != nil {
		t.Fatalf("update to 1.35: %v", err)
	}
	if u.Status != types.UpdateStatusInProgress || u.Type != types.UpdateTypeVersionUpdate {
		t.Errorf("update: %s %s", u.Status, u.Type)
	}
	if v, st := e.cluster134(); v != "1.34" || st != "UPDATING" {
		t.Errorf("during the update: %s %s, want 1.34 UPDATING", v, st)
	}
	if _, err := update("1.35"); apiError(err) != "*types.ResourceInUseException: Cannot update cluster fargatekit because an update is in progress" {
		t.Errorf("a second update: %s", apiError(err))
	}
	e.clock.Step(time.Minute)
	if v, st := e.cluster134(); v != "1.35" || st != "ACTIVE" {
		t.Errorf("after the update: %s %s, want 1.35 ACTIVE", v, st)
	}
	if got := e.store.KubernetesVersion(); got != "1.35" {
		t.Errorf("KubernetesVersion = %s", got)
	}
	d, err := e.client.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String(cluster), UpdateId: u.Id})
	if err != nil {
		t.Fatal(err)
	}
	type summary struct {
		Status types.UpdateStatus
		Params map[types.UpdateParamType]string
		Errors int
	}
	got := summary{Status: d.Update.Status, Params: map[types.UpdateParamType]string{}, Errors: len(d.Update.Errors)}
	for _, p := range d.Update.Params {
		got.Params[p.Type] = aws.ToString(p.Value)
	}
	want := summary{Status: types.UpdateStatusSuccessful, Params: map[types.UpdateParamType]string{"Version": "1.35", "PlatformVersion": eksapi.PlatformVersion}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DescribeUpdate (-want +got):\n%s", diff)
	}
	list, err := e.client.ListUpdates(ctx, &eks.ListUpdatesInput{Name: aws.String(cluster)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{aws.ToString(u.Id)}, list.UpdateIds); diff != "" {
		t.Errorf("ListUpdates of the cluster (-want +got):\n%s", diff)
	}
	_, err = e.client.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String(cluster), UpdateId: u.Id, NodegroupName: aws.String("system")})
	if got := apiError(err); got != "*types.ResourceNotFoundException: No update found for ID: "+aws.ToString(u.Id)+"." {
		t.Errorf("the cluster's update asked of a node group: %s", got)
	}
	// 1.35 is the newest version of the calendar.
	if _, err := update("1.36"); apiError(err) != "*types.InvalidParameterException: unsupported Kubernetes version" {
		t.Errorf("update beyond the calendar: %s", apiError(err))
	}
	// The state survives a restart.
	if got := e.reopen(t).store.KubernetesVersion(); got != "1.35" {
		t.Errorf("after a restart: %s", got)
	}
}

// TestUpdateWaitsForServedVersion: with WithServedVersion, the update
// completes once its time has passed and the control plane serves the new
// version, not before either.
func TestUpdateWaitsForServedVersion(t *testing.T) {
	e := newEnv(t, func(c *clusterconfig.Config) { at134(c); c.NodeGroups = nil }, eksapi.WithServedVersion())
	e.store.Serving("1.34")
	if _, err := e.client.UpdateClusterVersion(context.Background(), &eks.UpdateClusterVersionInput{Name: aws.String(cluster), Version: aws.String("1.35")}); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(time.Minute)
	if v, st := e.cluster134(); v != "1.34" || st != "UPDATING" {
		t.Errorf("the time passed, the control plane still serving 1.34: %s %s, want 1.34 UPDATING", v, st)
	}
	e.store.Serving("1.35")
	if v, st := e.cluster134(); v != "1.35" || st != "ACTIVE" {
		t.Errorf("the control plane serving 1.35: %s %s, want 1.35 ACTIVE", v, st)
	}

	// Served before its time has passed: still UPDATING until then.
	e = newEnv(t, func(c *clusterconfig.Config) { at134(c); c.NodeGroups = nil }, eksapi.WithServedVersion())
	if _, err := e.client.UpdateClusterVersion(context.Background(), &eks.UpdateClusterVersionInput{Name: aws.String(cluster), Version: aws.String("1.35")}); err != nil {
		t.Fatal(err)
	}
	e.store.Serving("1.35")
	e.clock.Step(time.Minute - time.Second)
	if _, st := e.cluster134(); st != "UPDATING" {
		t.Errorf("served before the update's time: %s, want UPDATING", st)
	}
	e.clock.Step(time.Second)
	if v, st := e.cluster134(); v != "1.35" || st != "ACTIVE" {
		t.Errorf("served, and the time passed: %s %s, want 1.35 ACTIVE", v, st)
	}
}

// TestUpgradePolicy checks that a Fargate node behind is let through when
// the policy says EKS does not refuse.
func TestUpgradePolicy(t *testing.T) {
	e := newEnv(t, func(c *clusterconfig.Config) { at134(c); c.NodeGroups = nil }, eksapi.WithUpgradePolicy(fkeks.UpgradePolicy{}))
	e.cluster.fargate = map[string]string{"fargate-ip-10-0-1-5.ec2.internal": "1.33"}
	if _, err := e.client.UpdateClusterVersion(context.Background(), &eks.UpdateClusterVersionInput{Name: aws.String(cluster), Version: aws.String("1.35")}); err != nil {
		t.Errorf("update with a Fargate node behind, not refused by the policy: %v", err)
	}
}

// TestNodegroupLifecycle creates, scales, updates and deletes a node group,
// with the SDK's waiters on the real clock.
func TestNodegroupLifecycle(t *testing.T) {
	e := newEnv(t, func(c *clusterconfig.Config) {
		at134(c)
		c.NodeGroups = nil
		c.Timings.NodegroupCreate.Duration = 200 * time.Millisecond
		c.Timings.NodegroupDelete.Duration = 200 * time.Millisecond
	}, eksapi.WithClock(clock.RealClock{}))
	ctx := context.Background()
	created, err := e.client.CreateNodegroup(ctx, &eks.CreateNodegroupInput{
		ClusterName: aws.String(cluster), NodegroupName: aws.String("workers"), NodeRole: aws.String("arn:aws:iam::111122223333:role/node"),
		Subnets: []string{"subnet-private1", "subnet-private2"}, InstanceTypes: []string{"m6i.large"},
		ScalingConfig: &types.NodegroupScalingConfig{MinSize: aws.Int32(1), MaxSize: aws.Int32(4), DesiredSize: aws.Int32(2)},
		Labels:        map[string]string{"role": "worker"},
	})
	if err != nil {
		t.Fatalf("CreateNodegroup: %v", err)
	}
	ng := created.Nodegroup
	if ng.Status != types.NodegroupStatusCreating || aws.ToString(ng.Version) != "1.34" || aws.ToString(ng.ReleaseVersion) != clusterconfig.LatestRelease("1.34") {
		t.Errorf("created: %s %s %s", ng.Status, aws.ToString(ng.Version), aws.ToString(ng.ReleaseVersion))
	}
	fast := func(o *eks.NodegroupActiveWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 100*time.Millisecond
	}
	in := &eks.DescribeNodegroupInput{ClusterName: aws.String(cluster), NodegroupName: aws.String("workers")}
	if _, err := eks.NewNodegroupActiveWaiter(e.client, fast).WaitForOutput(ctx, in, 10*time.Second); err != nil {
		t.Fatalf("NodegroupActiveWaiter: %v", err)
	}
	_, err = e.client.CreateNodegroup(ctx, &eks.CreateNodegroupInput{
		ClusterName: aws.String(cluster), NodegroupName: aws.String("workers"), NodeRole: aws.String("arn:aws:iam::111122223333:role/node"),
		Subnets: []string{"subnet-private1"},
	})
	if got, want := apiError(err), "*types.ResourceInUseException: NodeGroup already exists with name workers and cluster name fargatekit"; got != want {
		t.Errorf("second create: %s, want %s", got, want)
	}
	list, err := e.client.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: aws.String(cluster)})
	if err != nil || !cmp.Equal(list.Nodegroups, []string{"workers"}) {
		t.Errorf("ListNodegroups: %v %v", list, err)
	}

	// Scaling: UPDATING until the node controller finishes it.
	up, err := e.client.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{
		ClusterName: aws.String(cluster), NodegroupName: aws.String("workers"),
		ScalingConfig: &types.NodegroupScalingConfig{DesiredSize: aws.Int32(3)},
	})
	if err != nil {
		t.Fatalf("UpdateNodegroupConfig: %v", err)
	}
	if _, err := e.updateVersion("workers", "", ""); apiError(err) != "*types.ResourceInUseException: Cannot update node group workers because an update is in progress" {
		t.Errorf("a version update during a config update: %s", apiError(err))
	}
	state := e.store.Nodegroups()[0]
	if state.Status != eksapi.NodegroupUpdating || state.Desired().Scaling.DesiredSize != 3 || state.Scaling.DesiredSize != 2 {
		t.Errorf("during the scaling: %+v", state)
	}
	if err := e.store.FinishNodegroupUpdate("workers", aws.ToString(up.Update.Id)); err != nil {
		t.Fatal(err)
	}
	got, err := e.client.DescribeNodegroup(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Nodegroup.Status != types.NodegroupStatusActive || aws.ToInt32(got.Nodegroup.ScalingConfig.DesiredSize) != 3 {
		t.Errorf("after the scaling: %s desired %d", got.Nodegroup.Status, aws.ToInt32(got.Nodegroup.ScalingConfig.DesiredSize))
	}
	_, err = e.client.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{
		ClusterName: aws.String(cluster), NodegroupName: aws.String("workers"),
		ScalingConfig: &types.NodegroupScalingConfig{DesiredSize: aws.Int32(5)},
	})
	if want := "*types.InvalidParameterException: scalingConfig: desiredSize 5 must be between minSize 1 and maxSize 4."; apiError(err) != want {
		t.Errorf("scaling past maxSize: %s, want %s", apiError(err), want)
	}

	if _, err := e.updateVersion("workers", "", ""); apiError(err) != "*types.InvalidParameterException: Nodegroup workers is already at version 1.34, release "+clusterconfig.LatestRelease("1.34")+"." {
		t.Errorf("an update to the current release: %s", apiError(err))
	}

	del, err := e.client.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: aws.String(cluster), NodegroupName: aws.String("workers")})
	if err != nil || del.Nodegroup.Status != types.NodegroupStatusDeleting {
		t.Fatalf("DeleteNodegroup: %v %v", del, err)
	}
	fastDel := func(o *eks.NodegroupDeletedWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 100*time.Millisecond
	}
	if err := eks.NewNodegroupDeletedWaiter(e.client, fastDel).Wait(ctx, in, 10*time.Second); err != nil {
		t.Fatalf("NodegroupDeletedWaiter: %v", err)
	}
	_, err = e.client.ListUpdates(ctx, &eks.ListUpdatesInput{Name: aws.String(cluster), NodegroupName: aws.String("workers")})
	if got := apiError(err); got != "*types.ResourceNotFoundException: No node group found for name: workers." {
		t.Errorf("ListUpdates of a deleted node group: %s", got)
	}
}

// TestUpdateNodegroupVersion checks the version and release rules, and a
// failed update.
func TestUpdateNodegroupVersion(t *testing.T) {
	e := newEnv(t, at134)
	for _, tc := range []struct{ version, release, want string }{
		{"1.35", "", "*types.InvalidParameterException: Nodegroup version 1.35 cannot be newer than the cluster version 1.34."},
		{"1.32", "", "*types.InvalidParameterException: Nodegroup version 1.32 cannot be older than its current version 1.33."},
		{"1.34", "1.34.0-20250101", "*types.InvalidParameterException: Requested Nodegroup release version 1.34.0-20250101 is invalid. Allowed release version is " + clusterconfig.LatestRelease("1.34")},
		{"1.33", "1.33.2-20250901", "*types.InvalidParameterException: Nodegroup old is already at version 1.33, release 1.33.2-20250901."},
		{"", "1.35.0-20261101", "*types.InvalidParameterException: Requested Nodegroup release version 1.35.0-20261101 is invalid. Allowed release version is " + clusterconfig.LatestRelease("1.34")},
	} {
		_, err := e.updateVersion("old", tc.version, tc.release)
		if got := apiError(err); got != tc.want {
			t.Errorf("update old to %q %q: %s, want %s", tc.version, tc.release, got, tc.want)
		}
	}
	if _, err := e.updateVersion("nope", "", ""); apiError(err) != "*types.ResourceNotFoundException: No node group found for name: nope." {
		t.Errorf("unknown node group: %s", apiError(err))
	}
	// The newest release of the node group's own version is accepted.
	u, err := e.updateVersion("old", "1.33", "")
	if err != nil {
		t.Fatalf("update old to the newest 1.33: %v", err)
	}
	failure := eksapi.ErrorDetail{ErrorCode: eksapi.PodEvictionFailure, ErrorMessage: "Reached max retries while trying to evict pods from nodes in node group old", ResourceIDs: []string{"ip-10-0-200-10.ec2.internal"}}
	if err := e.store.FinishNodegroupUpdate("old", aws.ToString(u.Id), failure); err != nil {
		t.Fatal(err)
	}
	d, err := e.client.DescribeUpdate(context.Background(), &eks.DescribeUpdateInput{Name: aws.String(cluster), UpdateId: u.Id, NodegroupName: aws.String("old")})
	if err != nil {
		t.Fatal(err)
	}
	if d.Update.Status != types.UpdateStatusFailed || len(d.Update.Errors) != 1 || d.Update.Errors[0].ErrorCode != types.ErrorCodePodEvictionFailure ||
		aws.ToString(d.Update.Errors[0].ErrorMessage) != failure.ErrorMessage || !cmp.Equal(d.Update.Errors[0].ResourceIds, failure.ResourceIDs) {
		t.Errorf("failed update: %+v", d.Update)
	}
	ng, err := e.client.DescribeNodegroup(context.Background(), &eks.DescribeNodegroupInput{ClusterName: aws.String(cluster), NodegroupName: aws.String("old")})
	if err != nil {
		t.Fatal(err)
	}
	if ng.Nodegroup.Status != types.NodegroupStatusActive || aws.ToString(ng.Nodegroup.ReleaseVersion) != "1.33.2-20250901" {
		t.Errorf("after the failed update: %s %s", ng.Nodegroup.Status, aws.ToString(ng.Nodegroup.ReleaseVersion))
	}
}

// TestInsights checks ListInsights and DescribeInsight: the kubelet skew
// insight is ERROR with a node behind the control plane, the deprecated-API
// insights ERROR for the next version and WARNING for the one after, with
// their details; filters and an unknown ID.
func TestInsights(t *testing.T) {
	e := newEnv(t, func(c *clusterconfig.Config) { at134(c); c.NodeGroups = nil })
	ctx := context.Background()
	list := func(filter *types.InsightsFilter) map[string]string {
		t.Helper()
		out, err := e.client.ListInsights(ctx, &eks.ListInsightsInput{ClusterName: aws.String(cluster), Filter: filter})
		if err != nil {
			t.Fatalf("ListInsights: %v", err)
		}
		got := map[string]string{}
		for _, in := range out.Insights {
			got[aws.ToString(in.Name)+" @"+aws.ToString(in.KubernetesVersion)] = string(in.InsightStatus.Status)
		}
		return got
	}
	// Nothing behind, nothing deprecated requested (a near miss: an API
	// removed in 1.37 is requested).
	e.cluster.insights = eksapi.InsightFacts{
		Kubelets:   map[string]string{"ip-10-0-1-1.ec2.internal": "1.34"},
		Deprecated: []eksapi.DeprecatedRequest{{Group: "coordination.k8s.io", Version: "v1alpha1", Resource: "leasecandidates", RemovedRelease: "1.37"}},
	}
	want := map[string]string{
		"Kubelet version skew @1.35": "PASSING", "Deprecated APIs removed in Kubernetes v1.35 @1.35": "PASSING",
		"Deprecated APIs removed in Kubernetes v1.36 @1.36": "PASSING",
	}
	if diff := cmp.Diff(want, list(nil)); diff != "" {
		t.Errorf("insights of a clean cluster (-want +got):\n%s", diff)
	}
	e.cluster.insights = eksapi.InsightFacts{
		Kubelets: map[string]string{"ip-10-0-1-1.ec2.internal": "1.33", "ip-10-0-1-2.ec2.internal": "1.34"},
		Deprecated: []eksapi.DeprecatedRequest{
			{Group: "storage.k8s.io", Version: "v1alpha1", Resource: "volumeattributesclasses", RemovedRelease: "1.35"},
			{Group: "storagemigration.k8s.io", Version: "v1alpha1", Resource: "storageversionmigrations", RemovedRelease: "1.36"},
		},
	}
	want = map[string]string{
		"Kubelet version skew @1.35": "ERROR", "Deprecated APIs removed in Kubernetes v1.35 @1.35": "ERROR",
		"Deprecated APIs removed in Kubernetes v1.36 @1.36": "WARNING",
	}
	if diff := cmp.Diff(want, list(nil)); diff != "" {
		t.Errorf("insights (-want +got):\n%s", diff)
	}
	got := list(&types.InsightsFilter{Statuses: []types.InsightStatusValue{types.InsightStatusValueWarning}, Categories: []types.Category{types.CategoryUpgradeReadiness}})
	if diff := cmp.Diff(map[string]string{"Deprecated APIs removed in Kubernetes v1.36 @1.36": "WARNING"}, got); diff != "" {
		t.Errorf("insights filtered by status (-want +got):\n%s", diff)
	}
	out, err := e.client.ListInsights(ctx, &eks.ListInsightsInput{ClusterName: aws.String(cluster), Filter: &types.InsightsFilter{KubernetesVersions: []string{"1.35"}}})
	if err != nil || len(out.Insights) != 2 {
		t.Fatalf("insights for 1.35: %v %v", out, err)
	}
	for _, in := range out.Insights {
		d, err := e.client.DescribeInsight(ctx, &eks.DescribeInsightInput{ClusterName: aws.String(cluster), Id: in.Id})
		if err != nil {
			t.Fatalf("DescribeInsight %s: %v", aws.ToString(in.Name), err)
		}
		switch ins := d.Insight; aws.ToString(ins.Name) {
		case "Kubelet version skew":
			if len(ins.Resources) != 1 || aws.ToString(ins.Resources[0].KubernetesResourceUri) != "/api/v1/nodes/ip-10-0-1-1.ec2.internal" {
				t.Errorf("skew resources: %+v", ins.Resources)
			}
		default:
			dd := ins.CategorySpecificSummary.DeprecationDetails
			if len(dd) != 1 || aws.ToString(dd[0].Usage) != "/apis/storage.k8s.io/v1alpha1/volumeattributesclasses" ||
				aws.ToString(dd[0].ReplacedWith) != "storage.k8s.io/v1" || aws.ToString(dd[0].StopServingVersion) != "1.35" {
				t.Errorf("deprecation details: %+v", dd)
			}
		}
	}
	_, err = e.client.DescribeInsight(ctx, &eks.DescribeInsightInput{ClusterName: aws.String(cluster), Id: aws.String("nope")})
	if got := apiError(err); got != "*types.ResourceNotFoundException: No insight found for id: nope." {
		t.Errorf("unknown insight: %s", got)
	}
}

// TestUpdateOverInsights: an ERROR upgrade insight of the new version
// refuses UpdateClusterVersion with InvalidStateException unless forced; a
// WARNING one (of the version after) does not, nor kubelet skew (of a node
// the node group and Fargate checks do not see).
func TestUpdateOverInsights(t *testing.T) {
	const refused = "*types.InvalidStateException: Amazon EKS detected upgrade readiness issues. Call the ListInsights API to view detected upgrade blocking issues. Pass the force flag when updating to override upgrade readiness errors."
	for _, tc := range []struct {
		name    string
		removed string // the release that removes the API requested
		force   bool
		allow   bool // the upgrade policy lets readiness errors through
		want    string
	}{
		{name: "removed by the update", removed: "1.35", want: refused},
		{name: "forced", removed: "1.35", force: true},
		{name: "removed by the next one: a warning", removed: "1.36"},
		{name: "the policy does not refuse", removed: "1.35", allow: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policy := fkeks.DefaultUpgradePolicy
			policy.RefuseReadinessErrors = !tc.allow
			e := newEnv(t, func(c *clusterconfig.Config) { at134(c); c.NodeGroups = nil }, eksapi.WithUpgradePolicy(policy))
			e.cluster.insights = eksapi.InsightFacts{
				Kubelets:   map[string]string{"ip-10-0-1-1.ec2.internal": "1.33"},
				Deprecated: []eksapi.DeprecatedRequest{{Group: "storage.k8s.io", Version: "v1alpha1", Resource: "volumeattributesclasses", RemovedRelease: tc.removed}},
			}
			_, err := e.client.UpdateClusterVersion(context.Background(), &eks.UpdateClusterVersionInput{
				Name: aws.String(cluster), Version: aws.String("1.35"), Force: tc.force})
			if got := apiError(err); got != tc.want {
				t.Errorf("UpdateClusterVersion: %q, want %q", got, tc.want)
			}
			if v, st := e.cluster134(); (tc.want == "") != (st == "UPDATING") {
				t.Errorf("the cluster: %s %s", v, st)
			}
		})
	}
}
