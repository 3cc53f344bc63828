package managed

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// Identifiers and tokens are checked by hand rather than with regular
// expressions, which would be compiled at every process start
// (protocol/ids.go explains the cost).

// validID: [A-Za-z0-9][A-Za-z0-9._:-]{0,159}.
func validID(s string) bool {
	if len(s) == 0 || len(s) > 160 || !protocol.IsIDStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !protocol.IsIDChar(s[i]) && s[i] != ':' {
			return false
		}
	}
	return true
}

// validToken: [A-Za-z0-9._~-]{16,256}.
func validToken(s string) bool {
	if len(s) < 16 || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !protocol.IsIDChar(s[i]) && s[i] != '~' {
			return false
		}
	}
	return true
}

func validSHA256(s string) bool { return protocol.ValidHex(s, 64, false) }

// storeError is a refused store operation. Every such refusal is a local
// contract error (exit 3), as in SoloPi's own host CLI.
func storeError(code, msg string) *fault.Error { return fault.New(fault.Invalid, code, msg) }

// IsStale reports whether err is a fencing refusal: the assignment no longer
// holds its device generation (or its task was cancelled).
func IsStale(err error) bool {
	c := fault.CodeOf(err)
	return c == fault.CodeStaleAssignment || c == fault.CodeTaskCancelled
}

func identifier(v any, label string) (string, error) {
	s, ok := v.(string)
	if ok {
		s = strings.TrimSpace(s)
	}
	if !ok || !validID(s) {
		return "", storeError(fault.CodeInvalidID, label+" must match [A-Za-z0-9][A-Za-z0-9._:-]{0,159}")
	}
	return s, nil
}

// ValidID reports whether s is a valid identifier (device, worker, target,
// label, idempotency key): [A-Za-z0-9][A-Za-z0-9._:-]{0,159}.
func ValidID(s string) bool { return validID(s) }

// ValidOwnerToken reports whether s may be an owner (or bearer) token: 16 to
// 256 URL-safe characters.
func ValidOwnerToken(s string) bool { return validToken(s) }

// newToken returns a fresh URL-safe token with 256 bits of randomness.
func newToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func ownerHash(taskID, token string) string {
	sum := sha256.Sum256([]byte(taskID + "\x00" + token))
	return hex.EncodeToString(sum[:])
}

// ownerMatches compares the stored hash with the token's in constant time.
func ownerMatches(stored, taskID, token string) bool {
	return subtle.ConstantTimeCompare([]byte(stored), []byte(ownerHash(taskID, token))) == 1
}

func randomHex() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// want reads request trees, refusing a wrong type as an invalid contract.
var want = canonjson.Refuse(func(label, w string) error {
	return storeError(fault.CodeInvalidContract, label+" must be "+w)
})

// integer reads a JSON integer (never a bool or a float) within [lo, hi].
func integer(v any, label string, lo, hi int64) (int64, error) {
	n, ok := canonjson.Integer(v)
	if !ok || n < lo || n > hi {
		return 0, storeError(fault.CodeInvalidContract, label+" must be an integer from "+strconv.FormatInt(lo, 10)+" to "+strconv.FormatInt(hi, 10))
	}
	return n, nil
}

// PlanValidator checks a verification plan before it is accepted; the CLI
// and the HTTP server run the same one. StructuralPlan is the check the
// store itself makes; the verification engine's full validator plugs in
// where it is available.
type PlanValidator func(plan any) error

// StructuralPlan accepts an object with the plan schema version and a
// SHA-256 planFingerprint.
func StructuralPlan(plan any) error {
	_, _, err := normalizePlan(plan)
	return err
}

func normalizePlan(plan any) (map[string]any, string, error) {
	m, ok := plan.(map[string]any)
	if !ok || m["schemaVersion"] != PlanSchema {
		return nil, "", storeError(fault.CodeInvalidPlan, "a managed task needs a "+PlanSchema+" plan")
	}
	fp, _ := m["planFingerprint"].(string)
	if !validSHA256(fp) {
		return nil, "", storeError(fault.CodeInvalidPlan, "the plan's planFingerprint is not a SHA-256")
	}
	return m, fp, nil
}

// selector restricts the devices a shard may run on; empty fields do not
// constrain.
type selector struct {
	DeviceIDs    []string          `json:"deviceIds,omitempty"`
	Serials      []string          `json:"serials,omitempty"`
	Platform     string            `json:"platform,omitempty"`
	MinAPILevel  int               `json:"minApiLevel,omitempty"`
	MaxAPILevel  int               `json:"maxApiLevel,omitempty"`
	Capabilities []string          `json:"capabilities,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
}

// Matches reports whether d satisfies the selector.
func (s *selector) Matches(d *Device) bool {
	switch {
	case len(s.DeviceIDs) > 0 && !slices.Contains(s.DeviceIDs, d.DeviceID),
		len(s.Serials) > 0 && !slices.Contains(s.Serials, d.Serial),
		s.Platform != "" && d.Platform != s.Platform,
		s.MinAPILevel > 0 && d.APILevel < s.MinAPILevel,
		s.MaxAPILevel > 0 && d.APILevel > s.MaxAPILevel:
		return false
	}
	for _, c := range s.Capabilities {
		if !slices.Contains(d.Capabilities, c) {
			return false
		}
	}
	for k, v := range s.Labels {
		if got, ok := d.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// target is one expanded matrix entry: a shard to create.
type target struct {
	TargetID     string
	TargetIndex  int
	ReplicaIndex int
	// Selector is the normalized selector as a JSON tree (it is hashed into
	// the request fingerprint and stored verbatim).
	Selector map[string]any
}

var selectorFields = []string{"deviceIds", "serials", "platform", "minApiLevel", "maxApiLevel", "capabilities", "labels"}

// expandMatrix normalizes a device matrix (a JSON array of {id, replicas?,
// selector?}) and expands it into one shard per replica, at most 64.
func expandMatrix(v any) ([]target, error) {
	targets, err := want.List(v, "device matrix", false)
	if err != nil {
		return nil, err
	}
	var out []target
	seen := map[string]bool{}
	for ti, raw := range targets {
		t, err := want.Object(raw, "device matrix target")
		if err != nil {
			return nil, err
		}
		if unknown := canonjson.UnknownKeys(t, "id", "replicas", "selector"); len(unknown) > 0 {
			return nil, storeError(fault.CodeInvalidMatrix, "a device matrix target has unknown fields").With("fields", unknown)
		}
		id, err := identifier(t["id"], "matrix target id")
		if err != nil {
			return nil, err
		}
		if seen[id] {
			return nil, storeError(fault.CodeDuplicateID, "a device matrix target id is repeated").With("id", id)
		}
		seen[id] = true
		replicas := int64(1)
		if r, ok := t["replicas"]; ok {
			if replicas, err = integer(r, "matrix replicas", 1, maxReplicas); err != nil {
				return nil, err
			}
		}
		sel := map[string]any{}
		if raw, ok := t["selector"]; ok {
			if sel, err = normalizeSelector(raw); err != nil {
				return nil, err
			}
		}
		for r := range int(replicas) {
			out = append(out, target{TargetID: id, TargetIndex: ti, ReplicaIndex: r, Selector: sel})
		}
	}
	if len(out) > maxMatrixShards {
		return nil, storeError(fault.CodeInvalidMatrix, "the expanded device matrix has more than 64 shards").
			With("maximum", maxMatrixShards).With("actual", len(out))
	}
	return out, nil
}

func normalizeSelector(raw any) (map[string]any, error) {
	in, err := want.Object(raw, "device selector")
	if err != nil {
		return nil, err
	}
	if unknown := canonjson.UnknownKeys(in, selectorFields...); len(unknown) > 0 {
		return nil, storeError(fault.CodeInvalidSelector, "a device selector has unknown fields").With("fields", unknown)
	}
	out := map[string]any{}
	for _, f := range []string{"deviceIds", "serials", "capabilities"} {
		v, ok := in[f]
		if !ok {
			continue
		}
		items, err := want.List(v, "selector."+f, false)
		if err != nil {
			return nil, err
		}
		ids := make([]any, len(items))
		for i, item := range items {
			if ids[i], err = identifier(item, "selector "+f+" value"); err != nil {
				return nil, err
			}
		}
		out[f] = ids
	}
	if v, ok := in["platform"]; ok {
		p, err := identifier(v, "selector platform")
		if err != nil {
			return nil, err
		}
		out["platform"] = strings.ToLower(p)
	}
	for _, f := range []string{"minApiLevel", "maxApiLevel"} {
		if v, ok := in[f]; ok {
			n, err := integer(v, "selector."+f, 1, 1000)
			if err != nil {
				return nil, err
			}
			out[f] = n
		}
	}
	if lo, ok := out["minApiLevel"].(int64); ok {
		if hi, ok := out["maxApiLevel"].(int64); ok && lo > hi {
			return nil, storeError(fault.CodeInvalidSelector, "the selector's minApiLevel is above its maxApiLevel")
		}
	}
	if v, ok := in["labels"]; ok {
		labels, err := want.Object(v, "selector.labels")
		if err != nil {
			return nil, err
		}
		norm := map[string]any{}
		for k, val := range labels {
			nk, err := identifier(k, "selector label key")
			if err != nil {
				return nil, err
			}
			if norm[nk], err = identifier(val, "selector label value"); err != nil {
				return nil, err
			}
		}
		out["labels"] = norm
	}
	return out, nil
}

// normalizeDevice checks a device registration.
func normalizeDevice(spec DeviceSpec) (DeviceSpec, error) {
	var err error
	out := DeviceSpec{Health: spec.Health, Labels: map[string]string{}}
	if out.DeviceID, err = identifier(spec.DeviceID, "device id"); err != nil {
		return out, err
	}
	if out.Serial, err = identifier(spec.Serial, "adb serial"); err != nil {
		return out, err
	}
	platform := spec.Platform
	if platform == "" {
		platform = "android"
	}
	if out.Platform, err = identifier(platform, "device platform"); err != nil {
		return out, err
	}
	out.Platform = strings.ToLower(out.Platform)
	if spec.APILevel < 1 || spec.APILevel > 1000 {
		return out, storeError(fault.CodeInvalidContract, "device API level must be an integer from 1 to 1000")
	}
	out.APILevel = spec.APILevel
	if out.Health == "" {
		out.Health = HealthHealthy
	}
	if !validHealth(out.Health) {
		return out, storeError(fault.CodeInvalidHealth, "device health must be healthy, degraded, offline or quarantined").With("health", out.Health)
	}
	caps := []string{}
	for _, c := range spec.Capabilities {
		id, err := identifier(c, "device capability")
		if err != nil {
			return out, err
		}
		if !slices.Contains(caps, id) {
			caps = append(caps, id)
		}
	}
	slices.Sort(caps)
	out.Capabilities = caps
	for k, v := range spec.Labels {
		nk, err := identifier(k, "device label key")
		if err != nil {
			return out, err
		}
		if out.Labels[nk], err = identifier(v, "device label value"); err != nil {
			return out, err
		}
	}
	return out, nil
}

// validHealth reports whether h is a device health value.
func validHealth(h string) bool {
	return h == HealthHealthy || h == HealthDegraded || h == HealthOffline || h == HealthQuarantined
}
