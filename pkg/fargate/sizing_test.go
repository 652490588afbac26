package fargate

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func container(name, cpu, mem string) corev1.Container {
	c := corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}
	if cpu != "" {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return c
}

func TestSizes(t *testing.T) {
	if got := len(Sizes); got != 3+4+7+13+23+12+12 {
		t.Errorf("%d sizes, want 74", got)
	}
	for i := 1; i < len(Sizes); i++ {
		a, b := Sizes[i-1], Sizes[i]
		if a.MilliCPU > b.MilliCPU || (a.MilliCPU == b.MilliCPU && a.MemoryMiB >= b.MemoryMiB) {
			t.Errorf("sizes out of order at %d: %v, %v", i, a, b)
		}
	}
	if _, err := parseSizes([]byte("- vcpu: 1\n")); err == nil {
		t.Error("a row without memory must be refused")
	}
}

func TestSizePod(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	sidecar := container("proxy", "500m", "512Mi")
	sidecar.RestartPolicy = &always
	limitsOnly := corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}}}
	ephemeral := container("app", "1", "1Gi")
	ephemeral.Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("50Gi")
	tooMuchDisk := container("app", "1", "1Gi")
	tooMuchDisk.Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("200Gi")

	for _, tc := range []struct {
		name        string
		spec        corev1.PodSpec
		want        string
		wantEph     int64
		wantFits    bool
		wantNothing bool
	}{
		{"nothing requested", corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}, "0.25vCPU 0.5GB", 20, true, true},
		{"user guide example: 1 vCPU 8 GB", corev1.PodSpec{Containers: []corev1.Container{container("a", "1", "8Gi")}}, "2vCPU 9GB", 20, true, false},
		{"256 MB overhead crosses a boundary", corev1.PodSpec{Containers: []corev1.Container{container("a", "250m", "1792Mi")}}, "0.25vCPU 2GB", 20, true, false},
		{"just over", corev1.PodSpec{Containers: []corev1.Container{container("a", "250m", "1793Mi")}}, "0.5vCPU 3GB", 20, true, false},
		{"sum of containers", corev1.PodSpec{Containers: []corev1.Container{container("a", "500m", "1Gi"), container("b", "600m", "1Gi")}}, "2vCPU 4GB", 20, true, false},
		{"init container larger than the sum", corev1.PodSpec{
			InitContainers: []corev1.Container{container("init", "2", "512Mi")},
			Containers:     []corev1.Container{container("a", "250m", "256Mi")}}, "2vCPU 4GB", 20, true, false},
		{"init max per resource", corev1.PodSpec{
			InitContainers: []corev1.Container{container("init", "100m", "3Gi")},
			Containers:     []corev1.Container{container("a", "1", "256Mi")}}, "1vCPU 4GB", 20, true, false},
		{"native sidecar runs alongside", corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar},
			Containers:     []corev1.Container{container("a", "500m", "512Mi")}}, "1vCPU 2GB", 20, true, false},
		{"limits stand in for requests", corev1.PodSpec{Containers: []corev1.Container{limitsOnly}}, "1vCPU 3GB", 20, true, false},
		{"limits stand in for the second container's requests", corev1.PodSpec{Containers: []corev1.Container{container("a", "500m", "1Gi"), limitsOnly}}, "2vCPU 4GB", 20, true, false},
		{"limits stand in for the first container's requests", corev1.PodSpec{Containers: []corev1.Container{limitsOnly, container("a", "500m", "1Gi")}}, "2vCPU 4GB", 20, true, false},
		{"largest size", corev1.PodSpec{Containers: []corev1.Container{container("a", "16", "119Gi")}}, "16vCPU 120GB", 20, true, false},
		{"too large", corev1.PodSpec{Containers: []corev1.Container{container("a", "16", "120Gi")}}, "", 20, false, false},
		{"too many CPUs", corev1.PodSpec{Containers: []corev1.Container{container("a", "17", "1Gi")}}, "", 20, false, false},
		{"ephemeral storage", corev1.PodSpec{Containers: []corev1.Container{ephemeral}}, "1vCPU 2GB", 60, true, false},
		{"too much ephemeral storage", corev1.PodSpec{Containers: []corev1.Container{tooMuchDisk}}, "1vCPU 2GB", 225, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := SizePod(&tc.spec)
			got := ""
			if s.Provisioned != (Size{}) {
				got = s.Provisioned.String()
			}
			if got != tc.want || s.EphemeralGiB != tc.wantEph || s.Fits != tc.wantFits || s.NothingRequested != tc.wantNothing {
				t.Errorf("SizePod = %q eph %d fits %v nothing %v, want %q eph %d fits %v nothing %v",
					got, s.EphemeralGiB, s.Fits, s.NothingRequested, tc.want, tc.wantEph, tc.wantFits, tc.wantNothing)
			}
		})
	}
}

func TestSizePodDoesNotChangeSpec(t *testing.T) {
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	spec := corev1.PodSpec{
		Containers: []corev1.Container{
			{Name: "a", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
			{Name: "b", Resources: corev1.ResourceRequirements{Limits: limits, Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}},
		},
		Resources: &corev1.ResourceRequirements{Limits: limits},
	}
	// Pod-level requests and an overhead in the decimal form of a
	// quantity, which Add changes in place.
	withOverhead := spec.DeepCopy()
	withOverhead.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1.5Gi")}}
	withOverhead.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("250Mi")}
	// Containers whose requests need nothing filled in: the lists of
	// containers are the spec's own.
	requested := &corev1.PodSpec{Containers: []corev1.Container{container("a", "1.5", "1.5Gi"), container("b", "0.5", "512Mi")},
		Overhead: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("250Mi")}}
	// The same without overhead, one quantity in the decimal form: the
	// containers' requests summed without PodRequests (requests).
	summed := &corev1.PodSpec{Containers: []corev1.Container{container("a", "1.5", "1.5Gi"), container("b", "0.5", "1.23456789012345678901Gi")}}
	for _, spec := range []*corev1.PodSpec{&spec, withOverhead, requested, summed} {
		before := spec.DeepCopy()
		first := SizePod(spec)
		if again := SizePod(spec); again != first {
			t.Errorf("sized twice: %+v, then %+v", first, again)
		}
		if diff := cmp.Diff(before, spec); diff != "" {
			t.Errorf("SizePod changed the spec (-before +after):\n%s", diff)
		}
	}
}

func TestPrices(t *testing.T) {
	p, err := PriceIn("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	// 0.25 vCPU × $0.04048 + 0.5 GB × $0.004445 = $0.0123425 an hour; × 730 h × 3 replicas.
	small := Size{MilliCPU: 250, MemoryMiB: 512}
	if got, want := p.Monthly(small, 20, 3), 0.0123425*730*3; math.Abs(got-want) > 1e-9 {
		t.Errorf("Monthly = %v, want %v", got, want)
	}
	// Ephemeral storage is billed above 20 GB: 30 extra GB × $0.000111.
	if got, want := p.Hourly(small, 50)-p.Hourly(small, 20), 30*0.000111; math.Abs(got-want) > 1e-12 {
		t.Errorf("ephemeral price = %v, want %v", got, want)
	}
	if _, err := PriceIn("mars-1"); err == nil {
		t.Error("unknown region must be an error")
	}
	for _, r := range Regions() {
		p, _ := PriceIn(r)
		if p.VCPUHour <= 0 || p.GBHour <= 0 {
			t.Errorf("%s: price not set: %+v", r, p)
		}
	}
}

func TestSizePodHugeRequests(t *testing.T) {
	for _, mem := range []string{"8Ei", "1e19", "2Pi"} {
		s := SizePod(&corev1.PodSpec{Containers: []corev1.Container{container("a", "1", mem)}})
		if s.Fits || s.RequestedMemoryMiB < 0 {
			t.Errorf("memory %s: fits %v, requested %d MiB; want no fit and no overflow", mem, s.Fits, s.RequestedMemoryMiB)
		}
	}
	s := SizePod(&corev1.PodSpec{Containers: []corev1.Container{container("a", "1e19", "1Gi")}})
	if s.Fits || s.RequestedMilliCPU < 0 {
		t.Errorf("cpu 1e19: fits %v, requested %d m", s.Fits, s.RequestedMilliCPU)
	}
}

func TestParseSize(t *testing.T) {
	for _, s := range Sizes {
		got, err := ParseSize(s.String())
		if err != nil || got != s {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
	}
	for _, bad := range []string{"", "1vCPU", "1 2GB", "1vCPU 2", "-1vCPU 2GB", "xvCPU 2GB", "1vCPU 2GB extra", "0vCPU 0GB", "NaNvCPU NaNGB", "InfvCPU 1GB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) succeeded", bad)
		}
	}
}

// TestSizePodExtremeExponents: quantities whose exponent is far from zero
// size at once, as what they stand for (their exact arithmetic would take
// minutes; check's decoding refuses them, but SizePod takes any pod).
func TestSizePodExtremeExponents(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cpu, mem *resource.Quantity
		fits     bool
	}{
		{"a zero CPU of a huge exponent", resource.NewScaledQuantity(0, 777777771), resource.NewScaledQuantity(1, 9), true},
		{"a zero CPU of a tiny exponent", resource.NewScaledQuantity(0, -999999999), resource.NewScaledQuantity(1, 9), true},
		{"a tiny CPU", resource.NewScaledQuantity(1, -777777771), resource.NewScaledQuantity(1, 9), true},
		{"a huge memory", resource.NewQuantity(1, resource.DecimalSI), resource.NewScaledQuantity(1, 777777771), false},
		{"a huge CPU", resource.NewScaledQuantity(1, 999999999), resource.NewScaledQuantity(1, 9), false},
	} {
		spec := &corev1.PodSpec{Containers: []corev1.Container{
			{Name: "a", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: *tc.cpu, corev1.ResourceMemory: *tc.mem}}},
			{Name: "b", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}},
		}}
		done := make(chan Sizing, 1)
		go func() { done <- SizePod(spec) }()
		select {
		case s := <-done:
			if s.Fits != tc.fits {
				t.Errorf("%s: fits %v, want %v (%+v)", tc.name, s.Fits, tc.fits, s)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: SizePod still runs after 10 s", tc.name)
		}
	}
}
