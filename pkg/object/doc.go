// Package object is what the rules see of a Kubernetes object: its
// reference, where it was read from, its metadata, its decoded typed value for
// the kinds the rules know, and the pod it creates, normalised across kinds.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package object
