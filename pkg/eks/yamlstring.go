package eks

import (
	"encoding/json"
	"fmt"
)

// yamlString is a string field of an embedded YAML file that must be
// quoted. sigs.k8s.io/yaml would otherwise turn an unquoted 1.30 into the
// string "1.3" without an error.
type yamlString string

// UnmarshalJSON accepts only a JSON string (sigs.k8s.io/yaml converts YAML
// to JSON before decoding).
func (s *yamlString) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("value %s must be a quoted string: %w", b, err)
	}
	*s = yamlString(v)
	return nil
}
