package managed

import (
	"encoding/json"
	"github.com/solopi-dev/solopi/fault"
	"math"
)

// Requests arrive as JSON objects over HTTP; these read them into the
// store's types with the same defaults and checks as the CLI's flags.

// SubmissionFromJSON reads a POST /v1/tasks body: {plan, matrix,
// idempotencyKey, ownerToken?, decisions={}, maxRetries=1,
// leaseDurationMs=60000, retentionMs=604800000}.
func SubmissionFromJSON(body map[string]any) (Submission, error) {
	sub := NewSubmission()
	sub.Plan, sub.Matrix = body["plan"], body["matrix"]
	if d, ok := body["decisions"]; ok && d != nil {
		sub.Decisions = d
	}
	key, err := optionalString(body, "idempotencyKey")
	if err != nil {
		return sub, err
	}
	sub.IdempotencyKey = key
	if sub.OwnerToken, err = optionalString(body, "ownerToken"); err != nil {
		return sub, err
	}
	if v, ok := body["maxRetries"]; ok {
		n, err := integer(v, "maxRetries", 0, maxRetries)
		if err != nil {
			return sub, err
		}
		sub.MaxRetries = int(n)
	}
	if v, ok := body["leaseDurationMs"]; ok {
		if sub.LeaseDurationMs, err = integer(v, "leaseDurationMs", minLeaseDurationMs, maxLeaseDurationMs); err != nil {
			return sub, err
		}
	}
	if v, ok := body["retentionMs"]; ok {
		if sub.RetentionMs, err = integer(v, "retentionMs", 0, maxRetentionMs); err != nil {
			return sub, err
		}
	}
	return sub, nil
}

// DeviceSpecFromJSON reads a POST /v1/devices body: {deviceId, serial,
// platform="android", apiLevel, capabilities=[], labels={},
// health="healthy"}.
func DeviceSpecFromJSON(body map[string]any) (DeviceSpec, error) {
	var spec DeviceSpec
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{"deviceId", &spec.DeviceID}, {"serial", &spec.Serial}, {"platform", &spec.Platform}, {"health", &spec.Health}} {
		if *f.dst, err = optionalString(body, f.key); err != nil {
			return spec, err
		}
	}
	api, err := integer(body["apiLevel"], "apiLevel", 1, 1000)
	if err != nil {
		return spec, err
	}
	spec.APILevel = int(api)
	if v, ok := body["capabilities"]; ok {
		items, ok := v.([]any)
		if !ok {
			return spec, storeError(fault.CodeInvalidContract, "capabilities must be a list")
		}
		for _, item := range items {
			c, err := identifier(item, "device capability")
			if err != nil {
				return spec, err
			}
			spec.Capabilities = append(spec.Capabilities, c)
		}
	}
	if v, ok := body["labels"]; ok {
		labels, err := want.Object(v, "labels")
		if err != nil {
			return spec, err
		}
		spec.Labels = map[string]string{}
		for k, item := range labels {
			if spec.Labels[k], err = identifier(item, "device label value"); err != nil {
				return spec, err
			}
		}
	}
	return spec, nil
}

// OwnerTokenFromJSON reads the ownerToken of a cancel body.
func OwnerTokenFromJSON(body map[string]any) (string, error) {
	return optionalString(body, "ownerToken")
}

// EventCursor parses the after= query of GET …/events.
func EventCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	return integer(json.Number(s), "after", 0, math.MaxInt64)
}

func optionalString(body map[string]any, key string) (string, error) {
	v, ok := body[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", storeError(fault.CodeInvalidContract, key+" must be a string")
	}
	return s, nil
}
