// Package cost holds the rules about what Fargate bills: pods rounded up to a
// size, and pods billed after their work is done.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package cost
