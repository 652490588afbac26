package eksapi

import (
	"fmt"
	"net/http"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// Error types of the EKS API, as sent in the x-amzn-errortype header.
const (
	typeBadRequest            = "BadRequestException"
	typeInvalidParameter      = "InvalidParameterException"
	typeInvalidState          = "InvalidStateException"
	typeNotFound              = "NotFoundException"
	typeResourceInUse         = "ResourceInUseException"
	typeResourceLimitExceeded = "ResourceLimitExceededException"
	typeResourceNotFound      = "ResourceNotFoundException"
	typeServer                = "ServerException"
)

// apiError is an error of the EKS API: its type (the x-amzn-errortype header),
// HTTP status and message, and the cluster and profile it is about, which the
// JSON body carries next to the message.
type apiError struct {
	Type               string
	Status             int
	Message            string
	ClusterName        string
	FargateProfileName string
	NodegroupName      string
}

// Error formats the error the way the AWS SDKs print it: "Type: message".
func (e *apiError) Error() string { return e.Type + ": " + e.Message }

func newAPIError(typ string, status int, cluster, profile, format string, args ...any) *apiError {
	return &apiError{Type: typ, Status: status, Message: fmt.Sprintf(format, args...), ClusterName: cluster, FargateProfileName: profile}
}

// errClusterNotFound is EKS's answer for an unknown cluster. Observed (output
// of `aws eks describe-cluster` quoted in public repositories; the same text in
// moto's EKS mock, whose messages were taken from the real API).
func errClusterNotFound(cluster string) *apiError {
	return newAPIError(typeResourceNotFound, http.StatusNotFound, cluster, "", "No cluster found for name: %s.", cluster)
}

// errProfileNotFound is the answer for an unknown profile of a known cluster.
// Unconfirmed: the text is moto's (which says it took its texts from the real
// API); eksctl's tests quote it without the final period.
func errProfileNotFound(cluster, name string) *apiError {
	return newAPIError(typeResourceNotFound, http.StatusNotFound, cluster, name, "No Fargate Profile found with name: %s.", name)
}

// errProfileExists answers a create whose name is taken, whatever the status
// of the existing profile. Observed (fargate-facts §1, HTTP 409).
func errProfileExists(cluster, name string) *apiError {
	return newAPIError(typeResourceInUse, http.StatusConflict, cluster, name, "A Fargate Profile already exists with this name in this cluster.")
}

// errReservedPrefix answers a create of a name starting with "eks-". Observed
// (fargate-facts §1, pulumi/pulumi-eks#426, HTTP 400).
func errReservedPrefix(cluster, name string) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, name, "The fargate profile name starts with the reserved prefix: 'eks-'.")
}

// errOperationInProgress answers a create or delete while another profile of
// the cluster is CREATING or DELETING (one operation at a time per cluster).
// Only two of the four texts were observed (fargate-facts §1, HTTP 409):
// create while CREATING ("Cannot create Fargate Profile <new> because cluster
// <cluster> currently has Fargate profile <other> in status CREATING") and
// delete while DELETING ("Cannot delete Fargate profile <name> because ...
// in status DELETING"). Create while DELETING and delete while CREATING are
// composed the same way (unconfirmed), keeping the observed capitalisation of
// each verb ("Fargate Profile" after create, "Fargate profile" after delete).
func errOperationInProgress(create bool, cluster, name, other, status string) *apiError {
	verb := "delete Fargate profile"
	if create {
		verb = "create Fargate Profile"
	}
	return newAPIError(typeResourceInUse, http.StatusConflict, cluster, name,
		"Cannot %s %s because cluster %s currently has Fargate profile %s in status %s", verb, name, cluster, other, status)
}

// errProfileLimit answers a create beyond the cluster's profile quota (10 by
// default). Observed (ResourceLimitExceededException, HTTP 400, in a
// Terraform log quoted in public repositories).
func errProfileLimit(cluster, name string) *apiError {
	return newAPIError(typeResourceLimitExceeded, http.StatusBadRequest, cluster, name, "Fargate Profile limit exceeded for cluster.")
}

// errNotPrivateSubnet answers a create naming a public subnet of the VPC.
// Observed (InvalidParameterException, quoted by aws-k8s-tester and others;
// AWS ends it without a period).
func errNotPrivateSubnet(cluster, name, subnet string) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, name, "Subnet %s provided in Fargate Profile is not a private subnet", subnet)
}

// errUnknownSubnet answers a create naming a subnet that is not in the
// cluster's VPC at all. Composed (unconfirmed): what AWS says then was not
// found.
func errUnknownSubnet(cluster, name, subnet, vpc string) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, name, "Subnet %s provided in Fargate Profile is not a subnet of the cluster's VPC %s", subnet, vpc)
}

// errNoSelector answers a create without selectors. Unconfirmed: moto's text.
func errNoSelector(cluster, name string) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, name, "Fargate Profile requires at least one selector.")
}

// errSelectorNamespace answers a selector without a namespace. Unconfirmed:
// moto's text.
func errSelectorNamespace(cluster, name string) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, name, "Fargate Profile must have at least one selector with at least one namespace value.")
}

// errTooManyLabels answers a selector with more label pairs than allowed.
// Unconfirmed: moto's text, with the limit filled in.
func errTooManyLabels(cluster, name string, limit int) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, name, "Request contains Selector with more than %d Label pairs", limit)
}

// errTooManySelectors answers a profile with more selectors than allowed.
// Composed after errTooManyLabels (unconfirmed).
func errTooManySelectors(cluster, name string, limit int) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, name, "Request contains more than %d Selectors", limit)
}

// violationError answers a profile the domain's validation refuses, with
// EKS's text for each kind of violation.
func violationError(cluster, name string, v fargate.Violation) *apiError {
	switch v.Kind {
	case fargate.NameRequired:
		return invalidParameter(cluster, name, "fargateProfileName is required.")
	case fargate.NameReserved:
		return errReservedPrefix(cluster, name)
	case fargate.NameInvalid:
		return invalidParameter(cluster, name, "fargateProfileName %q is invalid: it must start with a letter or digit, contain only letters, digits, - and _, and be at most 100 characters long.", name)
	case fargate.SelectorRequired:
		return errNoSelector(cluster, name)
	case fargate.TooManySelectors:
		return errTooManySelectors(cluster, name, v.Limit)
	case fargate.NamespaceRequired:
		return errSelectorNamespace(cluster, name)
	case fargate.TooManyLabels:
		return errTooManyLabels(cluster, name, v.Limit)
	case fargate.TooManyProfiles:
		return errProfileLimit(cluster, name)
	}
	return invalidParameter(cluster, name, "%s.", v.Error())
}

// invalidParameter is an InvalidParameterException with a composed text
// (unconfirmed) naming the offending field.
func invalidParameter(cluster, name, format string, args ...any) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, name, format, args...)
}

// badRequest answers a request that cannot be read (malformed JSON, wrong
// types, a bad URL). Unconfirmed: which type AWS uses for these was not
// found; BadRequestException is the EKS model's type for malformed requests.
func badRequest(format string, args ...any) *apiError {
	return newAPIError(typeBadRequest, http.StatusBadRequest, "", "", format, args...)
}

// errUnknownOperation answers a path or method that is no operation of this
// API. Unconfirmed.
func errUnknownOperation(method, path string) *apiError {
	return newAPIError(typeNotFound, http.StatusNotFound, "", "", "No operation %s %s in this EKS API emulator.", method, path)
}

// errUnsupportedVersion answers a version EKS does not offer. Observed
// (InvalidParameterException "unsupported Kubernetes version", in Terraform
// logs of CreateCluster and UpdateClusterVersion quoted in public issues).
func errUnsupportedVersion(cluster string) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, "", "unsupported Kubernetes version")
}

// errMinorStep answers an UpdateClusterVersion to anything but the next minor
// version: the same, an older, or one further on. Observed
// (InvalidParameterException, "from 1.22 to 1.25", "from 1.12 to 1.12" and
// "from 1.25 to 1.24" quoted in public issues).
func errMinorStep(cluster, from, to string) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, "", "Unsupported Kubernetes minor version update from %s to %s", from, to)
}

// errNodegroupsBehind answers an UpdateClusterVersion while managed node
// groups are on an older version than the control plane. Observed
// (fargate-facts §7, InvalidParameterException, names joined with commas).
func errNodegroupsBehind(cluster, names, version string) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, "", "Update failed because of Nodegroups %s must be updated to match cluster version %s before updating cluster version", names, version)
}

// errFargateBehind answers an UpdateClusterVersion while Fargate pods run on
// kubelets older than the control plane, when the upgrade policy says EKS
// refuses it. Composed after errNodegroupsBehind (unconfirmed: EKS documents
// that Fargate pods must be recreated first, not the error).
func errFargateBehind(cluster, nodes, version string) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, "", "Update failed because of Fargate nodes %s must be updated to match cluster version %s before updating cluster version: recreate their pods", nodes, version)
}

// errUpgradeReadiness answers an UpdateClusterVersion without force while
// upgrade insights of the new version are in ERROR. Documented: the API
// reference's InvalidStateException (HTTP 400, its text is the message
// here) and UpdateClusterVersion's force, "override upgrade-blocking
// readiness checks". Which insights block is unconfirmed: here those in
// ERROR but kubelet skew, which the node group and Fargate checks cover.
func errUpgradeReadiness(cluster string) *apiError {
	return newAPIError(typeInvalidState, http.StatusBadRequest, cluster, "", "Amazon EKS detected upgrade readiness issues. Call the ListInsights API to view detected upgrade blocking issues. Pass the force flag when updating to override upgrade readiness errors.")
}

// errUpdateInProgress answers an update while another of the same resource
// is in progress. Composed (unconfirmed).
func errUpdateInProgress(cluster, nodegroup, what string) *apiError {
	return newAPIError(typeResourceInUse, http.StatusConflict, cluster, "", "Cannot update %s because an update is in progress", what).withNodegroup(nodegroup)
}

// errUpdateNotFound answers DescribeUpdate of an unknown ID. Composed after
// errClusterNotFound (unconfirmed).
func errUpdateNotFound(cluster, nodegroup, id string) *apiError {
	return newAPIError(typeResourceNotFound, http.StatusNotFound, cluster, "", "No update found for ID: %s.", id).withNodegroup(nodegroup)
}

// errNodegroupNotFound answers for an unknown node group. Unconfirmed: the
// text of moto and LocalStack.
func errNodegroupNotFound(cluster, name string) *apiError {
	return newAPIError(typeResourceNotFound, http.StatusNotFound, cluster, "", "No node group found for name: %s.", name).withNodegroup(name)
}

// errNodegroupExists answers a create whose name is taken. Unconfirmed: the
// text of moto and LocalStack.
func errNodegroupExists(cluster, name string) *apiError {
	return newAPIError(typeResourceInUse, http.StatusConflict, cluster, "", "NodeGroup already exists with name %s and cluster name %s", name, cluster).withNodegroup(name)
}

// errNodegroupBusy answers an update or delete of a node group that is not
// ACTIVE. Composed (unconfirmed).
func errNodegroupBusy(cluster, name, status string) *apiError {
	return newAPIError(typeResourceInUse, http.StatusConflict, cluster, "", "Nodegroup %s is in status %s", name, status).withNodegroup(name)
}

// errReleaseVersion answers an UpdateNodegroupVersion to a release that is
// neither the newest of its Kubernetes version nor the current one. Observed
// (fargate-facts §7, InvalidParameterException).
func errReleaseVersion(cluster, name, requested, allowed string) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, "", "Requested Nodegroup release version %s is invalid. Allowed release version is %s", requested, allowed).withNodegroup(name)
}

// nodegroupParameter is an InvalidParameterException about a node group,
// with a composed text (unconfirmed).
func nodegroupParameter(cluster, name, format string, args ...any) *apiError {
	return newAPIError(typeInvalidParameter, http.StatusBadRequest, cluster, "", format, args...).withNodegroup(name)
}

func (e *apiError) withNodegroup(name string) *apiError {
	e.NodegroupName = name
	return e
}

// errServer is an internal failure (the state file cannot be written).
func errServer(format string, args ...any) *apiError {
	return newAPIError(typeServer, http.StatusInternalServerError, "", "", format, args...)
}
