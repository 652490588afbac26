// Package foundation models what EKS on Fargate needs around the cluster —
// the VPC and its DNS attributes, the profiles' subnets and their routes, the
// pod execution roles, the node groups — and decides what is missing.
//
// It does no I/O. Gatherers fill a Foundation: Terraform plans and states,
// CloudFormation templates and eksctl ClusterConfigs for `fargatekit check`
// (internal/profiles), the EC2, IAM and EKS APIs for `fargatekit scan`. The
// rules of pkg/rules/clustersetup read it, so both entry points report the
// same findings from the same decisions.
package foundation
