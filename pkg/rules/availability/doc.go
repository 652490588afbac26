// Package availability holds the rules about how Fargate places and evicts
// pods: scheduling constraints it ignores, and disruptions it causes.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package availability
