// Package apiversions holds the rules about Kubernetes API versions that the
// target Kubernetes version no longer serves or will stop serving.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package apiversions
