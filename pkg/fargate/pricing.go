package fargate

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// DefaultRegion is the region whose prices apply when none is given.
const DefaultRegion = "us-east-1"

// Price is the on-demand price of Fargate in one region, in USD.
type Price struct {
	VCPUHour        float64 `json:"vcpuHour"`
	GBHour          float64 `json:"gbHour"`
	EphemeralGBHour float64 `json:"ephemeralGBHour"`
}

type priceTable struct {
	HoursPerMonth float64          `json:"hoursPerMonth"`
	Regions       map[string]Price `json:"regions"`
}

//go:embed data/prices.yaml
var pricesYAML []byte

var prices = mustPrices(pricesYAML)

func mustPrices(data []byte) priceTable {
	var t priceTable
	if err := yaml.UnmarshalStrict(data, &t); err != nil {
		panic(fmt.Errorf("parsing the price table: %w", err)) // embedded data: checked by tests
	}
	return t
}

// Regions lists the regions with a price, sorted.
func Regions() []string {
	out := make([]string, 0, len(prices.Regions))
	for r := range prices.Regions {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// PriceIn returns the price in a region, or an error naming the known regions.
func PriceIn(region string) (Price, error) {
	p, ok := prices.Regions[region]
	if !ok {
		return Price{}, fmt.Errorf("no Fargate price for region %q (known: %s)", region, strings.Join(Regions(), ", "))
	}
	return p, nil
}

// Hourly returns the price of one pod of the given size and ephemeral storage
// for an hour. Ephemeral storage is billed above DefaultEphemeralGiB.
func (p Price) Hourly(s Size, ephemeralGiB int64) float64 {
	extra := max(ephemeralGiB-DefaultEphemeralGiB, 0)
	return s.VCPU()*p.VCPUHour + s.MemoryGB()*p.GBHour + float64(extra)*p.EphemeralGBHour
}

// Monthly returns the price of replicas pods running for a month (AWS's
// 730-hour month).
func (p Price) Monthly(s Size, ephemeralGiB int64, replicas int) float64 {
	return p.Hourly(s, ephemeralGiB) * prices.HoursPerMonth * float64(replicas)
}

// Unrequested returns the share of the price of a pod's provisioned size
// that pays for capacity it did not request: 1 - price(requests + the 256 MB
// Fargate adds) / price(provisioned size), ephemeral storage left out. It is
// 0 for a pod at the smallest size (no request could make it cheaper), one
// that requests nothing (it asked for no size at all) and one that fits no
// size.
func (p Price) Unrequested(s Sizing) float64 {
	if s.NothingRequested || !s.Fits || s.Provisioned == Sizes[0] {
		return 0
	}
	paid := p.Hourly(s.Provisioned, DefaultEphemeralGiB)
	if paid == 0 {
		return 0
	}
	requested := p.Hourly(Size{MilliCPU: s.RequestedMilliCPU, MemoryMiB: s.RequestedMemoryMiB + OverheadMemoryMiB}, DefaultEphemeralGiB)
	return max(1-requested/paid, 0)
}
