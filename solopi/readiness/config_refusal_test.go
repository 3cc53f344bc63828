package readiness

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
)

// The refusals solopi-ai completes from the device (a sensitive key, the
// control port, the base directory) carry the device's config object, a
// sensitive one redacted; other refusals and errors come back unchanged,
// and nothing is written.
func TestDeviceConfigRefusalReadsTheDevice(t *testing.T) {
	t.Parallel()
	dev := answering(t, newSimDevice(t))
	s := openTestSession(t, dev)
	ctx := context.Background()
	for key, want := range map[string]string{
		"KEY_AES_KEY":      protocol.ErrSensitiveConfigUIRequired,
		"KEY_CONTROL_PORT": fault.CodeNewSessionRequired,
		"KEY_BASE_DIR":     protocol.ErrUIMigrationRequired,
	} {
		_, _, refusal := CheckConfigSet(key, "x")
		if fault.CodeOf(refusal) != want || !NeedsDeviceConfig(refusal) {
			t.Fatalf("%s: refusal %v, want %s completed from the device", key, refusal, want)
		}
		f := fault.From(DeviceConfigRefusal(ctx, s, refusal))
		c := printed(t, f.Details["config"])
		if f.Code != want || c["key"] != key {
			t.Fatalf("%s: %s with config %v", key, f.Code, c)
		}
		assertNoSecrets(t, key, f.Details)
		if key == "KEY_AES_KEY" && (c["redacted"] != true || c["value"] != nil) {
			t.Errorf("the sensitive key's value shows: %v", c)
		}
		if key == "KEY_CONTROL_PORT" && c["value"] == nil {
			t.Errorf("the control port's device value is missing: %v", c)
		}
	}
	if n := len(dev.MutationsWith("action=set")); n != 0 {
		t.Fatalf("a refusal wrote %d config values", n)
	}
	_, _, other := CheckConfigSet("KEY_PATCH_URL", "https://example.com")
	if NeedsDeviceConfig(other) || DeviceConfigRefusal(ctx, s, other) != other {
		t.Errorf("a refusal solopi-ai answers locally was completed: %v", other)
	}
	plain := errors.New("not a fault")
	if NeedsDeviceConfig(plain) || DeviceConfigRefusal(ctx, s, plain) != plain {
		t.Error("a plain error was changed")
	}
	// An interrupted read is the interrupt, not the refusal.
	_, _, refusal := CheckConfigSet("KEY_AES_KEY", "x")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := DeviceConfigRefusal(cancelled, s, refusal); !fault.IsInterrupt(err) {
		t.Errorf("an interrupted read: %v", err)
	}
}

// A refusal made from the table prints the key's description as the
// device's config object spells it: a range as min and max, a sensitive
// key redacted with a null value.
func TestConfigSpecPrinted(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"KEY_AES_KEY":      `{"key":"KEY_AES_KEY","redacted":true,"sensitive":true,"type":"string","value":null,"writable":false}`,
		"KEY_CONTROL_PORT": `{"key":"KEY_CONTROL_PORT","max":65535,"min":5000,"sensitive":false,"type":"int","writable":false}`,
		"KEY_USE_LANGUAGE": `{"key":"KEY_USE_LANGUAGE","max":2,"min":0,"sensitive":false,"type":"int","writable":true}`,
		"KEY_PATCH_URL":    `{"key":"KEY_PATCH_URL","sensitive":false,"type":"string","writable":false}`,
	} {
		k, _ := lookupConfigKey(key)
		if got, _ := json.Marshal(k.spec()); string(got) != want {
			t.Errorf("%s: %s, want %s", key, got, want)
		}
	}
}
