// Package eks holds the Amazon EKS Kubernetes version calendar: when each
// Kubernetes minor version was released on EKS and when its standard and
// extended support end. It also parses and compares Kubernetes minor
// versions ("1.29").
//
// The calendar is embedded in the binary from data/versions.yaml; the
// package does no I/O.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package eks
