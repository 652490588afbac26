// Package eksapi is the EKS API of the fargatekit emulator: the Fargate
// profile operations (CreateFargateProfile, DescribeFargateProfile,
// DeleteFargateProfile, ListFargateProfiles), DescribeCluster and
// ListClusters, version updates (UpdateClusterVersion, DescribeUpdate,
// ListUpdates), managed node groups (Create/Describe/List/DeleteNodegroup,
// UpdateNodegroupConfig, UpdateNodegroupVersion) and upgrade insights
// (ListInsights, DescribeInsight), served over HTTP with the paths, JSON shapes and error types of
// the real EKS API (rest-json, API version 2017-11-01), so that
// aws-sdk-go-v2/service/eks, its waiters and the AWS CLI (--endpoint-url) work
// against it unchanged. Any credentials are accepted; requests are not
// signature-checked.
//
// A [Store] keeps the cluster's version, updates, node groups and Fargate
// profiles in a JSON file of a state directory and moves them through their
// lifecycle (CREATING → ACTIVE, DELETING → gone, UPDATING → ACTIVE) on an
// injected clock; [Server] serves the API over a Store. A node group update
// ends when the emulator's node controller, which makes the cluster's nodes
// match the node groups, says so ([Store.FinishNodegroupUpdate]). The emulator's admission webhook and fargate-scheduler read the
// Store ([Store.Active], [Store.Profiles]) and subscribe to its transitions
// ([Store.OnChange]).
//
// CreateFargateProfile checks the trust policy of a pod execution role the
// account's IAM has ([WithRoles]: the emulator's IAM API), as EKS does; a
// role it does not have is accepted.
//
// Error texts follow what EKS was observed to answer; the doc comments of the
// error constructors in errors.go say which texts were observed and which are
// composed or taken from other emulators (unconfirmed).
package eksapi
