// Package fargate is the domain of EKS on Fargate: Fargate profiles and how
// they select pods, where a pod goes, how Fargate sizes a pod, and what it
// costs. It does no I/O; its tables are embedded data files.
package fargate
