// Package clustersetup holds the rules about cluster configuration that Fargate
// depends on: CoreDNS placement and Fargate's built-in logging.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package clustersetup
