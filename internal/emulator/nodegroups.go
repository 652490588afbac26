package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
	"github.com/fargatekit/fargatekit/internal/emulator/placement"
	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// ReleaseAnnotation is the annotation of a node group's node that names the
// AMI release it runs (the emulator's; EKS records the AMI in the label
// eks.amazonaws.com/nodegroup-image).
const ReleaseAnnotation = "emulator.fargatekit.io/release-version"

// nodeLabelsAnnotation lists the node group labels (UpdateNodegroupConfig)
// set on a node, so that removed ones are removed.
const nodeLabelsAnnotation = "emulator.fargatekit.io/nodegroup-labels"

// byNodeIndex indexes pods by the node they are bound to.
const byNodeIndex = "spec.nodeName"

// nodegroupInterval is how often the controller compares the nodes with the
// node groups.
const nodegroupInterval = 250 * time.Millisecond

// nodegroupController makes the cluster's EC2 nodes what the EKS API's
// managed node groups say, as EKS's managed node group updates do: nodes
// are added at the target version and release, then the nodes to go are
// cordoned and drained one at a time through the Eviction API (so that
// PodDisruptionBudgets hold) and deleted once no pod is left on them. A node
// whose pods do not all leave within Timings.NodegroupDrain fails the
// update with PodEvictionFailure, unless the update was forced: the node is
// then deleted with its pods.
type nodegroupController struct {
	client kubernetes.Interface
	store  *eksapi.Store
	cfg    *clusterconfig.Config
	clock  clock.Clock
	nodes  corelisters.NodeLister
	pods   cache.Indexer
	// draining is when the drain of each node began.
	draining map[string]time.Time
	// created and deleted are the nodes the controller made or deleted that
	// its informer does not show yet, so that the next pass does not make
	// or drain them again.
	created map[string]*corev1.Node
	deleted map[string]bool
	// down says whether an AZ is down: no node is created there.
	down func(az string) bool
}

// newNodegroupController starts the informers the controller reads and
// waits for them.
func newNodegroupController(ctx context.Context, client kubernetes.Interface, store *eksapi.Store, cfg *clusterconfig.Config, down func(az string) bool) (*nodegroupController, error) {
	factory := informers.NewSharedInformerFactory(client, 0)
	nodes := factory.Core().V1().Nodes()
	pods := factory.Core().V1().Pods().Informer()
	if err := pods.AddIndexers(cache.Indexers{byNodeIndex: func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, fmt.Errorf("indexing pods by node: %w", err)
	}
	lister := nodes.Lister()
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("the node group controller could not list %v", typ)
		}
	}
	return &nodegroupController{client: client, store: store, cfg: cfg, clock: clock.RealClock{}, nodes: lister, pods: pods.GetIndexer(),
		draining: map[string]time.Time{}, created: map[string]*corev1.Node{}, deleted: map[string]bool{}, down: down}, nil
}

// Run reconciles until ctx is done; errors are logged and retried.
func (c *nodegroupController) Run(ctx context.Context) error {
	t := time.NewTicker(nodegroupInterval)
	defer t.Stop()
	for {
		if err := c.reconcileAll(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("reconciling the managed node groups", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// reconcileAll reconciles every node group, and deletes the nodes of node
// groups that are gone.
func (c *nodegroupController) reconcileAll(ctx context.Context) error {
	all, err := c.nodes.List(labels.Everything())
	if err != nil {
		return err
	}
	byGroup := map[string][]*corev1.Node{}
	used := map[string]bool{}
	gone := maps.Clone(c.deleted)
	for _, n := range all {
		used[n.Name] = true
		delete(c.created, n.Name)
		delete(gone, n.Name)
		if g, ok := n.Labels[eks.NodegroupLabel]; ok && !c.deleted[n.Name] {
			byGroup[g] = append(byGroup[g], n)
		}
	}
	for name := range gone {
		delete(c.deleted, name)
	}
	for name, n := range c.created {
		used[name] = true
		byGroup[n.Labels[eks.NodegroupLabel]] = append(byGroup[n.Labels[eks.NodegroupLabel]], n)
	}
	for _, ng := range c.store.Nodegroups() {
		nodes := byGroup[ng.Name]
		delete(byGroup, ng.Name)
		if err := c.reconcile(ctx, ng, nodes, used); err != nil {
			return fmt.Errorf("node group %s: %w", ng.Name, err)
		}
	}
	for _, nodes := range byGroup {
		for _, n := range nodes {
			if err := c.deleteNode(ctx, n.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// reconcile makes one node group's nodes match it.
func (c *nodegroupController) reconcile(ctx context.Context, ng eksapi.NodegroupState, nodes []*corev1.Node, used map[string]bool) error {
	if ng.Status == eksapi.NodegroupDeleting {
		for _, n := range nodes {
			if err := c.deleteNode(ctx, n.Name); err != nil {
				return err
			}
		}
		return nil
	}
	want := ng.Desired()
	if ng.Update == "" {
		return c.keepCount(ctx, ng, want, nodes, used)
	}
	var current, leaving []*corev1.Node
	for _, n := range nodes {
		if release(n) == want.ReleaseVersion && !n.Spec.Unschedulable {
			current = append(current, n)
		} else {
			leaving = append(leaving, n)
		}
	}
	// Scale up (and surge, for a version update) first.
	for len(current) < want.Scaling.DesiredSize {
		n, err := c.createNode(ctx, ng, want, current, used)
		if err != nil {
			return err
		}
		current = append(current, n)
	}
	// Scale down: the newest nodes go.
	slices.SortFunc(current, func(a, b *corev1.Node) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	for len(current) > want.Scaling.DesiredSize {
		leaving = append(leaving, current[len(current)-1])
		current = current[:len(current)-1]
	}
	for _, n := range current {
		if err := c.ensureLabels(ctx, n, want.Labels); err != nil {
			return err
		}
	}
	// Drain one node at a time (maxUnavailable 1): the one already draining
	// first.
	slices.SortFunc(leaving, func(a, b *corev1.Node) int {
		return boolRank(!a.Spec.Unschedulable) - boolRank(!b.Spec.Unschedulable)
	})
	if len(leaving) > 0 {
		return c.drain(ctx, ng, want, leaving[0])
	}
	return c.store.FinishNodegroupUpdate(ng.Name, ng.Update)
}

// keepCount is what the Auto Scaling group of a node group without an
// update does: it replaces missing nodes (at the node group's release) and
// changes nothing else. After a failed update the nodes stay as the update
// left them (cordoned, or surged), which is assumed of EKS; an update to
// the same target takes them up again.
func (c *nodegroupController) keepCount(ctx context.Context, ng eksapi.NodegroupState, want eksapi.NodegroupTarget, nodes []*corev1.Node, used map[string]bool) error {
	var ready []*corev1.Node
	for _, n := range nodes {
		if !n.Spec.Unschedulable {
			ready = append(ready, n)
		}
	}
	for len(ready) < want.Scaling.DesiredSize {
		n, err := c.createNode(ctx, ng, want, ready, used)
		if err != nil {
			return err
		}
		ready = append(ready, n)
	}
	return nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// release is the AMI release of a node group's node: its annotation, or the
// newest release of its kubelet's version for nodes made before it.
func release(n *corev1.Node) string {
	if r, ok := n.Annotations[ReleaseAnnotation]; ok {
		return r
	}
	minor, err := eks.ParseMinor(n.Status.NodeInfo.KubeletVersion)
	if err != nil {
		return ""
	}
	return clusterconfig.LatestRelease(minor)
}

// drain cordons a node, evicts its pods and deletes it once none is left
// but DaemonSet pods. It fails the update when the node has not drained
// within Timings.NodegroupDrain, or deletes it anyway when the update is
// forced.
func (c *nodegroupController) drain(ctx context.Context, ng eksapi.NodegroupState, want eksapi.NodegroupTarget, n *corev1.Node) error {
	if !n.Spec.Unschedulable {
		patch := []byte(`{"spec":{"unschedulable":true}}`)
		if _, err := c.client.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("cordoning node %s: %w", n.Name, err)
		}
	}
	started, ok := c.draining[n.Name]
	if !ok {
		started = c.clock.Now()
		c.draining[n.Name] = started
	}
	objs, err := c.pods.ByIndex(byNodeIndex, n.Name)
	if err != nil {
		return err
	}
	var stuck []string
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if isDaemonSetPod(p) || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		stuck = append(stuck, p.Namespace+"/"+p.Name)
		if p.DeletionTimestamp != nil {
			continue // evicted, or deleted: waiting for it to go
		}
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
		err := c.client.PolicyV1().Evictions(p.Namespace).Evict(ctx, ev)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsTooManyRequests(err) {
			return fmt.Errorf("evicting pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	if len(stuck) == 0 {
		return c.deleteNode(ctx, n.Name)
	}
	if c.clock.Since(started) < c.cfg.Timings.NodegroupDrain.Duration {
		return nil
	}
	if want.Force {
		slog.Info("forced node group update: terminating a node whose pods did not leave", "nodegroup", ng.Name, "node", n.Name, "pods", stuck)
		return c.deleteNode(ctx, n.Name)
	}
	slog.Info("node group update failed: pods did not leave a node", "nodegroup", ng.Name, "node", n.Name, "pods", stuck)
	delete(c.draining, n.Name)
	return c.store.FinishNodegroupUpdate(ng.Name, ng.Update, eksapi.ErrorDetail{
		ErrorCode:    eksapi.PodEvictionFailure,
		ErrorMessage: "Reached max retries while trying to evict pods from nodes in node group " + ng.Name,
		ResourceIDs:  []string{n.Name},
	})
}

func isDaemonSetPod(p *corev1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet"
}

// deleteNode deletes a node; the pod garbage collector deletes the pods
// still bound to it.
func (c *nodegroupController) deleteNode(ctx context.Context, name string) error {
	delete(c.draining, name)
	delete(c.created, name)
	if err := c.client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting node %s: %w", name, err)
	}
	c.deleted[name] = true
	return nil
}

// ensureLabels sets the node group's labels on a node, and removes those
// it set before that the node group no longer has.
func (c *nodegroupController) ensureLabels(ctx context.Context, n *corev1.Node, want map[string]string) error {
	had := splitKeys(n.Annotations[nodeLabelsAnnotation])
	patch := map[string]any{}
	for _, k := range had {
		if _, ok := want[k]; !ok {
			patch[k] = nil
		}
	}
	for k, v := range want {
		if n.Labels[k] != v {
			patch[k] = v
		}
	}
	keys := joinKeys(want)
	if len(patch) == 0 && n.Annotations[nodeLabelsAnnotation] == keys {
		return nil
	}
	body := map[string]any{"metadata": map[string]any{"labels": patch, "annotations": map[string]string{nodeLabelsAnnotation: keys}}}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	if _, err := c.client.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("labelling node %s: %w", n.Name, err)
	}
	return nil
}

// createNode adds a node to a node group, in the AZ of its subnets that has
// the fewest of its current nodes.
func (c *nodegroupController) createNode(ctx context.Context, ng eksapi.NodegroupState, want eksapi.NodegroupTarget, current []*corev1.Node, used map[string]bool) (*corev1.Node, error) {
	az := c.leastUsedAZ(ng, current)
	if az == "" {
		return nil, fmt.Errorf("node group %s: every AZ of its subnets is down", ng.Name)
	}
	it := clusterconfig.InstanceTypes[ng.InstanceTypes[0]]
	name, id := c.freeName(ng.Name, used)
	used[name] = true
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(it.CPU), corev1.ResourceMemory: resource.MustParse(it.Memory),
		corev1.ResourcePods: *resource.NewQuantity(int64(it.Pods), resource.DecimalSI),
	}
	nodeLabels := map[string]string{
		eks.NodegroupLabel: ng.Name, "eks.amazonaws.com/capacityType": ng.CapacityType,
		"eks.amazonaws.com/nodegroup-image": fmt.Sprintf("ami-%017x", hash(want.ReleaseVersion)),
		"node.kubernetes.io/instance-type":  ng.InstanceTypes[0], corev1.LabelTopologyZone: az,
		corev1.LabelTopologyRegion: c.cfg.Metadata.Region, corev1.LabelArchStable: it.Arch,
		corev1.LabelOSStable: "linux", corev1.LabelHostname: name, "type": "kwok",
	}
	for k, v := range want.Labels {
		nodeLabels[k] = v
	}
	kubelet, _, _ := strings.Cut(want.ReleaseVersion, "-") // 1.35.0-20261101
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: nodeLabels,
			Annotations: map[string]string{
				placement.KwokNodeAnnotation: "fake", ReleaseAnnotation: want.ReleaseVersion,
				nodeLabelsAnnotation: joinKeys(want.Labels),
			},
		},
		Spec: corev1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/%s", az, id)},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v" + kubelet + "-eks", OperatingSystem: "linux", Architecture: it.Arch},
		},
	}
	created, err := c.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating a node: %w", err)
	}
	c.created[created.Name] = created
	return created, nil
}

// leastUsedAZ is the AZ, of those of the node group's subnets (the
// cluster's first without), that is up and holds the fewest of its current
// nodes; "" when every one is down.
func (c *nodegroupController) leastUsedAZ(ng eksapi.NodegroupState, current []*corev1.Node) string {
	count := map[string]int{}
	for _, n := range current {
		count[n.Labels[corev1.LabelTopologyZone]]++
	}
	var azs []string
	for _, sn := range ng.Subnets {
		if az, ok := c.store.SubnetAZ(sn); ok {
			azs = append(azs, az)
		}
	}
	if len(azs) == 0 {
		azs = c.cfg.AvailabilityZones[:1]
	}
	best := ""
	for _, az := range azs {
		if (c.down == nil || !c.down(az)) && (best == "" || count[az] < count[best]) {
			best = az
		}
	}
	return best
}

// freeName picks an unused node name and instance ID for a node of a node
// group: addresses in 10.0.192.0/18, outside the subnets Fargate uses, from
// a hash of the group's name and a counter.
func (c *nodegroupController) freeName(group string, used map[string]bool) (name, id string) {
	for i := uint64(0); ; i++ {
		h := hash(fmt.Sprintf("%s/%d", group, i))
		addr := netip.AddrFrom4([4]byte{10, 0, byte(192 + h%64), byte(2 + (h>>8)%250)})
		name = fargate.PrivateDNSName(c.cfg.Metadata.Region, addr)
		if !used[name] {
			return name, fmt.Sprintf("i-%017x", h)
		}
	}
}

// joinKeys is the sorted keys of m, joined by commas.
func joinKeys(m map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}

// splitKeys undoes joinKeys.
func splitKeys(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func hash(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}
