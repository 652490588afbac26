package ipam

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

// TestAddresses: a /28 gives eleven addresses (.4 to .14), each once, then
// none; a released address is given again; an address marked by an
// earlier run is not given, and counts in the subnet that holds it.
func TestPool(t *testing.T) {
	a, err := New(map[string]string{"subnet-a": "10.0.1.0/28", "subnet-b": "10.0.2.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	if !a.Mark(netip.MustParseAddr("10.0.1.7")) || a.Mark(netip.MustParseAddr("10.9.9.9")) || a.Mark(netip.MustParseAddr("10.0.1.15")) || a.Mark(netip.MustParseAddr("10.0.1.3")) {
		t.Fatal("Mark: an address of subnet-a not marked, or one outside every subnet or reserved by AWS marked")
	}
	if n, ok := a.Free("subnet-a"); n != 10 || !ok {
		t.Errorf("Free(subnet-a) = %d, %v; want 10", n, ok)
	}
	if n, _ := a.Free("subnet-b"); n != 251 {
		t.Errorf("Free(subnet-b) = %d, want 251 (a /24 less AWS's five)", n)
	}
	got := map[netip.Addr]bool{}
	for range 10 {
		ip, err := a.Take("subnet-a", r)
		if err != nil {
			t.Fatal(err)
		}
		if got[ip] || ip == netip.MustParseAddr("10.0.1.7") || ip.Compare(netip.MustParseAddr("10.0.1.4")) < 0 || ip.Compare(netip.MustParseAddr("10.0.1.14")) > 0 {
			t.Errorf("address %s: given twice, marked, or reserved", ip)
		}
		got[ip] = true
	}
	if _, err := a.Take("subnet-a", r); err == nil {
		t.Error("a full subnet gave an address")
	}
	if subnet := a.Release(netip.MustParseAddr("10.0.1.9")); subnet != "subnet-a" {
		t.Errorf("Release = %q, want subnet-a", subnet)
	}
	if a.Release(netip.MustParseAddr("10.0.1.9")) != "" {
		t.Error("an address released twice")
	}
	if ip, err := a.Take("subnet-a", r); err != nil || ip != netip.MustParseAddr("10.0.1.9") {
		t.Errorf("Take = %s, %v; want the released 10.0.1.9", ip, err)
	}
	if _, ok := a.Free("subnet-x"); ok {
		t.Error("an unknown subnet has addresses")
	}
	if _, err := a.Take("subnet-x", r); err == nil {
		t.Error("an unknown subnet gave an address")
	}
}

func TestNewRefuses(t *testing.T) {
	for _, cidr := range []string{"10.0.1.0/29", "fd00::/64", "nonsense"} {
		if _, err := New(map[string]string{"subnet-a": cidr}); err == nil {
			t.Errorf("CIDR %q accepted", cidr)
		}
	}
}
