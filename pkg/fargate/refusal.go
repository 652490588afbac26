package fargate

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RefusalKind is one reason fargate-scheduler refuses a pod. Exactly one
// rule of `fargatekit check` reports each kind (rules.Rule.Refusal).
type RefusalKind string

// The reasons fargate-scheduler refuses a pod.
const (
	RefuseDaemonSet           RefusalKind = "daemonset"
	RefusePrivileged          RefusalKind = "privileged"
	RefuseCapabilities        RefusalKind = "capabilities"
	RefusePrivilegeEscalation RefusalKind = "privilege-escalation"
	RefuseHostNetwork         RefusalKind = "host-network"
	RefuseHostPID             RefusalKind = "host-pid"
	RefuseHostIPC             RefusalKind = "host-ipc"
	RefuseHostPort            RefusalKind = "host-port"
	RefuseHostPath            RefusalKind = "host-path"
	RefuseVolume              RefusalKind = "volume"
	RefuseGPU                 RefusalKind = "gpu"
	RefusePlatform            RefusalKind = "platform"
	RefuseNodeSelection       RefusalKind = "node-selection"
	RefuseOversize            RefusalKind = "oversize"
)

// RefusalKinds lists every kind, in the order Refusals reports them.
var RefusalKinds = []RefusalKind{
	RefuseDaemonSet, RefuseHostNetwork, RefuseHostPID, RefuseHostIPC,
	RefusePrivileged, RefuseCapabilities, RefusePrivilegeEscalation, RefuseHostPort,
	RefuseHostPath, RefuseVolume, RefuseGPU, RefusePlatform, RefuseNodeSelection, RefuseOversize,
}

// Refusal is one reason fargate-scheduler refuses a pod.
type Refusal struct {
	Kind RefusalKind
	// Reason is fargate-scheduler's wording, as it stands in its event
	// "Pod not supported on Fargate: <reason>, <reason>". The texts of
	// privileged, capabilities, host network/PID/IPC, host ports and
	// volumes were observed on EKS; the others are composed in the same
	// style (unconfirmed).
	Reason string
	// Field is the field path inside the pod spec that causes it
	// ("containers[1].securityContext.privileged"); "" for the pod as a
	// whole.
	Field string
	// Detail says what the pod does, for a person: `container "app" is privileged`.
	Detail string
}

// scheduling reports whether the refusal comes from the pod's node
// selection rather than from a field Fargate does not support.
func (r Refusal) scheduling() bool {
	return r.Kind == RefusePlatform || r.Kind == RefuseNodeSelection
}

// Refusals returns every reason fargate-scheduler refuses a pod with spec,
// created by a DaemonSet when daemonSet is true, under the settings s. It
// does not look at where the pod goes: the webhook decides that (Place), and
// a pod it sends to fargate-scheduler is refused for these reasons wherever
// its node selection points. An empty result means Fargate runs the pod. A
// DaemonSet's pod is refused for being one, and only that is reported. size
// is the pod's SizePod, which callers need too: computed once, it is one of
// the costliest steps of a check.
func Refusals(spec *corev1.PodSpec, size Sizing, daemonSet bool, s Settings) []Refusal {
	var out []Refusal
	add := func(kind RefusalKind, reason, field, format string, args ...any) {
		out = append(out, Refusal{Kind: kind, Reason: reason, Field: field, Detail: fmt.Sprintf(format, args...)})
	}
	if daemonSet {
		// Whatever else the pods hold, this is the reason that matters.
		add(RefuseDaemonSet, "DaemonSet pods are not supported", "", "DaemonSets cannot run on Fargate")
		return out
	}
	for _, h := range []struct {
		on    bool
		kind  RefusalKind
		field string
		name  string
	}{
		{spec.HostNetwork, RefuseHostNetwork, "hostNetwork", "HostNetwork"},
		{spec.HostPID, RefuseHostPID, "hostPID", "HostPID"},
		{spec.HostIPC, RefuseHostIPC, "hostIPC", "HostIPC"},
	} {
		if h.on {
			add(h.kind, "fields not supported: "+h.name, h.field, "the pod sets %s", h.field)
		}
	}
	for _, c := range containers(spec) {
		if sc := c.SecurityContext; sc != nil {
			if sc.Privileged != nil && *sc.Privileged {
				add(RefusePrivileged, "invalid SecurityContext fields: Privileged", c.field("securityContext.privileged"),
					"container %q is privileged", c.Name)
			}
			if names, caps := refusedCapabilities(sc, &s); len(names) > 0 {
				add(RefuseCapabilities, "invalid SecurityContext fields: Capabilities added: "+strings.Join(caps, ", "),
					c.field("securityContext.capabilities.add"), "container %q adds capabilities %s", c.Name, strings.Join(names, ", "))
			}
			if s.RefusePrivilegeEscalation && EscalatesPrivileges(c.Container) {
				add(RefusePrivilegeEscalation, "invalid SecurityContext fields: AllowPrivilegeEscalation",
					c.field("securityContext.allowPrivilegeEscalation"), "container %q allows privilege escalation", c.Name)
			}
		}
		for j, p := range c.Ports {
			if p.HostPort == 0 && p.HostIP == "" {
				continue
			}
			field := "hostPort"
			if p.HostPort == 0 {
				field = "hostIP"
			}
			add(RefuseHostPort, "port contains HostIP or HostPort", c.field(fmt.Sprintf("ports[%d].%s", j, field)),
				"container %q port %d binds a host port", c.Name, p.ContainerPort)
		}
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		t := volumeType(v)
		reason := "volumes not supported: " + v.Name + " is of an unsupported volume Type"
		field := fmt.Sprintf("volumes[%d].%s", i, t)
		switch {
		case v.HostPath != nil:
			add(RefuseHostPath, reason, field, "volume %q mounts the host path %s", v.Name, v.HostPath.Path)
		case t != "" && !supportedVolumes[t]:
			add(RefuseVolume, reason, field, "volume %q is of type %s, which Fargate does not support", v.Name, t)
		}
	}
	for _, c := range containers(spec) {
		seen := map[string]bool{}
		for _, list := range []struct {
			field string
			l     corev1.ResourceList
		}{{"limits", c.Resources.Limits}, {"requests", c.Resources.Requests}} {
			for _, n := range resourceNames(list.l) {
				if Accelerator(n) && !seen[n] {
					seen[n] = true
					add(RefuseGPU, "resources not supported: GPU", c.field("resources."+list.field+"["+n+"]"),
						"container %q asks for %s", c.Name, n)
				}
			}
		}
	}
	out = append(out, platformRefusals(spec)...)
	if (len(spec.NodeSelector) > 0 || hasRequiredNodeAffinity(spec)) && ExcludesFargate(spec) {
		field := "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
		if v, ok := spec.NodeSelector[ComputeTypeLabel]; ok && v != "fargate" {
			field = "nodeSelector[" + ComputeTypeLabel + "]"
		}
		add(RefuseNodeSelection, "node selection excludes Fargate nodes", field,
			"the pod's node selection excludes Fargate nodes, but EKS's webhook sends it to fargate-scheduler all the same")
	}
	if !size.Fits {
		largest := Largest()
		if size.EphemeralGiB > MaxEphemeralGiB {
			add(RefuseOversize, fmt.Sprintf("ephemeral storage exceeds the largest Fargate size (%d GiB)", MaxEphemeralGiB), "containers",
				"the pod needs %d GiB of ephemeral storage; Fargate provides at most %d GiB", size.EphemeralGiB, MaxEphemeralGiB)
		} else {
			add(RefuseOversize, "resources exceed the largest Fargate size ("+largest.String()+")", "containers",
				"the pod requests %s (+%d MB Fargate overhead); the largest Fargate size is %s", size.Requested(), OverheadMemoryMiB, largest.String())
		}
	}
	return out
}

// Event is the message of fargate-scheduler's FailedScheduling event for a
// pod of profile refused for rs: "Pod not supported on Fargate: <reasons>",
// each reason once. A pod refused only for its node selection gets
// "MatchNodeSelector failed: Fargate profile <profile> cannot ..." as seen
// on EKS (the rest of that text is composed: unconfirmed). "" when rs is empty.
func Event(profile string, rs []Refusal) string {
	var spec, sched []string
	seen := map[string]bool{}
	for _, r := range rs {
		if seen[r.Reason] {
			continue
		}
		seen[r.Reason] = true
		if r.scheduling() {
			sched = append(sched, r.Reason)
		} else {
			spec = append(spec, r.Reason)
		}
	}
	switch {
	case len(spec) > 0:
		return refusedPrefix + strings.Join(spec, ", ")
	case len(sched) > 0:
		return nodeSelectorPrefix + profile + " cannot place the pod: " + strings.Join(sched, ", ")
	}
	return ""
}

// The beginnings of Event's messages.
const (
	refusedPrefix      = "Pod not supported on Fargate: "
	nodeSelectorPrefix = "MatchNodeSelector failed: Fargate profile "
)

// IsRefusalEvent reports whether the message of a fargate-scheduler
// FailedScheduling event says that Fargate refuses the pod (Event), which
// then stays Pending for good, rather than that it waits (for a free
// address, an AZ).
func IsRefusalEvent(message string) bool {
	return strings.HasPrefix(message, refusedPrefix) || strings.HasPrefix(message, nodeSelectorPrefix)
}

// EscalatesPrivileges reports whether a container sets
// allowPrivilegeEscalation: true (unset, the Kubernetes default, does not count).
func EscalatesPrivileges(c *corev1.Container) bool {
	sc := c.SecurityContext
	return sc != nil && sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation
}

// refusedCapabilities returns the capabilities a container adds that the
// settings do not allow: as written, and as fargate-scheduler names them
// (CAP_NET_ADMIN).
func refusedCapabilities(sc *corev1.SecurityContext, s *Settings) (written, named []string) {
	if sc.Capabilities == nil {
		return nil, nil
	}
	for _, c := range sc.Capabilities.Add {
		if !s.Allows(string(c)) {
			written = append(written, string(c))
			named = append(named, "CAP_"+capabilityName(string(c)))
		}
	}
	return written, named
}

// platformKeys are the node labels of Fargate's platform; their values are
// those of NodeLabels, as every Fargate node carries them.
var platformKeys = []string{"kubernetes.io/arch", "beta.kubernetes.io/arch", "kubernetes.io/os", "beta.kubernetes.io/os"}

// platformRefusals returns what asks for another platform than Fargate's
// linux/amd64: spec.os, the node selector, the required node affinity.
func platformRefusals(spec *corev1.PodSpec) []Refusal {
	const reason = "node selection requires a platform other than linux/amd64"
	var out []Refusal
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		out = append(out, Refusal{Kind: RefusePlatform, Reason: reason, Field: "os.name", Detail: "the pod targets Windows"})
	}
	node := NodeLabels("", "")
	for _, key := range platformKeys {
		if v, ok := spec.NodeSelector[key]; ok && v != node[key] {
			out = append(out, Refusal{Kind: RefusePlatform, Reason: reason, Field: "nodeSelector[" + key + "]",
				Detail: fmt.Sprintf("the pod selects %s=%s nodes", key, v)})
		}
	}
	// The node selector was reported above; here the required node affinity alone.
	if hasRequiredNodeAffinity(spec) && !Admits(&corev1.PodSpec{Affinity: spec.Affinity}, platformKeys...) {
		out = append(out, Refusal{Kind: RefusePlatform, Reason: reason, Field: "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
			Detail: "the pod's required node affinity allows no linux/amd64 node"})
	}
	return out
}

// specContainer is a container of a pod spec with its place in the spec.
type specContainer struct {
	*corev1.Container
	init  bool
	index int
}

// field is the path of a field of the container inside the pod spec.
func (c specContainer) field(f string) string {
	list := "containers"
	if c.init {
		list = "initContainers"
	}
	return list + "[" + strconv.Itoa(c.index) + "]." + f
}

// containers lists init containers and then containers.
func containers(spec *corev1.PodSpec) []specContainer {
	out := make([]specContainer, 0, len(spec.InitContainers)+len(spec.Containers))
	for i := range spec.InitContainers {
		out = append(out, specContainer{&spec.InitContainers[i], true, i})
	}
	for i := range spec.Containers {
		out = append(out, specContainer{&spec.Containers[i], false, i})
	}
	return out
}

// supportedVolumes are the volume types Fargate mounts. What backs a
// persistentVolumeClaim or an ephemeral volume decides whether it works:
// the rules that relate claims to volumes judge those.
var supportedVolumes = map[string]bool{
	"configMap": true, "secret": true, "emptyDir": true, "projected": true, "downwardAPI": true,
	"persistentVolumeClaim": true, "ephemeral": true,
}

// volumeType returns the JSON name of the volume's source ("hostPath", "nfs", ...).
func volumeType(v *corev1.Volume) string {
	src := reflect.ValueOf(v.VolumeSource)
	for i := range src.NumField() {
		if f := src.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(src.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return ""
}

// acceleratorPrefixes are the extended resources of GPU and accelerator device
// plugins: every nvidia.com/ resource (gpu, gpu.shared, MIG slices such as
// mig-1g.5gb), AMD, Intel, Habana and AWS Neuron devices.
var acceleratorPrefixes = []string{"nvidia.com/", "amd.com/", "gpu.intel.com/", "habana.ai/", "aws.amazon.com/neuron"}

// Accelerator reports whether a resource name is a GPU or another accelerator.
func Accelerator(name string) bool {
	if strings.HasSuffix(name, "/gpu") {
		return true
	}
	for _, p := range acceleratorPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// resourceNames returns a resource list's names, sorted.
func resourceNames(l corev1.ResourceList) []string {
	out := make([]string, 0, len(l))
	for n := range l {
		out = append(out, string(n))
	}
	sort.Strings(out)
	return out
}

// Largest is the largest Fargate size.
func Largest() Size { return Sizes[len(Sizes)-1] }

// DaemonSetPod reports whether a pod's owner references make it a
// DaemonSet's pod: its controller is a DaemonSet.
func DaemonSetPod(owners []metav1.OwnerReference) bool {
	for _, o := range owners {
		if o.Controller != nil && *o.Controller && o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

// hasRequiredNodeAffinity reports whether the pod has required node
// affinity terms: without them (and without a node selector), every node
// is admitted and the matcher need not run.
func hasRequiredNodeAffinity(spec *corev1.PodSpec) bool {
	a := spec.Affinity
	return a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil
}
