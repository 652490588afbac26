// Package deprecation lists Kubernetes API versions (group/version and
// kind) that are deprecated or have been removed, with the release that
// deprecated or removed them and what to migrate to.
//
// The data is embedded in the binary from data/apis.yaml; the package does
// no I/O. Versions are Kubernetes minor versions such as "1.25", as
// returned by eks.ParseMinor.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package deprecation
