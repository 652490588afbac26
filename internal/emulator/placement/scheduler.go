package placement

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/ipam"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
)

// KwokNodeAnnotation hands a node to KWOK, which keeps it Ready and runs
// (fakes) the pods bound to it.
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// Scheduler is fargate-scheduler: it places the pods the webhook sent to it,
// each on a node of its own in a subnet of its profile, chosen as the
// settings' AZ choice model says. Affinity, anti-affinity and topology
// spread are ignored, as on EKS.
type Scheduler struct {
	Client kubernetes.Interface
	Config *clusterconfig.Config
	// Settings are those of .fargatekit.yaml, as check applies them.
	Settings fargate.Settings
	// Profiles returns the ACTIVE profiles.
	Profiles func() []fargate.Profile
	// Version returns the control plane's Kubernetes minor version, which
	// new Fargate nodes' kubelets run; nil: Config's.
	Version func() string
	// DNSHostnames returns whether the VPC gives DNS hostnames (without,
	// every new Fargate node is fargate-null); nil: Config's.
	DNSHostnames func() bool
	// Foundation is what surrounds the cluster: a pod whose image does not
	// pull from its subnet, or with its profile's pod execution role, does
	// not start (foundation.Foundation.Pull). nil: every image pulls.
	Foundation *foundation.Foundation
	// Rand picks subnets and addresses; seed it for repeatable runs.
	Rand *rand.Rand
	// Addresses are the subnets' addresses, shared with EC2's
	// DescribeSubnets; nil: Config's subnets, none taken.
	Addresses *ipam.Pool
	// Down says whether an AZ is down (`fargatekit emulator fault
	// az-outage`): no pod starts there, and fargate-scheduler draws as
	// Settings.OutageSubnets says. nil: every AZ is up.
	Down func(az string) bool

	mu      sync.Mutex
	started bool
	zones   map[string]string               // node name → AZ, of the Fargate nodes
	nodeIPs map[string]netip.Addr           // node name → address, of the Fargate nodes
	pods    map[types.NamespacedName]string // pod → its Fargate node
	// waiting are the pods that found no free address, first come first.
	waiting []waiter
	queue   workqueue.TypedRateLimitingInterface[types.NamespacedName]
	// nodes are followed while Run runs: a pod is bound once its node is
	// Ready. nil: at once.
	nodes *readyNodes
	// podStore is Run's informer's cache of the pods it schedules.
	podStore cache.Store
}

// cachedPod returns a pod as Run's informer has it; false when it has none.
func (s *Scheduler) cachedPod(key types.NamespacedName) (*corev1.Pod, bool) {
	s.mu.Lock()
	store := s.podStore
	s.mu.Unlock()
	if store == nil {
		return nil, false
	}
	obj, ok, err := store.GetByKey(key.String())
	if err != nil || !ok {
		return nil, false
	}
	pod, ok := obj.(*corev1.Pod)
	return pod, ok
}

// waiter is a pod waiting for a free address in one of its subnets.
type waiter struct {
	key     types.NamespacedName
	subnets []string
}

// Decision is what fargate-scheduler does with a pod the webhook sent it.
type Decision struct {
	// Profile is the ACTIVE profile the pod's label names; nil when none.
	Profile *fargate.Profile
	// Refusals are why Fargate refuses the pod (fargate.Refusals).
	Refusals []fargate.Refusal
	// Size is the pod's Fargate size (fargate.SizePod).
	Size fargate.Sizing
	// StartFailures are the containers that do not start once the pod is
	// placed (fargate.StartFailures); nil when it is refused.
	StartFailures []fargate.StartFailure
	// Event is the FailedScheduling message; "" when the pod is placed.
	Event string
}

// Decide is fargate-scheduler's judgement of a pod, given the ACTIVE
// profiles: refused for what fargate.Refusals finds, as `fargatekit check`
// reports it, or for a profile that is no longer ACTIVE; otherwise placed
// under its profile. It does no I/O.
func Decide(pod *corev1.Pod, active []fargate.Profile, s fargate.Settings) Decision {
	name := pod.Labels[fargate.ProfileLabel]
	d := Decision{Size: fargate.SizePod(&pod.Spec)}
	d.Refusals = fargate.Refusals(&pod.Spec, d.Size, fargate.DaemonSetPod(pod.OwnerReferences), s)
	for i := range active {
		if active[i].Name == name {
			d.Profile = &active[i]
		}
	}
	switch {
	case len(d.Refusals) > 0:
		d.Event = fargate.Event(name, d.Refusals)
	case d.Profile == nil:
		d.Event = "Pod not supported on Fargate: no ACTIVE Fargate profile " + name
	default:
		d.StartFailures = fargate.StartFailures(&pod.Spec, d.Size.Provisioned, s)
	}
	return d
}

// Start takes up the Fargate nodes of an earlier run: those of pods keep
// their addresses, those whose pods went while the emulator was down are
// deleted. Run starts it when it was not.
func (s *Scheduler) Start(ctx context.Context) error {
	if err := s.init(); err != nil {
		return err
	}
	s.mu.Lock()
	started := s.started
	s.started = true
	s.mu.Unlock()
	if started {
		return nil
	}
	nodes, err := s.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fargate.ComputeTypeLabel + "=fargate"})
	if err != nil {
		return fmt.Errorf("listing the Fargate nodes: %w", err)
	}
	pods, err := s.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.schedulerName", fargate.SchedulerName).String()})
	if err != nil {
		return fmt.Errorf("listing the Fargate pods: %w", err)
	}
	inUse := map[string]bool{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			s.bound(types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, p.Spec.NodeName)
			inUse[p.Spec.NodeName] = true
		}
	}
	for _, n := range nodes.Items {
		if ip, ok := nodeAddress(&n); ok {
			s.Addresses.Mark(ip)
			s.setNode(n.Name, n.Labels[corev1.LabelTopologyZone], ip)
		}
		if !inUse[n.Name] {
			s.releaseNode(ctx, n.Name)
		}
	}
	return nil
}

// Run schedules pods until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	// A pod whose scheduling fails (a conflict, the API server restarting) is
	// retried with backoff; refusals are not failures and are not retried,
	// and a pod waiting for an address is retried when one frees.
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
	defer queue.ShutDown()
	nodes := watchNodes(ctx, s.Client)
	s.mu.Lock()
	s.queue, s.nodes = queue, nodes
	s.mu.Unlock()
	lw := cache.NewListWatchFromClient(s.Client.CoreV1().RESTClient(), "pods", metav1.NamespaceAll,
		fields.OneTermEqualSelector("spec.schedulerName", fargate.SchedulerName))
	store, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
					queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
				}
			},
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				p, ok := obj.(*corev1.Pod)
				if !ok {
					return
				}
				// The node it was bound to, as the scheduler bound it: the
				// last state of a pod deleted unseen may predate the binding.
				if node := s.gone(types.NamespacedName{Namespace: p.Namespace, Name: p.Name}); node != "" {
					s.releaseNode(context.WithoutCancel(ctx), node)
				}
			},
		},
	})
	s.mu.Lock()
	s.podStore = store
	s.mu.Unlock()
	go informer.Run(ctx.Done())
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	for {
		key, quit := queue.Get()
		if quit {
			return nil
		}
		if err := s.schedule(ctx, key); err != nil {
			slog.Warn("fargate-scheduler will retry", "pod", key.String(), "err", err)
			queue.AddRateLimited(key)
		} else {
			queue.Forget(key)
		}
		queue.Done(key)
	}
}

// schedule places one pod: rejects what Fargate refuses, else creates its
// node and binds it there.
func (s *Scheduler) schedule(ctx context.Context, key types.NamespacedName) error {
	if err := s.init(); err != nil {
		return err
	}
	pod, err := s.Client.CoreV1().Pods(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting the pod: %w", err)
	}
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil { // bound, or going: as kube-scheduler, no node for it
		return nil
	}
	d := Decide(pod, s.Profiles(), s.Settings)
	if d.Event != "" {
		return s.event(ctx, pod, d.Event)
	}
	subnets := s.Settings.ZoneSubnets(&pod.Spec, d.Profile.Subnets, s.Config.SubnetAZ)
	if len(subnets) == 0 && len(d.Profile.Subnets) > 0 {
		return s.event(ctx, pod, "Fargate is not supported in the requested availability zone: "+cmp.Or(pod.Spec.NodeSelector[corev1.LabelTopologyZone], pod.Spec.NodeSelector[corev1.LabelFailureDomainBetaZone]))
	}
	all := subnets
	if s.Down != nil {
		subnets = s.Settings.OutageSubnets(subnets, s.Config.SubnetAZ, s.Down)
	}
	// Only the subnets with a free address are drawn from: each Fargate pod
	// takes one for its ENI.
	withRoom := func() []string {
		return slices.DeleteFunc(slices.Clone(subnets), func(id string) bool { n, _ := s.Addresses.Free(id); return n < 1 })
	}
	room := withRoom()
	if len(room) == 0 && len(subnets) > 0 {
		s.wait(key, subnets)
		if room = withRoom(); len(room) == 0 { // looked again: an address freed meanwhile is not missed
			return s.event(ctx, pod, s.Config.SubnetFullMessage(subnets))
		}
	}
	s.unwait(key)
	subnet, err := s.subnet(ctx, pod, room)
	if err != nil {
		return err
	}
	az, ok := s.Config.SubnetAZ(subnet)
	if !ok {
		return s.event(ctx, pod, "Fargate is not supported in the requested subnet: "+subnet)
	}
	if s.Down != nil && s.Down(az) {
		s.wait(key, all) // until the AZ is up again (RetryZone), or an address frees
		return s.event(ctx, pod, fmt.Sprintf(UnavailableZoneMessage, az))
	}
	node, err := s.createNode(ctx, subnet, az, d.Size)
	if apierrors.IsAlreadyExists(err) {
		// With VPC DNS hostnames off every node is fargate-null: one pod only.
		return s.event(ctx, pod, fmt.Sprintf("node %s already exists: VPC DNS hostnames are disabled", fargate.NullNodeName))
	}
	if errors.Is(err, ipam.ErrFull) {
		s.wait(key, subnets)
		return s.event(ctx, pod, s.Config.SubnetFullMessage(subnets))
	}
	if err != nil {
		return fmt.Errorf("starting the pod's node: %w", err)
	}
	s.bound(key, node.Name)
	p := placing{key: key, pod: pod, profile: d.Profile, node: node.Name, subnet: subnet, az: az, size: d.Size, start: d.StartFailures}
	if s.nodes == nil { // not running (unit tests): placed now
		return s.place(ctx, p)
	}
	// The node starts and the pod is bound aside, so that pods start side
	// by side as on Fargate; the choices above stay in the queue's order,
	// which a seed makes repeatable.
	go func() {
		if err := s.place(ctx, p); err != nil && ctx.Err() == nil {
			slog.Warn("fargate-scheduler will retry", "pod", key.String(), "err", err)
			s.queue.AddRateLimited(key)
		}
	}()
	return nil
}

// placing is a pod whose node was created, to bind there once it runs.
type placing struct {
	key              types.NamespacedName
	pod              *corev1.Pod
	profile          *fargate.Profile
	node, subnet, az string
	size             fargate.Sizing
	// start are the containers that do not start (Decision.StartFailures).
	start []fargate.StartFailure
}

// place binds a pod to its node once the node runs; a pod that is not bound
// in the end (deleted meanwhile, a failed binding, which is retried) leaves
// no node and no address behind.
func (s *Scheduler) place(ctx context.Context, p placing) error {
	pod, key := p.pod, p.key
	placed := false
	defer func() {
		if !placed {
			s.unbound(key, p.node)
			s.releaseNode(context.WithoutCancel(ctx), p.node)
		}
	}()
	// EKS records the pod's logging state as it starts the pod's node, and
	// its placement once the node runs.
	if l, ok := s.logging(pod); ok {
		if err := s.record(ctx, pod, corev1.EventSource{Component: fargate.SchedulerName}, l.EventType, l.Reason, l.Message); err != nil {
			slog.Warn("recording the pod's logging", "pod", key.String(), "err", err)
		}
	}
	if d := s.Config.Timings.FargatePodStart.Duration; d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil
		}
	}
	if err := s.nodes.await(ctx, p.node); err != nil {
		return err
	}
	// The annotations come with the binding, as the API server merges a
	// binding's annotations into the pod.
	annotations := map[string]string{fargate.CapacityProvisionedAnnotation: p.size.Provisioned.String()}
	pull := s.imagePull(pod, p.profile, p.subnet)
	if pull != nil {
		maps.Copy(annotations, pull.annotations())
	} else if len(p.start) > 0 { // what does not pull does not start either
		maps.Copy(annotations, startAnnotations(p.start[0]))
	}
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, Annotations: annotations},
		Target: corev1.ObjectReference{Kind: "Node", Name: p.node}}
	if err := s.Client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); apierrors.IsNotFound(err) {
		return nil // deleted while its node started
	} else if err != nil {
		return fmt.Errorf("binding the pod to %s: %w", p.node, err)
	}
	placed = true
	if s.nodes != nil { // running with KWOK, which may miss the binding
		go s.resync(ctx, key, p.node, resyncs, s.cachedPod)
	}
	scheduled := fmt.Sprintf("Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, p.node)
	if err := s.record(ctx, pod, corev1.EventSource{Component: fargate.SchedulerName}, corev1.EventTypeNormal, "Scheduled", scheduled); err != nil {
		slog.Warn("recording the pod's placement", "pod", key.String(), "err", err)
	}
	slog.Debug("pod placed on Fargate", "pod", key.String(), "node", p.node, "az", p.az, "size", p.size.Provisioned.String())
	// Bound, the pod is not scheduled again: its events are recorded once.
	if pull != nil {
		if err := s.pullEvents(ctx, pod, p.node, pull); err != nil {
			slog.Warn("recording the image pull failure", "pod", key.String(), "err", err)
		}
	} else if len(p.start) > 0 {
		if err := s.startEvents(ctx, pod, p.node, p.start[0]); err != nil {
			slog.Warn("recording the container's failed start", "pod", key.String(), "err", err)
		}
	}
	return nil
}

// createNode creates the node of a pod in a subnet of az, at a free address
// of the subnet. An address that is taken after all (by a node the
// scheduler did not know of) stays taken, and another one is drawn.
func (s *Scheduler) createNode(ctx context.Context, subnet, az string, size fargate.Sizing) (*corev1.Node, error) {
	hostnames := s.Config.DNSHostnames()
	if s.DNSHostnames != nil {
		hostnames = s.DNSHostnames()
	}
	for range 10 {
		ip, err := s.Addresses.Take(subnet, s.Rand)
		if err != nil {
			return nil, err
		}
		node := s.node(ip, az, size, hostnames)
		_, err = s.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		switch {
		case err == nil:
			s.setNode(node.Name, az, ip)
			return node, nil
		case apierrors.IsAlreadyExists(err) && hostnames:
			continue // the address stays taken
		case apierrors.IsAlreadyExists(err):
			s.Addresses.Release(ip)
			return nil, err
		default:
			s.Addresses.Release(ip)
			return nil, fmt.Errorf("creating node %s: %w", node.Name, err)
		}
	}
	return nil, fmt.Errorf("%w: subnet %s, after 10 addresses taken by nodes unknown to fargate-scheduler", ipam.ErrFull, subnet)
}

// subnet picks the subnet of a pod among its profile's, as the settings'
// AZ choice model says.
func (s *Scheduler) subnet(ctx context.Context, pod *corev1.Pod, subnets []string) (string, error) {
	if len(subnets) == 0 {
		return "", fmt.Errorf("profile %s has no subnets", pod.Labels[fargate.ProfileLabel])
	}
	if s.Settings.AZChoice != fargate.AZBalanced {
		return subnets[s.Rand.IntN(len(subnets))], nil
	}
	load, err := s.ownerLoad(ctx, pod)
	if err != nil {
		return "", err
	}
	return balanced(subnets, s.Config.SubnetAZ, load, s.Rand), nil
}

// balanced picks at random among the subnets whose AZ holds the fewest of load.
func balanced(subnets []string, azOf func(string) (string, bool), load map[string]int, r *rand.Rand) string {
	least, best := -1, []string(nil)
	for _, id := range subnets {
		az, _ := azOf(id)
		switch n := load[az]; {
		case least < 0 || n < least:
			least, best = n, []string{id}
		case n == least:
			best = append(best, id)
		}
	}
	return best[r.IntN(len(best))]
}

// ownerLoad counts, by AZ, the pods on Fargate nodes that share the pod's
// controller (the replicas of one ReplicaSet, StatefulSet or Job), those
// whose nodes start included.
func (s *Scheduler) ownerLoad(ctx context.Context, pod *corev1.Pod) (map[string]int, error) {
	owner := metav1.GetControllerOf(pod)
	load := map[string]int{}
	if owner == nil {
		return load, nil
	}
	pods, err := s.Client.CoreV1().Pods(pod.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of %s %s: %w", owner.Kind, owner.Name, err)
	}
	for _, p := range pods.Items {
		if c := metav1.GetControllerOf(&p); c == nil || c.UID != owner.UID || p.DeletionTimestamp != nil {
			continue
		}
		node := cmp.Or(p.Spec.NodeName, s.nodeOf(types.NamespacedName{Namespace: p.Namespace, Name: p.Name}))
		if az := s.zone(node); az != "" {
			load[az]++
		}
	}
	return load, nil
}

// setNode records a Fargate node's AZ and address.
func (s *Scheduler) setNode(node, az string, ip netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.zones == nil {
		s.zones, s.nodeIPs = map[string]string{}, map[string]netip.Addr{}
	}
	s.zones[node], s.nodeIPs[node] = az, ip
}

// bound records the Fargate node a pod is bound to, or is to be bound to
// once the node runs.
func (s *Scheduler) bound(pod types.NamespacedName, node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pods == nil {
		s.pods = map[types.NamespacedName]string{}
	}
	s.pods[pod] = node
}

// unbound forgets the node of a pod that was not bound there.
func (s *Scheduler) unbound(pod types.NamespacedName, node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pods[pod] == node {
		delete(s.pods, pod)
	}
}

// nodeOf is the Fargate node a pod is bound to or is to be bound to.
func (s *Scheduler) nodeOf(pod types.NamespacedName) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pods[pod]
}

// gone forgets a pod that is gone: its Fargate node, "" for none, and its
// wait for an address.
func (s *Scheduler) gone(pod types.NamespacedName) string {
	s.unwait(pod)
	s.mu.Lock()
	defer s.mu.Unlock()
	node := s.pods[pod]
	delete(s.pods, pod)
	return node
}

func (s *Scheduler) zone(node string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.zones[node]
}

// node builds the Node of one Fargate pod.
func (s *Scheduler) node(ip netip.Addr, az string, size fargate.Sizing, hostnames bool) *corev1.Node {
	name := fargate.NodeName(s.Config.Metadata.Region, ip, hostnames)
	labels := fargate.NodeLabels(s.Config.Metadata.Region, az)
	labels[corev1.LabelHostname] = name
	labels["type"] = "kwok"
	id := fmt.Sprintf("%08x%08x", s.Rand.Uint32(), s.Rand.Uint32())
	cpu := resource.NewMilliQuantity(size.Provisioned.MilliCPU, resource.DecimalSI)
	mem := resource.NewQuantity(size.Provisioned.MemoryMiB<<20, resource.BinarySI)
	eph := resource.NewQuantity(size.EphemeralGiB<<30, resource.BinarySI)
	capacity := corev1.ResourceList{corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *mem, corev1.ResourceEphemeralStorage: *eph, corev1.ResourcePods: resource.MustParse("1")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{KwokNodeAnnotation: "fake"},
		},
		Spec: corev1.NodeSpec{
			ProviderID: fmt.Sprintf("aws:///%s/%s/%s", az, id, name),
			Taints:     []corev1.Taint{fargate.NodeTaint},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip.String()}, {Type: corev1.NodeHostName, Address: name}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: "v" + s.version() + ".0-eks-fargate", OperatingSystem: "linux", Architecture: "amd64",
			},
		},
	}
}

// releaseNode deletes the Fargate node of a pod that is gone (or was never
// bound), and frees its address once the node is gone.
func (s *Scheduler) releaseNode(ctx context.Context, name string) {
	s.mu.Lock()
	ip, known := s.nodeIPs[name]
	delete(s.zones, name)
	delete(s.nodeIPs, name)
	s.mu.Unlock()
	if err := s.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		slog.Warn("deleting a Fargate node: its address stays taken until the emulator starts again", "node", name, "err", err)
		return
	}
	if !known {
		return
	}
	// After the configured delay (the ENI being deleted), so that a new
	// node at the address does not collide with it.
	release := func() {
		if subnet := s.Addresses.Release(ip); subnet != "" {
			s.retryWaiting(subnet)
		}
	}
	if d := s.Config.ReleaseDelay(); d > 0 {
		time.AfterFunc(d, release)
		return
	}
	release()
}

// nodeAddress is the InternalIP of a node.
func nodeAddress(n *corev1.Node) (netip.Addr, bool) {
	for _, a := range n.Status.Addresses {
		if ip, err := netip.ParseAddr(a.Address); err == nil && a.Type == corev1.NodeInternalIP {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

// wait remembers a pod that found no free address in subnets, behind those
// that waited before it.
func (s *Scheduler) wait(key types.NamespacedName, subnets []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.ContainsFunc(s.waiting, func(w waiter) bool { return w.key == key }) {
		s.waiting = append(s.waiting, waiter{key: key, subnets: subnets})
	}
}

// unwait forgets a pod's wait for an address.
func (s *Scheduler) unwait(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting = slices.DeleteFunc(s.waiting, func(w waiter) bool { return w.key == key })
}

// retryWaiting queues again, first come first, as many of the pods that
// wait for an address of subnet as it has free.
func (s *Scheduler) retryWaiting(subnet string) {
	free, _ := s.Addresses.Free(subnet)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queue == nil {
		return
	}
	s.waiting = slices.DeleteFunc(s.waiting, func(w waiter) bool {
		if free < 1 || !slices.Contains(w.subnets, subnet) {
			return false
		}
		free--
		s.queue.Add(w.key)
		return true
	})
}

// UnavailableZoneMessage is the FailedScheduling message of a pod drawn
// into an AZ that is down: the emulator's wording, AWS's is unknown.
const UnavailableZoneMessage = "Fargate could not start the pod: availability zone %s is unavailable"

// RetryZone queues again the pods that wait for an AZ that is up again.
func (s *Scheduler) RetryZone(az string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queue == nil {
		return
	}
	inZone := func(id string) bool { a, _ := s.Config.SubnetAZ(id); return a == az }
	s.waiting = slices.DeleteFunc(s.waiting, func(w waiter) bool {
		if !slices.ContainsFunc(w.subnets, inZone) {
			return false
		}
		s.queue.Add(w.key)
		return true
	})
}

// init gives the scheduler its defaults.
func (s *Scheduler) init() error {
	if s.Addresses != nil {
		return nil
	}
	a, err := ipam.New(s.Config.SubnetCIDRs())
	if err != nil {
		return fmt.Errorf("the VPC's subnets: %w", err)
	}
	s.Addresses = a
	return nil
}

// logging is the logging state EKS gave the pod at its creation, as the
// webhook recorded it in its annotations; false without them.
func (s *Scheduler) logging(pod *corev1.Pod) (fargate.Logging, bool) {
	switch pod.Annotations[fargate.LoggingAnnotation] {
	case fargate.LoggingEnabled.Annotation:
		return fargate.LoggingEnabled, true
	case fargate.LoggingNotFound.Annotation:
		return fargate.LoggingNotFound, true
	case fargate.LoggingInvalidAnnotation:
		return fargate.LoggingInvalid(pod.Annotations[LoggingProblemAnnotation]), true
	}
	return fargate.Logging{}, false
}

// event records a FailedScheduling Warning event from fargate-scheduler on
// the pod, which stays Pending.
func (s *Scheduler) event(ctx context.Context, pod *corev1.Pod, message string) error {
	// Said again (a pod waiting for an address is tried each time one frees),
	// it is counted on the one event, as client-go's recorder aggregates.
	h := fnv.New64a()
	_, _ = h.Write([]byte(string(pod.UID) + "\x00" + message))
	name := fmt.Sprintf("%s.%x", pod.Name, h.Sum64())
	events := s.Client.CoreV1().Events(pod.Namespace)
	if old, err := events.Get(ctx, name, metav1.GetOptions{}); err == nil {
		old.Count++
		old.LastTimestamp = metav1.Now()
		if _, err := events.Update(ctx, old, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("recording event %q again: %w", message, err)
		}
		return nil
	}
	return createEvent(ctx, s.Client, pod, name, corev1.EventSource{Component: fargate.SchedulerName}, corev1.EventTypeWarning, "FailedScheduling", message)
}

// record records an event about the pod (RecordPodEvent).
func (s *Scheduler) record(ctx context.Context, pod *corev1.Pod, source corev1.EventSource, typ, reason, message string) error {
	return RecordPodEvent(ctx, s.Client, pod, source, typ, reason, message)
}

// RecordPodEvent records an event about the pod, named as client-go's
// recorder names events: in the order recorded, which kubectl describe
// keeps for events of the same second.
func RecordPodEvent(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, source corev1.EventSource, typ, reason, message string) error {
	return createEvent(ctx, client, pod, fmt.Sprintf("%s.%x", pod.Name, time.Now().UnixNano()), source, typ, reason, message)
}

// createEvent creates an event of the given name about the pod.
func createEvent(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, name string, source corev1.EventSource, typ, reason, message string) error {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, APIVersion: "v1"},
		Reason:         reason,
		Message:        message,
		Type:           typ,
		Source:         source,
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
	}
	if _, err := client.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("recording event %q: %w", message, err)
	}
	return nil
}

// StopProfilePods deletes the pods a profile placed, as EKS does when the
// profile starts DELETING (PodDisruptionBudgets are ignored). Their
// controllers recreate them, and the webhook places the new pods.
func StopProfilePods(ctx context.Context, client kubernetes.Interface, profile string) error {
	sel := metav1.ListOptions{LabelSelector: fargate.ProfileLabel + "=" + profile}
	if err := client.CoreV1().Pods(metav1.NamespaceAll).DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err == nil {
		return nil
	}
	// DeleteCollection across namespaces is not served: delete one by one.
	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return fmt.Errorf("listing the pods of profile %s: %w", profile, err)
	}
	for _, p := range pods.Items {
		if err := client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("stopping pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

func (s *Scheduler) version() string {
	if s.Version != nil {
		return s.Version()
	}
	return s.Config.KubernetesVersion
}
