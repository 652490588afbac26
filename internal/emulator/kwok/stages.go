// Package kwok holds the KWOK stages the emulator adds to KWOK's own, which
// kwok-controller loads from a second configuration file
// (emulator.Options.StagesFile).
package kwok

import (
	_ "embed"
	"strings"
)

var (
	//go:embed image-pull-stages.yaml
	imagePullStages string
	//go:embed image-pull-status.tmpl
	imagePullStatus string
	//go:embed fargate-pod-ready.yaml
	fargatePodReady string
)

// Stages returns the emulator's KWOK stages, a YAML stream of Stage
// documents: fargate-pod-ready.yaml's, and those of image-pull-stages.yaml,
// whose statusTemplate is image-pull-status.tmpl.
func Stages() []byte {
	const indent = "      "
	status := indent + strings.ReplaceAll(strings.TrimRight(imagePullStatus, "\n"), "\n", "\n"+indent)
	return []byte(fargatePodReady + "---\n" + strings.ReplaceAll(imagePullStages, indent+"@STATUS@", status))
}

// StatusTemplate returns the status template of the image-pull stages, as
// KWOK renders it against a pod.
func StatusTemplate() string { return imagePullStatus }
