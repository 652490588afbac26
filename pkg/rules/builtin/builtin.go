// Package builtin lists fargatekit's rules: the one place a rule is added.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package builtin

import (
	"slices"

	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/plan"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/apiversions"
	"github.com/fargatekit/fargatekit/pkg/rules/availability"
	"github.com/fargatekit/fargatekit/pkg/rules/clustersetup"
	"github.com/fargatekit/fargatekit/pkg/rules/compat"
	"github.com/fargatekit/fargatekit/pkg/rules/cost"
)

// Rules returns every built-in rule, in documentation order.
func Rules() []*rules.Rule {
	return []*rules.Rule{
		compat.DaemonSet,
		compat.DaemonSetToleratesFargate,
		compat.Privileged,
		compat.AddedCapabilities,
		compat.PrivilegeEscalation,
		compat.HostNetwork,
		compat.HostPID,
		compat.HostIPC,
		compat.HostPort,
		compat.HostPathVolume,
		compat.UnsupportedVolume,
		compat.DynamicProvisioning,
		compat.ClaimProvisioning,
		compat.GPU,
		compat.Platform,
		compat.Oversize,
		compat.LimitAboveSize,
		compat.LimitsUnequal,
		compat.InstanceMetadata,
		compat.EphemeralStorage,
		compat.LoadBalancerInstanceTarget,
		compat.IngressInstanceTarget,
		compat.NodePortService,
		compat.NetworkPolicyNotEnforced,
		compat.AmbiguousProfile,
		compat.ProfileLabelMismatch,
		compat.PodIdentity,
		compat.NodeSelection,
		compat.ProfileQuota,
		availability.AffinityIgnored,
		availability.TopologySpreadIgnored,
		availability.MissingPDB,
		availability.PDBBlocksPatching,
		cost.JobTTL,
		cost.NoRequests,
		cost.RoundingWaste,
		clustersetup.CoreDNSComputeType,
		clustersetup.LoggingConfig,
		clustersetup.LoggingNamespace,
		clustersetup.VPCDNS,
		clustersetup.PublicSubnet,
		clustersetup.NoEgress,
		clustersetup.RoleTrust,
		clustersetup.RoleSourceARN,
		clustersetup.RolePolicy,
		clustersetup.KubeSystemCapacity,
		clustersetup.NoCapacity,
		clustersetup.ImageOutsideECR,
		apiversions.RemovedAPI,
		apiversions.DeprecatedAPI,
	}
}

// All returns every rule fargatekit reports: the engine's, then the findings
// of plan and those of scan about what runs.
func All() []*rules.Rule {
	return slices.Concat(Rules(), plan.Rules, live.Rules)
}

// Registry returns the built-in rules in a registry.
func Registry() *rules.Registry {
	reg, err := rules.NewRegistry(Rules()...)
	if err != nil {
		panic(err) // the built-in list is checked by tests: a broken one must not ship
	}
	return reg
}
