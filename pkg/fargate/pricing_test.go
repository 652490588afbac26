package fargate

import (
	"math"
	"testing"
)

// TestUnrequested: the share of a pod's price that pays for capacity it did
// not request, and the pods it is 0 for.
func TestUnrequested(t *testing.T) {
	price, err := PriceIn(DefaultRegion)
	if err != nil {
		t.Fatal(err)
	}
	size := func(milliCPU, memoryMiB int64) Size { return Size{MilliCPU: milliCPU, MemoryMiB: memoryMiB} }
	for _, tc := range []struct {
		name string
		s    Sizing
		want float64
	}{
		// 1 vCPU and 8 GB (+256 MB) go to 2 vCPU 9 GB: what is paid for
		// and not requested is 1 vCPU and 768 MB.
		{"rounded up", Sizing{RequestedMilliCPU: 1000, RequestedMemoryMiB: 8192, Provisioned: size(2000, 9216), Fits: true},
			1 - (1*price.VCPUHour+8.25*price.GBHour)/(2*price.VCPUHour+9*price.GBHour)},
		// Near misses: requests that fill the size, the smallest size,
		// nothing requested, a pod that fits no size.
		{"exact fit", Sizing{RequestedMilliCPU: 2000, RequestedMemoryMiB: 9216 - OverheadMemoryMiB, Provisioned: size(2000, 9216), Fits: true}, 0},
		{"smallest size", Sizing{RequestedMilliCPU: 10, RequestedMemoryMiB: 10, Provisioned: Sizes[0], Fits: true}, 0},
		{"nothing requested", Sizing{Provisioned: Sizes[0], Fits: true, NothingRequested: true}, 0},
		{"fits no size", Sizing{RequestedMilliCPU: 32000, RequestedMemoryMiB: 1 << 20}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := price.Unrequested(tc.s); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("Unrequested = %.4f, want %.4f", got, tc.want)
			}
		})
	}
}
