package spreadserver

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// ZoneFile is serve's --zones file: the AZ of each per-AZ profile, for
// clusters where spread is not to call EC2 (or where it is to balance over
// some of the per-AZ profiles only).
//
//	profiles:
//	  apps-us-east-1a: us-east-1a
//	  apps-us-east-1b: us-east-1b
type ZoneFile struct {
	Profiles map[string]string `json:"profiles"`
}

// ReadZones reads a --zones file. An unknown field, or a file without
// profiles, is an error naming the file.
func ReadZones(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--zones: %w", err)
	}
	var f ZoneFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("--zones %s: %w", path, err)
	}
	if len(f.Profiles) == 0 {
		return nil, fmt.Errorf("--zones %s: profiles: give each per-AZ profile's AZ, as profiles: {NAME: AZ}", path)
	}
	return f.Profiles, nil
}
