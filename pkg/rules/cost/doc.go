// Package cost holds the rules about what Fargate bills: pods rounded up to a
// size, and pods billed after their work is done.
package cost
