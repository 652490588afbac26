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
	//go:embed start-failure-stages.yaml
	startFailureStages string
	//go:embed start-failure-status.tmpl
	startFailureStatus string
)

// Stages returns the emulator's KWOK stages, a YAML stream of Stage
// documents: fargate-pod-ready.yaml's, those of image-pull-stages.yaml,
// whose statusTemplate is image-pull-status.tmpl, and those of
// start-failure-stages.yaml, whose statusTemplate is
// start-failure-status.tmpl.
func Stages() []byte {
	return []byte(fargatePodReady + "---\n" + withStatus(imagePullStages, imagePullStatus) + "---\n" + withStatus(startFailureStages, startFailureStatus))
}

// withStatus puts a status template, indented as the stages' YAML wants it,
// where they say @STATUS@.
func withStatus(stages, template string) string {
	const indent = "      "
	status := indent + strings.ReplaceAll(strings.TrimRight(template, "\n"), "\n", "\n"+indent)
	return strings.ReplaceAll(stages, indent+"@STATUS@", status)
}

// StatusTemplate returns the status template of the image-pull stages, as
// KWOK renders it against a pod.
func StatusTemplate() string { return imagePullStatus }

// StartFailureTemplate returns the status template of the start-failure
// stages, as KWOK renders it against a pod.
func StartFailureTemplate() string { return startFailureStatus }
