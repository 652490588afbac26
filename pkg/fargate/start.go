package fargate

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// StartFailure is a container that Fargate admits and runs on a node, but
// that does not get going: the runtime cannot start it, or it exits at
// once; the kubelet retries it in CrashLoopBackOff (fargate-facts, "Limits
// beyond the provisioned size", "No instance metadata").
type StartFailure struct {
	Kind      StartFailureKind
	Container string
	Init      bool
	// Field is the path inside the pod spec of what stops it: the limit
	// ("containers[0].resources.limits.cpu"), or the image of a controller
	// that needs IMDS.
	Field string
	// Detail says what the pod does and why that stops it, for a person.
	Detail string
	// ExitCode and Reason are how the container's last run ended, as the
	// kubelet reports it: 128 and StartError when the runtime cannot start
	// it, 1 and Error when it exits.
	ExitCode int32
	Reason   string
	// Error is what the kubelet reports of a start the runtime refused
	// (the container's lastState.terminated.message), worded as runc words
	// it on Fargate's cgroup v1 nodes (containers-roadmap#1864,
	// flux2#3138); the cgroup path is a stand-in. "" for a container that
	// exits: its message is its own.
	Error string
}

// StartFailureKind is why a container does not get going.
type StartFailureKind string

// The kinds of start failures.
const (
	// StartLimit: a limit above the pod's size, which the kernel refuses.
	StartLimit StartFailureKind = "limit"
	// StartMetadata: a controller that asks IMDS for what it is not told
	// (MetadataUses).
	StartMetadata StartFailureKind = "metadata"
)

// cfsPeriodMicros is the CFS period the kubelet sets, against which a CPU
// limit is written as a quota.
const cfsPeriodMicros = 100000

// StartFailures returns the containers of a pod with spec that do not get
// going on a Fargate node of size: those LimitFailures names, and the
// controllers that ask IMDS for what they are not told (MetadataUses),
// which exit, if they start. Init containers come first, as the kubelet
// starts them.
func StartFailures(spec *corev1.PodSpec, size Size, s Settings) []StartFailure {
	var out []StartFailure
	for _, c := range containers(spec) {
		refused := limitFailures(c, size, s)
		out = append(out, refused...)
		// A container the runtime cannot start never gets to ask IMDS.
		if u := clientUse(c, s); u != nil && len(refused) == 0 {
			out = append(out, StartFailure{Kind: StartMetadata, Container: c.Name, Init: c.init, Field: u.Field,
				Detail: u.Detail(), ExitCode: 1, Reason: "Error"})
		}
	}
	return out
}

// LimitFailures returns the start failures of kind StartLimit alone: the
// containers whose CPU limit is above the node's vCPU, which the kernel
// refuses as a quota above the pod's (cpu.cfs_quota_us: invalid argument);
// with s.FailMemoryLimitAboveSize, also those whose memory limit is above
// the node's memory (unconfirmed). check's rules on limits call it rather
// than StartFailures, which also reads every image.
func LimitFailures(spec *corev1.PodSpec, size Size, s Settings) []StartFailure {
	var out []StartFailure
	for _, c := range containers(spec) {
		out = append(out, limitFailures(c, size, s)...)
	}
	return out
}

// limitFailures returns a container's limits that stop it at size.
func limitFailures(c specContainer, size Size, s Settings) []StartFailure {
	var out []StartFailure
	if q, ok := c.Resources.Limits[corev1.ResourceCPU]; ok && milliCPU(&q) > size.MilliCPU {
		quota := min(milliCPU(&q), tooLarge) * cfsPeriodMicros / 1000
		out = append(out, StartFailure{
			Kind: StartLimit, Container: c.Name, Init: c.init, Field: c.field("resources.limits.cpu"), ExitCode: 128, Reason: "StartError",
			Detail: fmt.Sprintf("container %q has a CPU limit of %s, above the %g vCPU Fargate provisions for the pod (%s), which the kernel refuses",
				c.Name, q.String(), size.VCPU(), size),
			Error: runcError(fmt.Sprint(quota), c.Name, "cpu,cpuacct", "cpu.cfs_quota_us"),
		})
	}
	if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && s.FailMemoryLimitAboveSize && ceilMiB(&q) > size.MemoryMiB {
		out = append(out, StartFailure{
			Kind: StartLimit, Container: c.Name, Init: c.init, Field: c.field("resources.limits.memory"), ExitCode: 128, Reason: "StartError",
			Detail: fmt.Sprintf("container %q has a memory limit of %s, above the %g GB Fargate provisions for the pod (%s), which memoryLimitAboveSizeFails takes to stop it",
				c.Name, q.String(), size.MemoryGB(), size),
			Error: runcError(fmt.Sprint(q.Value()), c.Name, "memory", "memory.limit_in_bytes"),
		})
	}
	return out
}

// runcError words a failed write of value to a cgroup v1 file as the
// kubelet reports it, through containerd, from runc.
func runcError(value, container, controller, file string) string {
	return "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: " +
		"unable to start container process: error during container init: error setting cgroup config for procHooks process: " +
		fmt.Sprintf("failed to write %q: write /sys/fs/cgroup/%s/kubepods/burstable/pod/%s/%s: invalid argument: unknown",
			value, controller, container, file)
}

// LimitsDiffer returns the CPU and memory limits of the containers of spec
// that are set and differ from their requests, on a pod of size. The EKS
// user guide asks for requests equal to limits on Fargate ("Fargate pod
// configuration"): Fargate sizes the pod from its requests, so a higher
// limit is capacity the pod may not have.
func LimitsDiffer(spec *corev1.PodSpec, size Size) []LimitDiff {
	var out []LimitDiff
	for _, c := range containers(spec) {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			limit, ok := c.Resources.Limits[r]
			if !ok {
				continue
			}
			request, ok := c.Resources.Requests[r]
			if !ok || request.Cmp(limit) == 0 {
				continue // a missing request defaults to the limit
			}
			above := milliCPU(&limit) > size.MilliCPU
			if r == corev1.ResourceMemory {
				above = ceilMiB(&limit) > size.MemoryMiB
			}
			out = append(out, LimitDiff{Container: c.Name, Field: c.field("resources.limits." + string(r)),
				Resource: r, Request: request.String(), Limit: limit.String(), AboveSize: above})
		}
	}
	return out
}

// LimitDiff is a container limit that differs from its request.
type LimitDiff struct {
	Container string
	Field     string
	Resource  corev1.ResourceName
	// Request and Limit are the quantities as written.
	Request, Limit string
	// AboveSize is true when the limit is above the pod's whole size.
	AboveSize bool
}
