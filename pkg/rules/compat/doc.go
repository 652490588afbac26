// Package compat holds the rules for what Fargate refuses to run: each one
// mirrors a reason fargate-scheduler leaves a pod Pending.
package compat
