package foundation

import (
	"regexp"
	"slices"
	"strings"

	"github.com/distribution/reference"
)

// PullFailure is why Fargate cannot pull a pod's image; "" when it can.
type PullFailure string

const (
	// PullNoRoute is the failure of a pod in a subnet with no default route
	// out (no NAT gateway) that lacks some of the ecr.api, ecr.dkr and s3
	// endpoints: it reaches no registry (FG055).
	PullNoRoute PullFailure = "no-route"
	// PullOnlyECR is the failure of an image outside Amazon ECR, pulled in a
	// subnet that reaches only ECR, through the endpoints (FG062).
	PullOnlyECR PullFailure = "only-ecr"
	// PullDenied is the failure of an image in a private Amazon ECR
	// registry under a pod execution role with no policy at all, managed or
	// inline: Fargate gets no credentials for it (FG058).
	PullDenied PullFailure = "denied"
)

// ecrHost matches the registry host of a private Amazon ECR repository:
// ACCOUNT.dkr.ecr[-fips].REGION.amazonaws.com[.cn].
var ecrHost = regexp.MustCompile(`^[0-9]{12}\.dkr\.ecr(-fips)?\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$`)

// ECRImage reports whether image is in a private Amazon ECR registry, the
// registry the VPC endpoints serve and the pod execution role opens
// (public.ecr.aws is neither). A reference that does not parse is not.
func ECRImage(image string) bool {
	named, err := reference.ParseNormalizedNamed(image)
	return err == nil && ecrHost.MatchString(reference.Domain(named))
}

// HasPodExecutionPolicy reports whether PodExecutionPolicy is attached to
// the role.
func (r *Role) HasPodExecutionPolicy() bool {
	return slices.ContainsFunc(r.Policies, func(arn string) bool { return strings.HasSuffix(arn, ":policy/"+PodExecutionPolicy) })
}

// OtherPolicies names the role's policies, managed (their ARNs) and inline
// ("inline policy NAME"): any of them may grant what PodExecutionPolicy
// does, which fargatekit does not judge.
func (r *Role) OtherPolicies() []string {
	out := slices.Clone(r.Policies)
	for _, name := range r.InlinePolicies {
		out = append(out, "inline policy "+name)
	}
	return out
}

// Pull decides whether a Fargate pod placed in subnet subnetID, under a
// profile whose pod execution role is roleARN, pulls image: FG055's, FG058's
// and FG062's judgement for one image. A role with other policies than
// PodExecutionPolicy may grant the same (FG058 warns), so it pulls. What
// the foundation does not know (the subnet, its route table, the role) does
// not fail.
func (f *Foundation) Pull(subnetID, roleARN, image string) PullFailure {
	ecr := ECRImage(image)
	if s, ok := f.SubnetByID(subnetID); ok {
		if rt, ok := f.RouteTableOf(s); ok {
			switch e := f.EgressOf(s, rt); {
			case e.Outbound != nil:
			case len(e.MissingEndpoints) > 0:
				return PullNoRoute
			case !ecr:
				return PullOnlyECR
			}
		}
	}
	if r, ok := f.Role(roleARN); ok && ecr && r.PoliciesKnown && len(r.OtherPolicies()) == 0 {
		return PullDenied
	}
	return ""
}
