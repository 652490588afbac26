// Package render turns Helm charts and Kustomize directories into the YAML
// documents they stand for, so that the manifest loader can read them like
// any other file. It renders with the libraries made for it (the Helm SDK,
// kustomize's krusty) on the client side: it never contacts a cluster nor runs
// a helm or kustomize binary.
//
// Its inputs may come from anyone (a pull request checked in CI): it reads
// nothing outside the input's root (manifest.Root), bounds each render in
// time and size, and fetches nothing unless Options.AllowRemote is set, in
// which case kustomize runs git for remote bases and fetches remote files
// over HTTP, as `kustomize build` does.
package render
