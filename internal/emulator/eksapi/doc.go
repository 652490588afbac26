// Package eksapi is the EKS API of the fargatekit emulator: the Fargate
// profile operations (CreateFargateProfile, DescribeFargateProfile,
// DeleteFargateProfile, ListFargateProfiles) plus DescribeCluster and
// ListClusters, served over HTTP with the paths, JSON shapes and error types of
// the real EKS API (rest-json, API version 2017-11-01), so that
// aws-sdk-go-v2/service/eks, its waiters and the AWS CLI (--endpoint-url) work
// against it unchanged. Any credentials are accepted; requests are not
// signature-checked.
//
// A [Store] keeps the cluster's Fargate profiles in a JSON file of a state
// directory and moves them through their lifecycle (CREATING → ACTIVE,
// DELETING → gone) on an injected clock; [Server] serves the API over a
// Store. The emulator's admission webhook and fargate-scheduler read the
// Store ([Store.Active], [Store.Profiles]) and subscribe to its transitions
// ([Store.OnChange]).
//
// Error texts follow what EKS was observed to answer; the doc comments of the
// error constructors in errors.go say which texts were observed and which are
// composed or taken from other emulators (unconfirmed).
package eksapi
