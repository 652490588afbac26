// Package availability holds the rules about how Fargate places and evicts
// pods: scheduling constraints it ignores, and disruptions it causes.
package availability
