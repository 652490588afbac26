// Package deprecation holds the rules about Kubernetes API versions that the
// target Kubernetes version no longer serves or will stop serving.
package deprecation
