package readiness

import (
	"encoding/json"

	"github.com/solopi-dev/solopi/canonjson"
)

// configObject is one of the device's config objects as the config
// commands print it: echoed unchanged, except that a sensitive key's
// value is removed before it reaches any output (redactConfig).
type configObject struct {
	device map[string]any
	// mark records the removal, whatever the device said about it.
	mark configRedaction
}

// configRedaction is what the host lays over a config object whose value
// it removed; a key with its value keeps the device's own redacted.
type configRedaction struct {
	Redacted bool `json:"redacted,omitempty"`
}

// MarshalJSON prints the device's object with the redaction mark over it,
// keys sorted as the device's map prints them.
func (c configObject) MarshalJSON() ([]byte, error) {
	return canonjson.Overlay{Base: c.device, Fields: c.mark}.MarshalJSON()
}

// value is the key's value as the device sent it; nil for a sensitive key.
func (c configObject) value() any { return c.device["value"] }

// redactConfig returns a config object of the device without the value of
// a sensitive key: such values never reach any output.
func redactConfig(c map[string]any) configObject {
	key, _ := c["key"].(string)
	sens, _ := c["sensitive"].(bool)
	if !sens && !sensitiveKey(key) {
		return configObject{device: c}
	}
	out := make(map[string]any, len(c))
	for k, v := range c {
		if k != "value" {
			out[k] = v
		}
	}
	return configObject{device: out, mark: configRedaction{Redacted: true}}
}

// configSpec is a key's description from configTable as the device's
// config object spells it, without a value (fields in the alphabetical
// order of their JSON names, the order the map it replaces printed).
type configSpec struct {
	Key string `json:"key"`
	// Max and Min are set for a key with a range (HasRange).
	Max      *int64 `json:"max,omitempty"`
	Min      *int64 `json:"min,omitempty"`
	Redacted bool   `json:"redacted,omitempty"`
	// Sensitive and Writable are always printed, false included.
	Sensitive bool   `json:"sensitive"`
	Type      string `json:"type"`
	// Value is a present null for a sensitive key (as the device redacts
	// it) and absent for the others, whose value only the device knows.
	Value    json.RawMessage `json:"value,omitempty"`
	Writable bool            `json:"writable"`
}

// spec is the key's description as the device's config object spells it
// (without a value): a refusal made before any device contact still
// carries the config object a solopi-ai script reads.
func (k configKey) spec() configSpec {
	s := configSpec{Key: k.Key, Type: k.Type, Writable: k.Writable, Sensitive: k.Sensitive}
	if k.HasRange {
		s.Min, s.Max = &k.Min, &k.Max
	}
	if k.Sensitive {
		s.Redacted, s.Value = true, json.RawMessage("null")
	}
	return s
}

// configListResult is the config-list command's object.
type configListResult struct {
	Configs []configObject `json:"configs"`
	Count   int            `json:"count"`
	Success bool           `json:"success"`
}

// configGetResult is the config-get command's object.
type configGetResult struct {
	Config  configObject `json:"config"`
	Success bool         `json:"success"`
}
