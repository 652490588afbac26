// Package rules is fargatekit's rule engine: a Rule is a value that computes
// findings from objects and never does I/O; the Engine runs per-object rules
// as objects stream in and cluster rules once at the end, over workload
// summaries and the few kinds that relate to workloads.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package rules
