package emulator

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/google/renameio/v2/maybe"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
)

// RecordFile is the file of a state directory that records the emulator
// living there, as kind and kwokctl keep a cluster's identity with it.
const RecordFile = "emulator.json"

// Record is what a state directory keeps of its emulator: the configuration
// it was created with and how it was started. Every command that names the
// state directory acts on this emulator.
type Record struct {
	Config *clusterconfig.Config `json:"config"`
	// ConfigPath is the configuration file it was created from; "" for the defaults.
	ConfigPath string `json:"configPath,omitempty"`
	// SettingsPath is the settings file its daemon reads; "" for none.
	SettingsPath string `json:"settingsPath,omitempty"`
	EKSPort      int    `json:"eksPort"`
	WebhookPort  int    `json:"webhookPort"`
}

// ReadRecord reads the record of the state directory dir; nil when it has none.
func ReadRecord(dir string) (*Record, error) {
	data, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the emulator's record: %w", err)
	}
	var r Record
	err = json.Unmarshal(data, &r)
	if err == nil && r.Config == nil {
		err = errors.New("it holds no configuration")
	}
	if err != nil {
		return nil, fmt.Errorf("%s is not an emulator record (remove the state directory with `fargatekit emulator delete --state-dir %s`): %w",
			filepath.Join(dir, RecordFile), dir, err)
	}
	return &r, nil
}

// writeRecord records the emulator in its state directory.
func (o *Options) writeRecord() error {
	r := Record{Config: o.Config, ConfigPath: o.ConfigPath, SettingsPath: o.SettingsPath, EKSPort: o.EKSPort, WebhookPort: o.WebhookPort}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("recording the emulator: %w", err)
	}
	if err := maybe.WriteFile(filepath.Join(o.StateDir, RecordFile), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("recording the emulator: %w", err)
	}
	o.Record = &r
	return nil
}

// StateRoot is where emulators keep their state unless told otherwise:
// $XDG_STATE_HOME/fargatekit/emulator, one directory per cluster name.
func StateRoot() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(cmp.Or(os.Getenv("XDG_STATE_HOME"), filepath.Join(home, ".local", "state")), "fargatekit", "emulator")
}

// Find returns the state directories under root that record an emulator, sorted.
func Find(root string) ([]string, error) {
	records, err := filepath.Glob(filepath.Join(root, "*", RecordFile))
	if err != nil {
		return nil, fmt.Errorf("looking for emulators in %s: %w", root, err)
	}
	dirs := make([]string, len(records))
	for i, r := range records {
		dirs[i] = filepath.Dir(r)
	}
	slices.Sort(dirs)
	return dirs, nil
}

// Only returns the state directory of the only emulator under root: ""
// when there is none, an error when there are several.
func Only(root string) (string, error) {
	dirs, err := Find(root)
	switch {
	case err != nil:
		return "", err
	case len(dirs) > 1:
		return "", fmt.Errorf("%d emulators in %s (%s): pick one with --state-dir; fargatekit emulator list shows them",
			len(dirs), root, strings.Join(dirs, ", "))
	case len(dirs) == 1:
		return dirs[0], nil
	}
	return "", nil
}

// ConfigDiff names the fields in which two configurations differ, as their
// YAML spells them ("fargateProfiles", "metadata.name"), sorted.
func ConfigDiff(a, b *clusterconfig.Config) []string {
	var am, bm map[string]any
	for _, x := range []struct {
		c *clusterconfig.Config
		m *map[string]any
	}{{a, &am}, {b, &bm}} {
		data, _ := json.Marshal(x.c)
		_ = json.Unmarshal(data, x.m)
	}
	var out []string
	diffMaps("", am, bm, &out)
	sort.Strings(out)
	return out
}

func diffMaps(prefix string, a, b map[string]any, out *[]string) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		field := k
		if prefix != "" {
			field = prefix + "." + k
		}
		am, aok := a[k].(map[string]any)
		bm, bok := b[k].(map[string]any)
		switch {
		case aok && bok:
			diffMaps(field, am, bm, out)
		case !reflect.DeepEqual(a[k], b[k]):
			*out = append(*out, field)
		}
	}
}
