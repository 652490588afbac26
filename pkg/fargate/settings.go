package fargate

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Settings are the points of EKS on Fargate that no AWS source settles, and
// EKS's adjustable quotas. They are read from .fargatekit.yaml and applied
// the same way by every entry point: check, plan and the emulator.
type Settings struct {
	// AllowedCapabilities are the Linux capabilities, without the CAP_
	// prefix, that fargate-scheduler is assumed to accept when a container
	// adds them. nil means DefaultAllowedCapabilities.
	AllowedCapabilities []string
	// RefusePrivilegeEscalation says whether fargate-scheduler refuses
	// containers that set allowPrivilegeEscalation: true. Users report it
	// does; the EKS user guide does not say. Default false: check warns
	// (FG005) and the emulator runs the pod.
	RefusePrivilegeEscalation bool
	// AZChoice is how fargate-scheduler picks a subnet (an AZ) for a pod.
	AZChoice AZChoice
	// HonourZoneSelector says whether fargate-scheduler picks a subnet of
	// the AZ that a pod's node selector topology.kubernetes.io/zone names.
	// A zone node selector was reported to pin Fargate pods
	// (containers-roadmap#1125), for this label unconfirmed. Default false:
	// ignored, as affinity is (ZoneSubnets).
	HonourZoneSelector bool
	// FailMemoryLimitAboveSize says whether a container whose memory limit
	// is above the pod's Fargate size fails to start (StartFailures), as
	// one whose CPU limit is does. Users report start failures with limits
	// above requests (amazon-cloudwatch-agent#580) without saying which
	// resource; the kernel refuses only the CPU quota. Default false: the
	// container starts and check warns (FG026).
	FailMemoryLimitAboveSize bool
	// NoIRSARegion says that the pods of IRSA service accounts do not get
	// the region: the setting irsaInjectsRegion: false. By default they do
	// (IRSAInjectsRegion): EKS's pod identity webhook injects AWS_REGION
	// and AWS_DEFAULT_REGION (its --aws-default-region, which users report
	// EKS sets: amazon-eks-pod-identity-webhook#149, #192), and IRSA is how
	// a Fargate pod gets AWS credentials at all (no IMDS, no EKS Pod
	// Identity), so a controller that runs there has it.
	NoIRSARegion bool
	// Limits are EKS's quotas on profiles.
	Limits Limits
	// InvalidLogging is what EKS does with the logging of a pod created
	// while the aws-logging ConfigMap is invalid (unconfirmed; "" is
	// InvalidLoggingDisabled).
	InvalidLogging InvalidLogging
	// AZOutage is what fargate-scheduler does with a pod whose profile
	// has subnets in an AZ that is down and in others (unconfirmed; "" is
	// AZOutageRedraw).
	AZOutage AZOutage
}

// IRSAInjectsRegion reports whether pods get the region variables of
// IRSA (NoIRSARegion).
func (s *Settings) IRSAInjectsRegion() bool { return !s.NoIRSARegion }

// DefaultAllowedCapabilities are the capabilities assumed accepted when no
// setting says otherwise: EKS's own CoreDNS adds NET_BIND_SERVICE and runs
// on Fargate. No AWS source lists the accepted capabilities.
var DefaultAllowedCapabilities = []string{"NET_BIND_SERVICE"}

// DefaultSettings are the settings without a .fargatekit.yaml.
func DefaultSettings() Settings {
	return Settings{AZChoice: AZUniform, Limits: DefaultLimits, InvalidLogging: InvalidLoggingDisabled, AZOutage: AZOutageRedraw}
}

// Allows reports whether adding the capability is accepted; capabilities
// are compared with or without CAP_, in any case, on both sides.
func (s *Settings) Allows(capability string) bool {
	allowed := s.AllowedCapabilities
	if allowed == nil {
		allowed = DefaultAllowedCapabilities
	}
	name := capabilityName(capability)
	return slices.ContainsFunc(allowed, func(a string) bool { return capabilityName(a) == name })
}

// capabilityName is a capability as fargate-scheduler names it, without
// the CAP_ prefix: "net_admin" and "CAP_NET_ADMIN" are both NET_ADMIN.
func capabilityName(c string) string {
	return strings.TrimPrefix(strings.ToUpper(c), "CAP_")
}

// AZChoice is a model of how fargate-scheduler picks a subnet among its
// profile's subnets. AWS documents only that the spread may be uneven.
type AZChoice string

// The AZ choice models.
const (
	// AZUniform picks one of the profile's subnets uniformly at random for
	// every pod, independently: what one operator measured over many
	// restarts (containers-roadmap#824), and the default.
	AZUniform AZChoice = "uniform"
	// AZBalanced picks, uniformly at random, among the subnets whose AZ holds
	// the fewest running pods of the same owner: the balancing effect that
	// operators suspect from the smaller skew they saw over short periods.
	AZBalanced AZChoice = "balanced"
)

// AZChoices lists the models in documentation order.
var AZChoices = []AZChoice{AZUniform, AZBalanced}

// ParseAZChoice reads an AZ choice model; "" is the default.
func ParseAZChoice(s string) (AZChoice, error) {
	if s == "" {
		return AZUniform, nil
	}
	if c := AZChoice(s); slices.Contains(AZChoices, c) {
		return c, nil
	}
	return "", fmt.Errorf("%q is not an AZ choice model (want %s or %s)", s, AZUniform, AZBalanced)
}

// AZOutage is a model of what fargate-scheduler does, during an AZ outage,
// with a pod whose profile also has subnets in AZs that are up. AWS does
// not say.
type AZOutage string

// The AZ outage models.
const (
	// AZOutageRedraw draws among the subnets of the AZs that are up: the
	// default.
	AZOutageRedraw AZOutage = "redraw"
	// AZOutageFail draws among all of the profile's subnets as usual: a pod
	// drawn into the AZ that is down waits there until it is up again.
	AZOutageFail AZOutage = "fail"
)

// ParseAZOutage reads an AZ outage model; "" is the default.
func ParseAZOutage(s string) (AZOutage, error) {
	switch o := AZOutage(s); o {
	case "":
		return AZOutageRedraw, nil
	case AZOutageRedraw, AZOutageFail:
		return o, nil
	}
	return "", fmt.Errorf("%q is not an AZ outage model (want %s or %s)", s, AZOutageRedraw, AZOutageFail)
}

// OutageSubnets returns the subnets, of those a pod may be drawn into,
// that fargate-scheduler draws among while the AZs for which down is true
// are down: with AZOutageRedraw those of the AZs that are up, unless none
// is; otherwise all of them. azOf gives a subnet's AZ.
func (s *Settings) OutageSubnets(subnets []string, azOf func(string) (string, bool), down func(string) bool) []string {
	if s.AZOutage == AZOutageFail {
		return subnets
	}
	up := slices.DeleteFunc(slices.Clone(subnets), func(id string) bool {
		az, ok := azOf(id)
		return ok && down(az)
	})
	if len(up) == 0 {
		return subnets
	}
	return up
}

// ZoneSubnets returns the subnets, of a profile's, that fargate-scheduler
// picks among for a pod: all of them, or with HonourZoneSelector those in
// the AZ the pod's zone node selector names (topology.kubernetes.io/zone,
// else the legacy failure-domain.beta.kubernetes.io/zone; none when the
// profile has no subnet there). azOf gives a subnet's AZ.
func (s *Settings) ZoneSubnets(spec *corev1.PodSpec, subnets []string, azOf func(string) (string, bool)) []string {
	zone, ok := spec.NodeSelector[corev1.LabelTopologyZone]
	if !ok {
		zone, ok = spec.NodeSelector[corev1.LabelFailureDomainBetaZone]
	}
	if !s.HonourZoneSelector || !ok {
		return subnets
	}
	var out []string
	for _, id := range subnets {
		if az, known := azOf(id); known && az == zone {
			out = append(out, id)
		}
	}
	return out
}
