package fargate

import (
	_ "embed"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/yaml"
)

// OverheadMemoryMiB is the memory Fargate adds to every pod for kubelet,
// kube-proxy and containerd.
const OverheadMemoryMiB = 256

// Ephemeral storage: every pod gets DefaultEphemeralGiB; requests above that
// are provisioned with 10% plus 5 GiB of headroom, up to MaxEphemeralGiB.
const (
	DefaultEphemeralGiB = 20
	MaxEphemeralGiB     = 175
)

// Size is a Fargate pod size.
type Size struct {
	MilliCPU  int64 // 250 for 0.25 vCPU
	MemoryMiB int64 // 512 for 0.5 GB
}

// VCPU returns the size's vCPU as a number.
func (s Size) VCPU() float64 { return float64(s.MilliCPU) / 1000 }

// MemoryGB returns the size's memory in Fargate's GB (GiB).
func (s Size) MemoryGB() float64 { return float64(s.MemoryMiB) / 1024 }

// String renders the size the way EKS writes the CapacityProvisioned
// annotation: "0.25vCPU 0.5GB".
func (s Size) String() string {
	return strconv.FormatFloat(s.VCPU(), 'f', -1, 64) + "vCPU " + strconv.FormatFloat(s.MemoryGB(), 'f', -1, 64) + "GB"
}

// ParseSize reads a size as String writes it, the CapacityProvisioned
// annotation of a Fargate pod: "0.25vCPU 0.5GB".
func ParseSize(s string) (Size, error) {
	cpu, mem, ok := strings.Cut(strings.TrimSpace(s), " ")
	vcpu, err1 := strconv.ParseFloat(strings.TrimSuffix(cpu, "vCPU"), 64)
	gb, err2 := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(mem), "GB"), 64)
	if !ok || !strings.HasSuffix(cpu, "vCPU") || !strings.HasSuffix(mem, "GB") || err1 != nil || err2 != nil ||
		!(vcpu > 0 && vcpu <= 1024 && gb > 0 && gb <= 1<<20) { // NaN fails every comparison
		return Size{}, fmt.Errorf("%q is not a Fargate size such as \"0.25vCPU 0.5GB\"", s)
	}
	return Size{MilliCPU: int64(math.Round(vcpu * 1000)), MemoryMiB: int64(math.Round(gb * 1024))}, nil
}

//go:embed data/sizes.yaml
var sizesYAML []byte

// Sizes lists every valid Fargate size, by vCPU and then memory.
var Sizes = mustSizes(sizesYAML)

type sizeRow struct {
	VCPU     float64   `json:"vcpu"`
	MemoryGB []float64 `json:"memoryGB"`
	Min      float64   `json:"min"`
	Max      float64   `json:"max"`
	Step     float64   `json:"step"`
}

func parseSizes(data []byte) ([]Size, error) {
	var rows []sizeRow
	if err := yaml.UnmarshalStrict(data, &rows); err != nil {
		return nil, fmt.Errorf("parsing the size table: %w", err)
	}
	var out []Size
	for _, r := range rows {
		mem := r.MemoryGB
		if r.Step > 0 {
			for m := r.Min; m <= r.Max; m += r.Step {
				mem = append(mem, m)
			}
		}
		if len(mem) == 0 {
			return nil, fmt.Errorf("size table: %g vCPU has no memory sizes", r.VCPU)
		}
		for _, m := range mem {
			out = append(out, Size{MilliCPU: int64(math.Round(r.VCPU * 1000)), MemoryMiB: int64(math.Round(m * 1024))})
		}
	}
	return out, nil
}

func mustSizes(data []byte) []Size {
	s, err := parseSizes(data)
	if err != nil {
		panic(err) // the embedded table is checked by tests; a broken build must not ship
	}
	return s
}

// Sizing is how Fargate sizes one pod.
type Sizing struct {
	// Requested is what the pod asks for: the larger of the biggest init
	// container and the sum of long-running containers, per resource, with
	// limits standing in for missing requests.
	RequestedMilliCPU  int64
	RequestedMemoryMiB int64
	// Provisioned is the size Fargate runs and bills (CapacityProvisioned).
	// Zero when the pod does not fit any size.
	Provisioned Size
	// EphemeralGiB is the provisioned ephemeral storage.
	EphemeralGiB int64
	// Fits is false when the pod needs more than the largest size (16 vCPU,
	// 120 GB) or more than 175 GiB of ephemeral storage.
	Fits bool
	// NothingRequested is true when no container requests CPU or memory.
	NothingRequested bool
}

// SizePod returns the Fargate size of a pod with the given spec.
func SizePod(spec *corev1.PodSpec) Sizing {
	cpuRequest, memRequest, eph := requests(spec)
	cpu, mem := milliCPU(&cpuRequest), ceilMiB(&memRequest)

	s := Sizing{RequestedMilliCPU: cpu, RequestedMemoryMiB: mem, NothingRequested: cpu == 0 && mem == 0}
	s.EphemeralGiB = ephemeralGiB(eph)
	size, ok := RoundUp(cpu, mem+OverheadMemoryMiB)
	s.Provisioned = size
	s.Fits = ok && s.EphemeralGiB <= MaxEphemeralGiB
	return s
}

// RoundUp returns the smallest Fargate size with at least milliCPU and
// memoryMiB, and false when none is large enough.
func RoundUp(milliCPU, memoryMiB int64) (Size, bool) {
	for _, s := range Sizes {
		if s.MilliCPU >= milliCPU && s.MemoryMiB >= memoryMiB {
			return s, true
		}
	}
	return Size{}, false
}

// tooLarge stands for requests beyond any Fargate size (more than a PiB of
// memory or a million CPUs), whose exact value could overflow an int64.
const tooLarge = 1 << 40

var (
	onePiB       = resource.MustParse("1Pi")
	millionCores = resource.MustParse("1M")
)

func ceilMiB(q *resource.Quantity) int64 {
	if q.Cmp(onePiB) > 0 {
		return tooLarge
	}
	const mib = 1 << 20
	b := q.Value() // rounds up to whole bytes
	return (b + mib - 1) / mib
}

func milliCPU(q *resource.Quantity) int64 {
	if q.Cmp(millionCores) > 0 {
		return tooLarge
	}
	return q.MilliValue()
}

func ephemeralGiB(q resource.Quantity) int64 {
	if q.IsZero() {
		return DefaultEphemeralGiB
	}
	// requests + 10% + 5 GiB, rounded up to whole GiB, in integer MiB so that
	// 50 GiB gives exactly 60 GiB.
	mib := ceilMiB(&q)
	total := (mib*11+9)/10 + 5*1024
	return max((total+1023)/1024, DefaultEphemeralGiB)
}

// requests returns a pod's requests of CPU, memory and ephemeral storage:
// podRequests. A pod of long-running containers only, without overhead or
// resources of its own, requests the sum of its containers' requests: that
// sum is made here, a quantity at a time, rather than of the resource lists
// PodRequests builds, which were a tenth of what a check allocated
// (FuzzRequests holds the two equal).
func requests(spec *corev1.PodSpec) (cpu, memory, ephemeral resource.Quantity) {
	if len(spec.InitContainers) > 0 || len(spec.Overhead) > 0 || spec.Resources != nil {
		return podRequests(spec)
	}
	add := func(sum *resource.Quantity, r *corev1.ResourceRequirements, name corev1.ResourceName) {
		q, ok := r.Requests[name]
		if !ok {
			q, ok = r.Limits[name] // as withRequests fills it in
		}
		if ok {
			q, _ = clamp(q)
			sum.Add(q)
		}
	}
	for i := range spec.Containers {
		r := &spec.Containers[i].Resources
		add(&cpu, r, corev1.ResourceCPU)
		add(&memory, r, corev1.ResourceMemory)
		add(&ephemeral, r, corev1.ResourceEphemeralStorage)
	}
	return cpu, memory, ephemeral
}

// podRequests returns what resourcehelper.PodRequests computes of
// resourcesOf(spec).
func podRequests(spec *corev1.PodSpec) (cpu, memory, ephemeral resource.Quantity) {
	pod := &corev1.Pod{Spec: resourcesOf(spec)}
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	return *reqs.Cpu(), *reqs.Memory(), *reqs.StorageEphemeral()
}

// resourcesOf returns of a pod spec what a pod's requests are computed
// from: each container's resources (and an init container's restart policy,
// which makes it a sidecar), the pod's resources and overhead; with missing
// requests set to the limits, as the Kubernetes API server does when it
// stores a pod. It shares the spec's resource lists except where it fills
// one in, and its lists of containers when it fills none in:
// resourcehelper.PodRequests only reads the containers'.
func resourcesOf(spec *corev1.PodSpec) corev1.PodSpec {
	var out corev1.PodSpec
	out.Overhead, _ = bounded(spec.Overhead)
	if spec.Resources != nil {
		r, _ := withRequests(*spec.Resources)
		// PodRequests adds the overhead to the pod's requests in place:
		// they must not be the spec's.
		r.Requests = r.Requests.DeepCopy()
		out.Resources = &r
	}
	// The containers are copied (their resources and restart policy only)
	// from the first whose resources change: a Container is half a
	// kilobyte, and most lists need no change.
	copyAll := func(list []corev1.Container) []corev1.Container {
		var cs []corev1.Container
		for i := range list {
			r, changed := withRequests(list[i].Resources)
			if changed && cs == nil {
				cs = make([]corev1.Container, len(list))
				for j := range i {
					cs[j] = corev1.Container{Resources: list[j].Resources, RestartPolicy: list[j].RestartPolicy}
				}
			}
			if cs != nil {
				cs[i] = corev1.Container{Resources: r, RestartPolicy: list[i].RestartPolicy}
			}
		}
		if cs == nil {
			return list
		}
		return cs
	}
	out.InitContainers, out.Containers = copyAll(spec.InitContainers), copyAll(spec.Containers)
	return out
}

// withRequests returns r with a request for every resource it limits: the
// limit where it requests none, and whether it differs from r. The
// requests are a new list only when one was missing.
func withRequests(r corev1.ResourceRequirements) (corev1.ResourceRequirements, bool) {
	var requests, limits bool
	r.Requests, requests = bounded(r.Requests)
	r.Limits, limits = bounded(r.Limits)
	for name := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			filled := maps.Clone(r.Limits)
			maps.Copy(filled, r.Requests)
			r.Requests, requests = filled, true
			break
		}
	}
	return r, requests || limits
}

// Quantities whose exponent is far from zero, such as 1E999999999 (which
// ParseQuantity accepts), would take the arithmetic of resource.Quantity
// minutes: bounded replaces them by the quantities below, far beyond or below
// every Fargate size, before sizing adds or compares them.
var (
	hugeQuantity = resource.NewScaledQuantity(1, 18)
	tinyQuantity = resource.NewScaledQuantity(1, -18)
)

// bounded returns l, or a copy of it in which every quantity larger than
// hugeQuantity is hugeQuantity, every one smaller than tinyQuantity (but not
// zero) is tinyQuantity, each with its sign, and every zero is a plain zero;
// and whether it is a copy.
func bounded(l corev1.ResourceList) (corev1.ResourceList, bool) {
	var out corev1.ResourceList
	for name, q := range l {
		if c, changed := clamp(q); changed {
			if out == nil {
				out = maps.Clone(l)
			}
			out[name] = c
		}
	}
	if out == nil {
		return l, false
	}
	return out, true
}

// clamp returns q bounded as bounded bounds a list's quantities, and
// whether that changed it.
func clamp(q resource.Quantity) (resource.Quantity, bool) {
	var c resource.Quantity
	switch f := math.Abs(q.AsApproximateFloat64()); { // cheap: a float power of ten
	case q.IsZero(): // its exponent may be any
		return resource.Quantity{Format: q.Format}, true
	case f > 1e18:
		c = hugeQuantity.DeepCopy()
	case f < 1e-18:
		c = tinyQuantity.DeepCopy()
	default:
		return q, false
	}
	if q.Sign() < 0 {
		c.Neg()
	}
	return c, true
}

// Requested renders what the pod requests, before the Fargate overhead:
// "1.1 vCPU and 2.25 GB".
func (s Sizing) Requested() string {
	return strconv.FormatFloat(float64(s.RequestedMilliCPU)/1000, 'f', -1, 64) + " vCPU and " +
		strconv.FormatFloat(float64(s.RequestedMemoryMiB)/1024, 'f', 2, 64) + " GB"
}

// EmptyDirMiB returns the sum of the sizeLimits of a pod's emptyDir
// volumes on disk (not medium Memory, which counts as memory): what they
// may hold of the pod's ephemeral storage before the kubelet evicts the
// pod. An emptyDir without a sizeLimit is not counted.
func EmptyDirMiB(spec *corev1.PodSpec) int64 {
	var mib int64
	for _, v := range spec.Volumes {
		if e := v.EmptyDir; e != nil && e.Medium != corev1.StorageMediumMemory && e.SizeLimit != nil {
			mib += min(ceilMiB(e.SizeLimit), tooLarge)
		}
	}
	return mib
}
