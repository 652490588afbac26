// Package release has no code: its tests exercise each way fargatekit is
// distributed, with the real tools (GoReleaser, ko, crane, krew, pre-commit,
// kubectl and the go command): a snapshot release and its archive, `go install`
// from a module proxy, the container image, the GitHub Action's steps, the
// pre-commit hook and the kubectl plugin. The tools come from
// `hack/tools.sh release` and kubectl from the control plane; without them
// the tests skip, saying how to run them (make test runs them all).
package release
