// Package render turns Helm charts and Kustomize directories into the YAML
// documents they stand for, so that the manifest loader can read them like
// any other file. It renders with the libraries made for it (the Helm SDK,
// kustomize's krusty) on the client side: it never contacts a cluster nor runs
// a helm or kustomize binary.
package render
