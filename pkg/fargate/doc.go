// Package fargate is the domain of EKS on Fargate: Fargate profiles, how
// they select pods and what EKS refuses in them; where EKS's webhook sends a
// pod (Place) and why fargate-scheduler refuses it (Refusals); how Fargate
// sizes a pod, what it costs, and the node it gets; and the settings that
// model what AWS does not document. `fargatekit check`, `plan` and the
// emulator all decide with these functions. It does no I/O; its tables are
// embedded data files.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package fargate
