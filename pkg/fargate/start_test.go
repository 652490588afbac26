package fargate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// resources returns requirements from "cpu=100m,memory=64Mi" lists.
func resources(requests, limits string) corev1.ResourceRequirements {
	list := func(s string) corev1.ResourceList {
		if s == "" {
			return nil
		}
		l := corev1.ResourceList{}
		for kv := range strings.SplitSeq(s, ",") {
			k, v, _ := strings.Cut(kv, "=")
			l[corev1.ResourceName(k)] = resource.MustParse(v)
		}
		return l
	}
	return corev1.ResourceRequirements{Requests: list(requests), Limits: list(limits)}
}

func TestStartFailures(t *testing.T) {
	quarter := Size{MilliCPU: 250, MemoryMiB: 512}
	memoryFails := Settings{FailMemoryLimitAboveSize: true}
	tests := []struct {
		name     string
		spec     corev1.PodSpec
		size     Size
		settings Settings
		want     []string // Field: Detail
		quota    string   // in the first failure's Error
	}{
		{
			name:  "the Flux shape: a CPU limit of 1 on 0.25 vCPU",
			spec:  corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Resources: resources("cpu=100m,memory=64Mi", "cpu=1,memory=1Gi")}}},
			size:  quarter,
			want:  []string{`containers[0].resources.limits.cpu: container "manager" has a CPU limit of 1, above the 0.25 vCPU Fargate provisions for the pod (0.25vCPU 0.5GB), which the kernel refuses`},
			quota: `failed to write "100000": write /sys/fs/cgroup/cpu,cpuacct/kubepods/burstable/pod/manager/cpu.cfs_quota_us: invalid argument: unknown`,
		},
		{
			name:  "300m: the quota of containers-roadmap#1864",
			spec:  corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Resources: resources("cpu=200m", "cpu=300m")}}},
			size:  quarter,
			want:  []string{`containers[0].resources.limits.cpu: container "operator" has a CPU limit of 300m, above the 0.25 vCPU Fargate provisions for the pod (0.25vCPU 0.5GB), which the kernel refuses`},
			quota: `failed to write "30000"`,
		},
		{
			name: "init containers first, the memory limit with the setting",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "wait", Resources: resources("cpu=100m", "cpu=500m")}},
				Containers:     []corev1.Container{{Name: "app", Resources: resources("memory=64Mi", "memory=1Gi")}},
			},
			size:     quarter,
			settings: memoryFails,
			want: []string{
				`initContainers[0].resources.limits.cpu: container "wait" has a CPU limit of 500m, above the 0.25 vCPU Fargate provisions for the pod (0.25vCPU 0.5GB), which the kernel refuses`,
				`containers[0].resources.limits.memory: container "app" has a memory limit of 1Gi, above the 0.5 GB Fargate provisions for the pod (0.25vCPU 0.5GB), which memoryLimitAboveSizeFails takes to stop it`,
			},
			quota: `failed to write "50000"`,
		},
		{
			name: "a controller that asks IMDS exits, unless the runtime refuses it first; in the order the kubelet starts containers",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "wait", Resources: resources("cpu=100m", "cpu=500m")}},
				Containers: []corev1.Container{
					{Name: "controller", Image: "public.ecr.aws/appmesh/appmesh-controller:v1.12.3", Resources: resources("cpu=100m", "cpu=1")},
					{Name: "mesh", Image: "public.ecr.aws/appmesh/appmesh-controller:v1.12.3"},
				},
			},
			size: quarter,
			want: []string{
				`initContainers[0].resources.limits.cpu: container "wait" has a CPU limit of 500m, above the 0.25 vCPU Fargate provisions for the pod (0.25vCPU 0.5GB), which the kernel refuses`,
				`containers[0].resources.limits.cpu: container "controller" has a CPU limit of 1, above the 0.25 vCPU Fargate provisions for the pod (0.25vCPU 0.5GB), which the kernel refuses`,
				`containers[1].image: container "mesh" (AWS App Mesh controller) asks the instance metadata service for the region (--aws-region), and Fargate has none`,
			},
			quota: `failed to write "50000"`,
		},
		{
			name: "near miss: the memory limit without the setting",
			spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: resources("memory=64Mi", "memory=1Gi")}}},
			size: quarter,
		},
		{
			name: "near miss: limits at the size, and no limits",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "a", Resources: resources("cpu=100m", "cpu=250m,memory=512Mi")},
				{Name: "b", Resources: resources("cpu=100m", "")},
			}},
			size:     quarter,
			settings: memoryFails,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := StartFailures(&tt.spec, tt.size, tt.settings)
			var got []string
			for _, f := range fs {
				got = append(got, f.Field+": "+f.Detail)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("start failures (-want +got):\n%s", diff)
			}
			if tt.quota != "" && !strings.Contains(fs[0].Error, tt.quota) {
				t.Errorf("error %q, want it to say %q", fs[0].Error, tt.quota)
			}
			for _, f := range fs {
				limit := f.Kind == StartLimit
				if limit != (f.Reason == "StartError" && f.ExitCode == 128 && f.Error != "") || !limit && (f.Kind != StartMetadata || f.Reason != "Error" || f.ExitCode != 1 || f.Error != "") {
					t.Errorf("%s: kind %s ends %s (%d) with %q", f.Container, f.Kind, f.Reason, f.ExitCode, f.Error)
				}
			}
		})
	}
}

func TestLimitsDiffer(t *testing.T) {
	spec := corev1.PodSpec{Containers: []corev1.Container{
		{Name: "equal", Resources: resources("cpu=500m,memory=1Gi", "cpu=0.5,memory=1024Mi")},
		{Name: "limit-only", Resources: resources("", "cpu=1,memory=1Gi")},
		{Name: "request-only", Resources: resources("cpu=1,memory=1Gi", "")},
		{Name: "differ", Resources: resources("cpu=100m,memory=64Mi", "cpu=200m,memory=8Gi")},
	}}
	var got []string
	for _, d := range LimitsDiffer(&spec, Size{MilliCPU: 2000, MemoryMiB: 4096}) {
		got = append(got, strings.Join([]string{d.Field, d.Container, string(d.Resource), d.Request, d.Limit}, " ")+map[bool]string{true: " above"}[d.AboveSize])
	}
	want := []string{
		"containers[3].resources.limits.cpu differ cpu 100m 200m",
		"containers[3].resources.limits.memory differ memory 64Mi 8Gi above",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("limits that differ (-want +got):\n%s", diff)
	}
}
