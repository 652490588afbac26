package fargate

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"strings"
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

	"github.com/fargatekit/fargatekit/internal/emulator/config"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// KwokNodeAnnotation hands a node to KWOK, which keeps it Ready and runs
// (fakes) the pods bound to it.
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// CapacityProvisionedAnnotation is the pod annotation with the size Fargate runs it at.
const CapacityProvisionedAnnotation = "CapacityProvisioned"

// Scheduler is fargate-scheduler: it places the pods the webhook sent to it,
// each on a node of its own in a subnet of its profile picked at random.
// Affinity, anti-affinity and topology spread are ignored, as on EKS.
type Scheduler struct {
	Client kubernetes.Interface
	Config *config.Config
	// Profiles returns the ACTIVE profiles.
	Profiles func() []fargate.Profile
	// Rand picks subnets and addresses; seed it for repeatable runs.
	Rand *rand.Rand
	// AllowedCapabilities are passed to the rejection rules (nil: the default).
	AllowedCapabilities []string

	mu   sync.Mutex
	used map[netip.Addr]bool
}

// Run schedules pods until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	// The Fargate nodes of an earlier run keep their addresses.
	nodes, err := s.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fargate.ComputeTypeLabel + "=fargate"})
	if err != nil {
		return fmt.Errorf("listing the Fargate nodes: %w", err)
	}
	for _, n := range nodes.Items {
		for _, a := range n.Status.Addresses {
			if ip, err := netip.ParseAddr(a.Address); err == nil && a.Type == corev1.NodeInternalIP {
				s.markUsed(ip)
			}
		}
	}
	// A pod whose scheduling fails (a conflict, the API server restarting) is
	// retried with backoff; refusals are not failures and are not retried.
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
	defer queue.ShutDown()
	lw := cache.NewListWatchFromClient(s.Client.CoreV1().RESTClient(), "pods", metav1.NamespaceAll,
		fields.OneTermEqualSelector("spec.schedulerName", SchedulerName))
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
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
				if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
					s.releaseNode(context.WithoutCancel(ctx), p.Spec.NodeName)
				}
			},
		},
	})
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
	pod, err := s.Client.CoreV1().Pods(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("getting the pod: %w", err)
	}
	if pod.Spec.NodeName != "" {
		return nil
	}
	if reason := Rejection(pod, s.AllowedCapabilities); reason != "" {
		return s.event(ctx, pod, reason)
	}
	profile := s.profile(pod)
	if profile == nil {
		return s.event(ctx, pod, "Pod not supported on Fargate: no ACTIVE Fargate profile "+pod.Labels[fargate.ProfileLabel])
	}
	subnet := profile.Subnets[s.Rand.IntN(len(profile.Subnets))]
	az, ok := s.Config.SubnetAZ(subnet)
	if !ok {
		return s.event(ctx, pod, "Fargate is not supported in the requested subnet: "+subnet)
	}
	size := fargate.SizePod(&pod.Spec)
	if !size.Fits {
		return s.event(ctx, pod, "Pod not supported on Fargate: resources exceed the largest Fargate size (16 vCPU, 120 GB)")
	}
	node, err := s.createNode(ctx, az, size)
	if apierrors.IsAlreadyExists(err) {
		// With VPC DNS hostnames off every node is fargate-null: one pod only.
		return s.event(ctx, pod, fmt.Sprintf("node %s already exists: VPC DNS hostnames are disabled", NodeName(s.Config, netip.Addr{})))
	}
	if err != nil {
		return s.event(ctx, pod, err.Error())
	}
	if d := s.Config.Timings.FargatePodStart.Duration; d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil
		}
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{CapacityProvisionedAnnotation: size.Provisioned.String()}}})
	if _, err := s.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("annotating the pod: %w", err)
	}
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}, Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}
	if err := s.Client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("binding the pod to %s: %w", node.Name, err)
	}
	slog.Debug("pod placed on Fargate", "pod", key.String(), "node", node.Name, "az", az, "size", size.Provisioned.String())
	return nil
}

// createNode creates the node of a pod in az, at a free address of the AZ's
// subnet. An address that is taken after all (by a node made before a
// restart of the emulator) is remembered and another one drawn.
func (s *Scheduler) createNode(ctx context.Context, az string, size fargate.Sizing) (*corev1.Node, error) {
	for range 10 {
		ip, err := s.address(s.Config.VPC.Subnets.Private[az].CIDR)
		if err != nil {
			return nil, err
		}
		node := s.node(ip, az, size)
		_, err = s.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		switch {
		case err == nil:
			return node, nil
		case apierrors.IsAlreadyExists(err) && s.Config.DNSHostnames():
			continue // the address stays marked used
		case apierrors.IsAlreadyExists(err):
			s.release(ip)
			return nil, err
		default:
			s.release(ip)
			return nil, fmt.Errorf("creating node %s: %w", node.Name, err)
		}
	}
	return nil, fmt.Errorf("no free address in the subnet of %s after 10 draws", az)
}

// profile returns the ACTIVE profile named by the pod's label.
func (s *Scheduler) profile(pod *corev1.Pod) *fargate.Profile {
	for _, p := range s.Profiles() {
		if p.Name == pod.Labels[fargate.ProfileLabel] {
			return &p
		}
	}
	return nil
}

// address picks a free address of the subnet at random.
func (s *Scheduler) address(cidr string) (netip.Addr, error) {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("subnet CIDR %q: %w", cidr, err)
	}
	base := prefix.Masked().Addr().As4()
	hosts := uint32(1) << (32 - prefix.Bits())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used == nil {
		s.used = map[netip.Addr]bool{}
	}
	for range 1000 {
		// AWS reserves the first four addresses and the last one of a subnet.
		n := binary.BigEndian.Uint32(base[:]) + 4 + s.Rand.Uint32N(max(hosts-5, 1))
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], n)
		ip := netip.AddrFrom4(b)
		if !s.used[ip] {
			s.used[ip] = true
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("subnet %s has no free address", cidr)
}

func (s *Scheduler) markUsed(ip netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used == nil {
		s.used = map[netip.Addr]bool{}
	}
	s.used[ip] = true
}

func (s *Scheduler) release(ip netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.used, ip)
}

// NodeName is the name of the Fargate node of a pod at ip: fargate-null
// for every pod when the VPC has DNS hostnames disabled.
func NodeName(cfg *config.Config, ip netip.Addr) string {
	if !cfg.DNSHostnames() {
		return "fargate-null"
	}
	return "fargate-ip-" + strings.ReplaceAll(ip.String(), ".", "-") + "." + cfg.Metadata.Region + ".compute.internal"
}

// node builds the Node of one Fargate pod.
func (s *Scheduler) node(ip netip.Addr, az string, size fargate.Sizing) *corev1.Node {
	name := NodeName(s.Config, ip)
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
				KubeletVersion: "v" + s.Config.KubernetesVersion + ".0-eks-fargate", OperatingSystem: "linux", Architecture: "amd64",
			},
		},
	}
}

// releaseNode deletes the Fargate node of a pod that is gone.
func (s *Scheduler) releaseNode(ctx context.Context, name string) {
	node, err := s.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil || node.Labels[fargate.ComputeTypeLabel] != "fargate" {
		return
	}
	for _, a := range node.Status.Addresses {
		if ip, err := netip.ParseAddr(a.Address); err == nil && a.Type == corev1.NodeInternalIP {
			s.release(ip)
		}
	}
	if err := s.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		slog.Warn("deleting a Fargate node", "node", name, "err", err)
	}
}

// event records a FailedScheduling Warning event from fargate-scheduler on
// the pod, which stays Pending.
func (s *Scheduler) event(ctx context.Context, pod *corev1.Pod, message string) error {
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, APIVersion: "v1"},
		Reason:         "FailedScheduling",
		Message:        message,
		Type:           corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: SchedulerName},
		FirstTimestamp: now,
		LastTimestamp:  now,
		Count:          1,
	}
	if _, err := s.Client.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
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
