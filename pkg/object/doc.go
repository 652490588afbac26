// Package object is what the rules see of a Kubernetes object: its
// reference, where it was read from, its metadata, its decoded typed value for
// the kinds the rules know, and the pod it creates, normalised across kinds.
package object
