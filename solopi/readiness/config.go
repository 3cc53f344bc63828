package readiness

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/fault"
	"github.com/solopi-dev/solopi/protocol"
	"github.com/solopi-dev/solopi/solopi/device"
)

// Config value types as the device spells them.
const (
	configBoolean = "boolean"
	configInt     = "int"
	configLong    = "long"
	configString  = "string"
	configJSON    = "json"
)

// configKey is one row of SoloPi 1.0.2's config allowlist (docs/device-protocol.md). The table is local so that refusals and validation happen before
// the device is touched.
type configKey struct {
	Key       string
	Type      string
	Writable  bool
	Sensitive bool
	// HasRange tells whether Min and Max apply (the device's min/max).
	HasRange bool
	Min, Max int64
	// Refusal is the errorCode config-set answers for a writable=false key.
	Refusal string
}

func configRange(k configKey, lo, hi int64) configKey {
	k.HasRange, k.Min, k.Max = true, lo, hi
	return k
}

// configTable is the allowlist in the device's list order.
var configTable = []configKey{
	{Key: "KEY_PERFORMANCE_UPLOAD", Type: configString, Refusal: fault.CodeUIConfirmationRequired},
	{Key: "KEY_RECORD_SCREEN_UPLOAD", Type: configString, Refusal: fault.CodeUIConfirmationRequired},
	{Key: "KEY_PATCH_URL", Type: configString, Refusal: fault.CodeUIConfirmationRequired},
	{Key: "KEY_OUTPUT_CHARSET", Type: configString, Writable: true},
	configRange(configKey{Key: "KEY_USE_LANGUAGE", Type: configInt, Writable: true}, 0, 2),
	{Key: "KEY_ALLOW_REPLAY_DIFFERENT_APP", Type: configBoolean, Writable: true},
	{Key: "KEY_RESTART_APP_ON_PLAY", Type: configBoolean, Writable: true},
	{Key: "KEY_DISPLAY_SYSTEM_APP", Type: configBoolean, Writable: true},
	{Key: "KEY_REPLAY_AUTO_START", Type: configBoolean, Writable: true},
	{Key: "KEY_RECORD_COVER_MODE", Type: configBoolean, Writable: true},
	{Key: "KEY_SKIP_ACCESSIBILITY", Type: configBoolean, Writable: true},
	configRange(configKey{Key: "KEY_MAX_WAIT_TIME", Type: configLong, Writable: true}, 1, 600000),
	configRange(configKey{Key: "KEY_MAX_SCROLL_FIND_COUNT", Type: configInt, Writable: true}, 0, 100),
	configRange(configKey{Key: "KEY_AUTO_CLEAR_FILES_DAYS", Type: configInt, Writable: true}, -1, 3650),
	configRange(configKey{Key: "KEY_SCREENSHOT_RESOLUTION", Type: configInt, Writable: true}, 1, 4320),
	{Key: "KEY_HIGHLIGHT_REPLAY_NODE", Type: configBoolean, Writable: true},
	{Key: "KEY_CHECK_UPDATE", Type: configBoolean, Writable: true},
	{Key: "KEY_ADB_SERVER", Type: configString, Refusal: fault.CodeUIConfirmationRequired},
	{Key: "KEY_HIDE_LOG", Type: configBoolean, Writable: true},
	configRange(configKey{Key: "KEY_SCREEN_FACTOR_ROTATION", Type: configInt, Writable: true}, 0, 3),
	{Key: "KEY_SCREEN_ROTATION", Type: configBoolean, Writable: true},
	{Key: "KEY_GLOBAL_SETTINGS", Type: configJSON, Sensitive: true, Refusal: protocol.ErrSensitiveConfigUIRequired},
	{Key: "KEY_AES_KEY", Type: configString, Sensitive: true, Refusal: protocol.ErrSensitiveConfigUIRequired},
	{Key: "KEY_BASE_DIR", Type: configString, Refusal: protocol.ErrUIMigrationRequired},
	configRange(configKey{Key: "KEY_CONTROL_PORT", Type: configInt}, 5000, 65535).withRefusal(fault.CodeNewSessionRequired),
}

func (k configKey) withRefusal(code string) configKey { k.Refusal = code; return k }

// configKeys returns the allowlist in list order.
func configKeys() []configKey { return slices.Clone(configTable) }

// lookupConfigKey finds a key of the allowlist.
func lookupConfigKey(key string) (configKey, bool) {
	for _, k := range configTable {
		if k.Key == key {
			return k, true
		}
	}
	return configKey{}, false
}

// sensitiveKey reports whether key's value must never be printed.
func sensitiveKey(key string) bool {
	k, ok := lookupConfigKey(key)
	return ok && k.Sensitive
}

var refusalMessages = map[string]string{
	fault.CodeUIConfirmationRequired:      "this setting sends data to or loads code from another address; change it in the SoloPi app, where the change is confirmed",
	protocol.ErrSensitiveConfigUIRequired: "this sensitive setting is available only in the SoloPi app",
	fault.CodeNewSessionRequired:          "changing the control port interrupts the current control session; change it in the SoloPi app and reconnect with --device-port",
	protocol.ErrUIMigrationRequired:       "this setting changes stored data and must be updated in the SoloPi app",
}

var refusalActions = map[string]string{
	fault.CodeUIConfirmationRequired:      "Open SoloPi on the phone, go to Settings and change the value there.",
	protocol.ErrSensitiveConfigUIRequired: "Open SoloPi on the phone, go to Settings and change the value there; it is never read or written by the CLI.",
	fault.CodeNewSessionRequired:          "Change the port in SoloPi's Settings on the phone, then pass the new port with --device-port.",
	protocol.ErrUIMigrationRequired:       "Open SoloPi on the phone, go to Settings and change the value there so SoloPi can migrate its data.",
}

// CheckConfigSet validates a config-set request locally: bad values are
// usage errors (exit 3); unknown and read-only keys are refused (exit 2).
// It returns the key and the normalized value that will be sent.
func CheckConfigSet(key, value string) (configKey, string, error) {
	k, ok := lookupConfigKey(key)
	if !ok {
		return k, "", unsupportedConfig(key)
	}
	if !k.Writable {
		return k, "", fault.New(fault.Failed, k.Refusal, k.Key+": "+refusalMessages[k.Refusal]).
			WithUserAction(refusalActions[k.Refusal]).With("key", k.Key).With("config", k.spec())
	}
	norm, err := normalizeConfigValue(k, value)
	if err != nil {
		return k, "", err
	}
	return k, norm, nil
}

// DeviceConfigRefusal is a refusal of CheckConfigSet that solopi-ai makes
// after reading the key from the device (sensitive, control port, not
// writable): the error then carries the device's config object (its
// description, default, value or redaction) as solopi-ai prints it. The
// read is a query; nothing is written. Other errors, and a refusal whose
// key cannot be read, come back unchanged.
func DeviceConfigRefusal(ctx context.Context, s *device.Session, refusal error) error {
	e, ok := refusal.(*fault.Error)
	if !ok || (e.Code != protocol.ErrSensitiveConfigUIRequired && e.Code != fault.CodeNewSessionRequired && e.Code != protocol.ErrUIMigrationRequired) {
		return refusal
	}
	key, _ := e.Details["key"].(string)
	c, err := getConfig(ctx, s, key)
	if err != nil {
		if fault.IsInterrupt(err) {
			return err
		}
		return refusal
	}
	return e.With("config", c)
}

// NeedsDeviceConfig reports whether a CheckConfigSet refusal is one that
// DeviceConfigRefusal completes from the device.
func NeedsDeviceConfig(refusal error) bool {
	switch fault.CodeOf(refusal) {
	case protocol.ErrSensitiveConfigUIRequired, fault.CodeNewSessionRequired, protocol.ErrUIMigrationRequired:
		return true
	}
	return false
}

// CheckConfigKey refuses a key outside the allowlist (exit 2, as the
// device's own unsupported_config answer).
func CheckConfigKey(key string) error {
	if _, ok := lookupConfigKey(key); !ok {
		return unsupportedConfig(key)
	}
	return nil
}

func unsupportedConfig(key string) *fault.Error {
	names := make([]string, len(configTable))
	for i, k := range configTable {
		names[i] = k.Key
	}
	return fault.Newf(fault.Failed, fault.CodeUnsupportedConfig, "unsupported config key %q", key).With("key", key).With("supportedKeys", names)
}

// normalizeConfigValue parses value like the device does (docs/device-protocol.md) and returns its canonical text.
func normalizeConfigValue(k configKey, value string) (string, error) {
	invalid := func(msg string) error {
		e := fault.Usage(protocol.ErrInvalidConfigValue, k.Key+": "+msg).With("key", k.Key).With("type", k.Type)
		if k.HasRange {
			e.With("min", k.Min).With("max", k.Max)
		}
		return e
	}
	switch k.Type {
	case configBoolean:
		switch strings.ToLower(value) {
		case "true":
			return "true", nil
		case "false":
			return "false", nil
		}
		return "", invalid("a boolean setting takes true or false")
	case configInt, configLong:
		if !javaLongSyntax(value) {
			return "", invalid("a numeric setting takes a decimal integer")
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return "", invalid("a numeric setting takes a decimal integer within 64 bits")
		}
		if k.HasRange && (n < k.Min || n > k.Max) {
			return "", invalid("value " + strconv.FormatInt(n, 10) + " is outside " + strconv.FormatInt(k.Min, 10) + ".." + strconv.FormatInt(k.Max, 10))
		}
		return strconv.FormatInt(n, 10), nil
	case configString:
		if len(utf16.Encode([]rune(value))) > 4096 {
			return "", invalid("a string setting takes at most 4096 characters")
		}
		for _, r := range value {
			if r < 0x20 || r == 0x7f {
				return "", invalid("a string setting must not contain control characters")
			}
		}
		if k.Key == "KEY_OUTPUT_CHARSET" && !supportedCharset(value) {
			return "", invalid("unsupported output charset " + strconv.Quote(value))
		}
		return value, nil
	case configJSON:
		var obj map[string]any
		if err := json.Unmarshal([]byte(value), &obj); err != nil || obj == nil {
			return "", invalid("a JSON setting takes a JSON object")
		}
		b, _ := json.Marshal(obj)
		return string(b), nil
	}
	return "", invalid("unknown setting type " + k.Type)
}

// javaLongSyntax is Long.parseLong's grammar: an optional sign, then ASCII
// decimal digits only.
func javaLongSyntax(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// knownCharsets are charset names and aliases every Android release
// supports (java.nio plus ICU's common set), lower-cased. A name outside
// this list would be silently refused by the device, so it is refused here.
var knownCharsets = []string{
	"utf-8", "utf8", "gbk", "cp936", "windows-936", "gb2312", "euc-cn", "gb18030", "big5", "big5-hkscs",
	"us-ascii", "ascii", "iso-8859-1", "latin1", "iso8859_1", "iso-8859-2", "iso-8859-5", "iso-8859-7",
	"iso-8859-9", "iso-8859-15", "utf-16", "utf-16le", "utf-16be", "utf-32", "utf-32le", "utf-32be",
	"windows-1250", "windows-1251", "windows-1252", "windows-1253", "windows-1254", "windows-1257",
	"shift_jis", "sjis", "windows-31j", "euc-jp", "iso-2022-jp", "euc-kr", "windows-949", "koi8-r", "koi8-u",
	"cesu-8", "tis-620", "windows-874",
}

func supportedCharset(s string) bool { return slices.Contains(knownCharsets, strings.ToLower(s)) }

// leaksValue reports a sensitive config object that carries a value.
func leaksValue(c device.WireObject) bool {
	if s, _ := c.Flag("sensitive"); !s && !sensitiveKey(c.Str("key")) {
		return false
	}
	redacted, _ := c.Flag("redacted")
	return c.Has("value") || !redacted
}

func exposedError(key string) error {
	// Never attach the response: it holds the value we must not print.
	return fault.Newf(fault.Transport, fault.CodeSensitiveValueExposed,
		"the device did not redact the sensitive setting %s; its value is withheld", key).With("key", key).With("redacted", true)
}

// scrubResponse drops the raw body that the device channel attaches to an
// unparsable answer: a config body may hold a sensitive value.
func scrubResponse(err error) error {
	var e *fault.Error
	if errors.As(err, &e) && e.Details != nil {
		delete(e.Details, "response")
	}
	return err
}

// deviceE1Error turns an E1 answer into an exit-2 error with the device's
// own errorCode.
func deviceE1Error(r device.WireObject, what string) error {
	code := r.Str("errorCode")
	if code == "" {
		code = fault.CodeDeviceRejected
	}
	msg := r.Str("error")
	if msg == "" {
		msg = "SoloPi refused the " + what + " request"
	}
	return fault.New(fault.Failed, code, msg).With("response", device.SanitizedDeviceError(r))
}

// ConfigList runs config?action=list with every sensitive value removed.
func ConfigList(ctx context.Context, s *device.Session) (*configListResult, error) {
	r, err := s.Device.Query(ctx, protocol.ActionConfig, device.P(protocol.ParamAction, "list"))
	if err != nil {
		return nil, scrubResponse(err)
	}
	switch ok, isBool := r.Flag("success"); {
	case !isBool:
		return nil, fault.New(fault.Transport, fault.CodeInvalidDeviceResponse, "config list answer has no boolean success")
	case !ok:
		return nil, deviceE1Error(r, "config list")
	}
	list, isArray := r["configs"].([]any)
	if !isArray {
		return nil, fault.New(fault.Transport, fault.CodeInvalidDeviceResponse, "config list answer has no configs array")
	}
	configs := []configObject{}
	for _, e := range list {
		m, isObj := e.(map[string]any)
		if c := device.WireObject(m); isObj && leaksValue(c) && c.Has("value") {
			return nil, exposedError(c.Str("key"))
		}
		if !isObj {
			return nil, fault.New(fault.Transport, fault.CodeInvalidDeviceResponse, "config list entry is not an object")
		}
		configs = append(configs, redactConfig(m))
	}
	return &configListResult{Success: true, Count: len(configs), Configs: configs}, nil
}

// ConfigGet runs config?action=get for key. A sensitive key must come back
// redacted with no value, otherwise exit 4 (and the value is never shown).
func ConfigGet(ctx context.Context, s *device.Session, key string) (*configGetResult, error) {
	if err := CheckConfigKey(key); err != nil {
		return nil, err
	}
	c, err := getConfig(ctx, s, key)
	if err != nil {
		return nil, err
	}
	return &configGetResult{Success: true, Config: c}, nil
}

// getConfig returns the redacted config object of key.
func getConfig(ctx context.Context, s *device.Session, key string) (configObject, error) {
	r, err := s.Device.Query(ctx, protocol.ActionConfig, device.P(protocol.ParamAction, "get", protocol.ParamKey, key))
	if err != nil {
		return configObject{}, scrubResponse(err)
	}
	switch ok, isBool := r.Flag("success"); {
	case !isBool:
		return configObject{}, fault.New(fault.Transport, fault.CodeInvalidDeviceResponse, "config get answer has no boolean success")
	case !ok:
		return configObject{}, deviceE1Error(r, "config get")
	}
	m, isObj := r["config"].(map[string]any)
	c := device.WireObject(m)
	if !isObj || c.Str("key") != key {
		return configObject{}, fault.Newf(fault.Transport, fault.CodeInvalidDeviceResponse, "config get for %s answered another or no config object", key).With("key", key)
	}
	if leaksValue(c) {
		return configObject{}, exposedError(key)
	}
	return redactConfig(m), nil
}

// ConfigSetOptions configure ConfigSet.
type ConfigSetOptions struct {
	AckTimeout   time.Duration // --ack-timeout, default 15 s
	PollInterval time.Duration // --poll-interval, default 200 ms
}

// configSetResult is the config-set command's object.
type configSetResult struct {
	Success       bool         `json:"success"`
	Confirmed     bool         `json:"confirmed"`
	Key           string       `json:"key"`
	Type          string       `json:"type"`
	ExpectedValue any          `json:"expectedValue"`
	PreviousValue any          `json:"previousValue"`
	ActualValue   any          `json:"actualValue"`
	Config        configObject `json:"config"`
}

// ConfigSet writes one setting through the protected activity and confirms
// it only when the same key read back over HTTP has the normalized value.
func ConfigSet(ctx context.Context, s *device.Session, key, value string, opts ConfigSetOptions) (*configSetResult, error) {
	if opts.AckTimeout <= 0 {
		opts.AckTimeout = 15 * time.Second
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 200 * time.Millisecond
	}
	k, norm, err := CheckConfigSet(key, value)
	if err != nil {
		return nil, err
	}
	before, err := getConfig(ctx, s, k.Key)
	if err != nil {
		return nil, err
	}
	if err := checkConfigSpec(k, before.device); err != nil {
		return nil, err
	}
	want := typedConfigValue(k, norm)
	res := &configSetResult{Key: k.Key, Type: k.Type, ExpectedValue: want, PreviousValue: before.value()}
	actx, cancel := context.WithTimeout(ctx, opts.AckTimeout)
	defer cancel()
	if err := s.Device.Mutate(actx, protocol.ActionConfig, device.P(protocol.ParamAction, "set", protocol.ParamKey, k.Key, protocol.ParamValue, norm)); err != nil {
		if ctx.Err() != nil {
			return nil, device.Interrupted(ctx)
		}
		return nil, err
	}
	last := before
	var lastErr error
	interrupted := func() error {
		return fault.From(device.Interrupted(ctx)).With("key", k.Key).With("expectedValue", value).With("expectedTypedValue", want)
	}
	err = device.PollUntil(actx, device.PollOptions{Timeout: opts.AckTimeout, Interval: opts.PollInterval, Initial: opts.PollInterval, Clock: s.Device.Clock()}, func(_ context.Context) (bool, error) {
		c, err := getConfig(actx, s, k.Key)
		if ctx.Err() != nil {
			return false, interrupted()
		}
		switch {
		case err == nil:
			last, lastErr = c, nil
			if configValueEqual(k, c.value(), want) {
				res.Success, res.Confirmed, res.ActualValue, res.Config = true, true, c.value(), c
				return true, nil
			}
		case configTransient(err):
			// KEY_USE_LANGUAGE restarts every SoloPi service, the HTTP
			// server included: an unreachable server is expected for a
			// moment and the budget decides.
			lastErr = err
		default:
			return false, err
		}
		return false, nil
	})
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, interrupted()
	case !errors.Is(err, device.ErrPollTimeout) && actx.Err() == nil:
		return nil, err
	}
	e := fault.Newf(fault.Failed, fault.CodeConfigNotConfirmed,
		"SoloPi did not confirm %s within --ack-timeout: it still reads back another value", k.Key).
		// expectedValue is solopi-ai's (--value as given), the typed value
		// ours beside it.
		With("key", k.Key).With("expectedValue", value).With("expectedTypedValue", want).With("actualValue", last.value()).
		With("lastConfig", last).With("phase", "config-set").
		WithUserAction("Open SoloPi on the phone and check that the setting can be changed there; a setting the app refuses is left unchanged.")
	if lastErr != nil {
		device.WithLastError(e, lastErr)
	}
	return nil, e
}

func configTransient(err error) bool {
	var e *fault.Error
	return errors.As(err, &e) && (e.Code == fault.CodeControlServiceUnreachable || e.Code == fault.CodeControlServiceNotReady)
}

// checkConfigSpec cross-checks the device's spec of a key with the local table:
// a device that disagrees is not the SoloPi this table describes.
func checkConfigSpec(k configKey, c map[string]any) error {
	var bad []string
	if c["type"] != k.Type {
		bad = append(bad, "type")
	}
	if w, _ := c["writable"].(bool); w != k.Writable {
		bad = append(bad, "writable")
	}
	if sv, _ := c["sensitive"].(bool); sv != k.Sensitive {
		bad = append(bad, "sensitive")
	}
	if k.HasRange {
		if !specNumEqual(c["min"], k.Min) {
			bad = append(bad, "min")
		}
		if !specNumEqual(c["max"], k.Max) {
			bad = append(bad, "max")
		}
	}
	if len(bad) > 0 {
		return fault.Newf(fault.Transport, fault.CodeConfigSpecMismatch, "the device's spec of %s differs from SoloPi 1.0.2's in %s", k.Key, strings.Join(bad, ", ")).
			With("key", k.Key).With("fields", bad)
	}
	return nil
}

func specNumEqual(v any, n int64) bool {
	i, ok := canonjson.Integer(v)
	return ok && i == n
}

// typedConfigValue is the normalized value as the device's JSON carries it.
func typedConfigValue(k configKey, norm string) any {
	switch k.Type {
	case configBoolean:
		return norm == "true"
	case configInt, configLong:
		n, _ := strconv.ParseInt(norm, 10, 64)
		return n
	}
	return norm
}

// configValueEqual compares a read-back value with the expected one by
// type: JSON bool, integer, exact string.
func configValueEqual(k configKey, got, want any) bool {
	switch k.Type {
	case configBoolean:
		g, ok := got.(bool)
		return ok && g == want.(bool)
	case configInt, configLong:
		g, ok := canonjson.Integer(got)
		return ok && g == want.(int64)
	case configJSON:
		gs, ok := got.(string)
		if !ok {
			return false
		}
		var a, b any
		return json.Unmarshal([]byte(gs), &a) == nil && json.Unmarshal([]byte(want.(string)), &b) == nil && configJSONEqual(a, b)
	}
	g, ok := got.(string)
	return ok && g == want.(string)
}

func configJSONEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
