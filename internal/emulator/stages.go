package emulator

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2/maybe"

	"github.com/fargatekit/fargatekit/internal/emulator/kwok"
)

// stagesFile is the configuration of the emulator's own KWOK stages
// (package kwok), which kwok-controller loads after kwokctl's kwok.yaml.
func (o *Options) stagesFile() string { return filepath.Join(o.StateDir, "kwok-stages.yaml") }

// stagesArg is the kwok-controller argument that loads stagesFile: a second
// --config, kwok.yaml's staying.
func (o *Options) stagesArg() componentArg {
	return componentArg{component: ComponentKwok, key: "config", value: o.stagesFile(), repeated: true}
}

// writeStages writes stagesFile, this version's stages, before
// kwok-controller starts.
func (o *Options) writeStages() error {
	if err := maybe.WriteFile(o.stagesFile(), kwok.Stages(), 0o600); err != nil {
		return fmt.Errorf("writing the emulator's KWOK stages: %w", err)
	}
	return nil
}

// addStagesArg gives a control plane created by an earlier version, whose
// kwok-controller does not load stagesFile, the argument that does.
func (o *Options) addStagesArg() error {
	path := filepath.Join(o.clusterDir(), "kwok.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the control plane's configuration: %w", err)
	}
	updated, changed, err := setArgs(data, []componentArg{o.stagesArg()})
	if err != nil || !changed {
		return err
	}
	if err := maybe.WriteFile(path, updated, 0o600); err != nil {
		return fmt.Errorf("writing the control plane's configuration: %w", err)
	}
	return nil
}
