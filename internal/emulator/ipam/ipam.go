// Package ipam holds the addresses Fargate pods take in the emulator's
// subnets: fargate-scheduler takes and releases them, EC2's DescribeSubnets
// counts them.
package ipam

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
)

// ErrFull is the error of a subnet without a free address.
var ErrFull = errors.New("no free address")

// reservedAddresses are the addresses AWS keeps in every subnet: the first
// four and the last one (VPC user guide, "Subnet CIDR blocks").
const reservedAddresses = 5

// Pool is the addresses Fargate pods take in their subnets: each pod has an
// ENI of its own, whose address is its node's and its own. An address is
// taken while its node exists; fargate-scheduler and EC2's DescribeSubnets
// (AvailableIpAddressCount) read the same counts. It is safe for concurrent
// use.
type Pool struct {
	mu      sync.Mutex
	subnets map[string]netip.Prefix // by subnet ID
	used    map[netip.Addr]string   // address → subnet ID
	count   map[string]int          // subnet ID → addresses used
}

// New returns the pool of subnets (ID → CIDR), no address taken.
func New(subnets map[string]string) (*Pool, error) {
	a := &Pool{subnets: map[string]netip.Prefix{}, used: map[netip.Addr]string{}, count: map[string]int{}}
	for id, cidr := range subnets {
		p, err := netip.ParsePrefix(cidr)
		if err != nil || !p.Addr().Is4() || p.Bits() > 28 {
			return nil, fmt.Errorf("subnet %s: CIDR %q is not an IPv4 block of /28 or larger", id, cidr)
		}
		a.subnets[id] = p.Masked()
	}
	return a, nil
}

// Usable is how many addresses a subnet gives its ENIs.
func Usable(p netip.Prefix) int { return 1<<(32-p.Bits()) - reservedAddresses }

// usable reports whether an address of p is one ENIs get: not one of the
// five AWS keeps.
func usable(p netip.Prefix, ip netip.Addr) bool {
	first := p.Addr().As4()
	last := binary.BigEndian.Uint32(first[:]) + 1<<(32-p.Bits()) - 1
	n := ip.As4()
	v := binary.BigEndian.Uint32(n[:])
	return p.Contains(ip) && v >= binary.BigEndian.Uint32(first[:])+4 && v < last
}

// Free returns how many addresses of the subnet are free, and whether the
// subnet is known.
func (a *Pool) Free(subnet string) (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.subnets[subnet]
	if !ok {
		return 0, false
	}
	return Usable(p) - a.count[subnet], true
}

// Take takes a free address of the subnet, drawn at random; an error when
// the subnet is unknown or full.
func (a *Pool) Take(subnet string, r *rand.Rand) (netip.Addr, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.subnets[subnet]
	if !ok {
		return netip.Addr{}, fmt.Errorf("unknown subnet %s", subnet)
	}
	n := Usable(p)
	if a.count[subnet] >= n {
		return netip.Addr{}, fmt.Errorf("subnet %s: %w", subnet, ErrFull)
	}
	base := p.Addr().As4()
	first := binary.BigEndian.Uint32(base[:]) + 4 // past the four reserved at the start
	// From a random place, the next free address: found in one pass
	// however full the subnet is.
	start := r.IntN(n)
	for i := range n {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], first+uint32((start+i)%n))
		ip := netip.AddrFrom4(b)
		if _, taken := a.used[ip]; !taken {
			a.used[ip] = subnet
			a.count[subnet]++
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("subnet %s: %w", subnet, ErrFull) // not reached: count said one is free
}

// Mark records an address as taken (a node of an earlier run), in the
// subnet that holds it; false when no subnet gives it to ENIs.
func (a *Pool) Mark(ip netip.Addr) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, taken := a.used[ip]; taken {
		return true
	}
	for id, p := range a.subnets {
		if usable(p, ip) {
			a.used[ip] = id
			a.count[id]++
			return true
		}
	}
	return false
}

// Release frees an address; the subnet it was in, "" when it was not taken.
func (a *Pool) Release(ip netip.Addr) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	id, taken := a.used[ip]
	if taken {
		delete(a.used, ip)
		a.count[id]--
	}
	return id
}
