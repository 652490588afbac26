// Package compat holds the rules for what Fargate refuses to run: each one
// mirrors a reason fargate-scheduler leaves a pod Pending.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package compat
