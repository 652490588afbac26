// Package clustersetup holds the rules about cluster configuration that Fargate
// depends on: CoreDNS placement and Fargate's built-in logging.
package clustersetup
