package soloapp

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/protocol"
)

// Setting keys the device side reads itself.
const (
	keyOutputCharset      = "KEY_OUTPUT_CHARSET"
	keyUseLanguage        = "KEY_USE_LANGUAGE"
	keyRestartAppOnPlay   = "KEY_RESTART_APP_ON_PLAY"
	keyDisplaySystemApp   = "KEY_DISPLAY_SYSTEM_APP"
	keyReplayAutoStart    = "KEY_REPLAY_AUTO_START"
	keyMaxWaitTime        = "KEY_MAX_WAIT_TIME"
	keyScreenFactorRotate = "KEY_SCREEN_FACTOR_ROTATION"
	keyScreenRotation     = "KEY_SCREEN_ROTATION"
	keyAESKey             = "KEY_AES_KEY"
	keyControlPort        = "KEY_CONTROL_PORT"
	keyPatchURL           = "KEY_PATCH_URL"
)

// configSpec is one allowlisted key (docs/device-protocol.md#config).
type configSpec struct {
	key, typ, desc string
	def            any // bool, int64 or string
	writable       bool
	sensitive      bool
	min, max       *int64
}

func rng(lo, hi int64) (*int64, *int64) { return &lo, &hi }

// configSpecs returns the 25 keys in list order. A function, not a
// package variable, so no caller can mutate another's table.
func configSpecs() []configSpec {
	s := func(key, typ string, def any, writable, sensitive bool, desc string) configSpec {
		return configSpec{key: key, typ: typ, def: def, writable: writable, sensitive: sensitive, desc: desc}
	}
	r := func(c configSpec, lo, hi int64) configSpec { c.min, c.max = rng(lo, hi); return c }
	return []configSpec{
		s("KEY_PERFORMANCE_UPLOAD", "string", "", false, false, "性能数据上传地址"),
		s("KEY_RECORD_SCREEN_UPLOAD", "string", "", false, false, "响应耗时录屏上传地址"),
		s(keyPatchURL, "string", "https://raw.githubusercontent.com/alipay/SoloPi/master/<abi>.json", false, false, "插件源地址"),
		s(keyOutputCharset, "string", "GBK", true, false, "导出文件编码"),
		r(s(keyUseLanguage, "int", int64(0), true, false, "界面语言：0 跟随系统，1 中文，2 English"), 0, 2),
		s("KEY_ALLOW_REPLAY_DIFFERENT_APP", "boolean", false, true, false, "允许跨应用回放"),
		s(keyRestartAppOnPlay, "boolean", true, true, false, "回放前重启目标应用"),
		s(keyDisplaySystemApp, "boolean", false, true, false, "目标应用列表显示系统应用"),
		s(keyReplayAutoStart, "boolean", false, true, false, "进入回放后自动开始"),
		s("KEY_RECORD_COVER_MODE", "boolean", false, true, false, "录制覆盖模式"),
		s("KEY_SKIP_ACCESSIBILITY", "boolean", true, true, false, "跳过自动开启辅助功能"),
		r(s(keyMaxWaitTime, "long", int64(10000), true, false, "页面节点最长等待毫秒数"), 1, 600000),
		r(s("KEY_MAX_SCROLL_FIND_COUNT", "int", int64(2), true, false, "滑动查找节点的最大次数"), 0, 100),
		r(s("KEY_AUTO_CLEAR_FILES_DAYS", "int", int64(3), true, false, "自动清理文件天数，-1 表示关闭"), -1, 3650),
		r(s("KEY_SCREENSHOT_RESOLUTION", "int", int64(720), true, false, "截图短边分辨率"), 1, 4320),
		s("KEY_HIGHLIGHT_REPLAY_NODE", "boolean", true, true, false, "回放时高亮目标节点"),
		s("KEY_CHECK_UPDATE", "boolean", true, true, false, "启动时检查更新"),
		s("KEY_ADB_SERVER", "string", "localhost:5555", false, false, "SoloPi 内部 ADB 地址"),
		s("KEY_HIDE_LOG", "boolean", true, true, false, "日志隐藏节点敏感信息"),
		r(s(keyScreenFactorRotate, "int", int64(0), true, false, "默认屏幕方向索引：0/1/2/3（对应 0/90/180/270 度）"), 0, 3),
		s(keyScreenRotation, "boolean", false, true, false, "交换屏幕坐标轴"),
		s("KEY_GLOBAL_SETTINGS", "json", "{}", false, true, "全局参数 JSON 对象（敏感，仅 App UI）"),
		s(keyAESKey, "string", protocol.DefaultPackage, false, true, "用例参数加密密钥（修改会迁移历史用例）"),
		s("KEY_BASE_DIR", "string", "", false, false, "SoloPi 数据根目录（修改会切换存储目录）"),
		r(s(keyControlPort, "int", int64(23342), false, false, "本地控制服务端口（修改会中断当前控制会话）"), 5000, 65535),
	}
}

func configSpecByKey(key string) (configSpec, bool) {
	for _, s := range configSpecs() {
		if s.key == key {
			return s, true
		}
	}
	return configSpec{}, false
}

// supportedCharsets are the charsets the simulated JVM knows
// (Charset.isSupported), compared case-insensitively.
var supportedCharsets = []string{"GBK", "UTF-8", "UTF-16", "ISO-8859-1", "US-ASCII", "GB2312", "GB18030", "BIG5"}

// parse normalizes a wire value for this key. It returns the typed value or
// the device's error message.
func (s configSpec) parse(v string) (any, string) {
	switch s.typ {
	case "boolean":
		switch strings.ToLower(v) {
		case "true":
			return true, ""
		case "false":
			return false, ""
		}
		return nil, "Boolean config requires true or false"
	case "int", "long":
		n, ok := javaParseLong(v)
		if !ok {
			return nil, "Numeric config requires an integer"
		}
		if s.min != nil && (n < *s.min || n > *s.max) {
			return nil, "Config value is outside the supported range"
		}
		if s.typ == "int" {
			n = int64(int32(n))
		}
		return n, ""
	case "json":
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil || m == nil {
			return nil, "JSON config requires an object"
		}
		return string(encode(anyToValue(m), true)), ""
	default:
		if len([]rune(v)) > 4096 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7F }) {
			return nil, "String config is too long or contains control characters"
		}
		if s.key == keyOutputCharset {
			supported := false
			for _, c := range supportedCharsets {
				if strings.EqualFold(c, v) {
					supported = true
				}
			}
			if !supported {
				return nil, "Unsupported output charset"
			}
		}
		return v, ""
	}
}

// anyToValue converts decoded JSON into writer values.
func anyToValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = anyToValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = anyToValue(e)
		}
		return out
	case json.Number:
		return json.RawMessage(x.String())
	}
	return v
}

// javaParseLong is Long.parseLong: optional sign, ASCII decimal digits only.
func javaParseLong(s string) (int64, bool) {
	if s == "" || s == "+" || s == "-" {
		return 0, false
	}
	body := strings.TrimLeft(s[:1], "+-") + s[1:]
	for _, c := range body {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// defaultValue is the spec default with device-specific substitutions.
func (a *appCore) defaultValue(s configSpec) any {
	if s.key == keyPatchURL {
		return strings.Replace(s.def.(string), "<abi>", a.cfg.Device.SupportedAbis[0], 1)
	}
	return s.def
}

// settingLocked reads a preference with the spec's type; an unexpected
// stored type reads as the default.
func (a *appCore) settingLocked(key string) any {
	s, found := configSpecByKey(key)
	if !found {
		return nil
	}
	v, present := a.settings[key]
	if !present {
		return a.defaultValue(s)
	}
	switch s.typ {
	case "boolean":
		if _, ok := v.(bool); ok {
			return v
		}
	case "int", "long":
		if _, ok := v.(int64); ok {
			return v
		}
	default:
		if _, ok := v.(string); ok {
			return v
		}
	}
	return a.defaultValue(s)
}

func (a *appCore) boolSetting(key string) bool {
	b, _ := a.settingLocked(key).(bool)
	return b
}

func (a *appCore) intSetting(key string) int64 {
	n, _ := a.settingLocked(key).(int64)
	return n
}

func (a *appCore) stringSetting(key string) string {
	s, _ := a.settingLocked(key).(string)
	return s
}

// specObj is the spec object in wire order; withValue adds redacted/value.
func (a *appCore) specObj(s configSpec, withValue bool) obj {
	o := newObj("key", s.key, "type", s.typ, "description", s.desc, "default", a.defaultValue(s),
		"writable", s.writable, "sensitive", s.sensitive)
	if s.min != nil {
		o.set("min", *s.min)
		o.set("max", *s.max)
	}
	if withValue {
		o.set("redacted", s.sensitive)
		if !s.sensitive {
			o.set("value", a.settingLocked(s.key))
		}
	}
	return o
}

// config is the config resolver (docs/device-protocol.md#config).
func (a *App) config(p *process, via transport, q params) obj {
	action := q["action"]
	if action == "" && q.has("key") && q.has("value") {
		action = "set" // legacy form used by the reference host for auto-start
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch action {
	case "list":
		specs := configSpecs()
		list := make([]obj, 0, len(specs))
		for _, s := range specs {
			list = append(list, a.specObj(s, false))
		}
		return ok("count", len(list), "configs", list)
	case "get":
		s, found := configSpecByKey(q["key"])
		if !found {
			return e1(protocol.ErrUnsupportedConfig, "Unsupported config key: "+javaString(q, "key"))
		}
		return ok("config", a.specObj(s, true))
	case "set":
		if via != viaAdb {
			return e1(protocol.ErrMutationTransportRequired, "Config changes require the ADB scheme transport")
		}
		s, found := configSpecByKey(q["key"])
		if !found {
			return e1(protocol.ErrUnsupportedConfig, "Unsupported config key: "+javaString(q, "key"))
		}
		if !s.writable {
			if s.sensitive {
				return e1(protocol.ErrSensitiveConfigUIRequired, "This sensitive config is available only in the SoloPi UI: "+s.key)
			}
			return e1(protocol.ErrUIMigrationRequired, "This config changes stored data and must be updated in the SoloPi UI: "+s.key)
		}
		if !q.has("value") {
			return e1(protocol.ErrMissingValue, "Config value is required")
		}
		v, msg := s.parse(q["value"])
		if msg != "" {
			return e1(protocol.ErrInvalidConfigValue, msg)
		}
		if !a.faults.configIgnored[s.key] {
			a.settings[s.key] = v
			if s.key == keyScreenFactorRotate {
				n := v.(int64)
				a.settings[keyScreenRotation] = n == 1 || n == 3
			}
		}
		return ok("config", a.specObj(s, true))
	}
	return e1(protocol.ErrUnsupportedAction, "Unsupported config action")
}

// javaString renders a parameter as Java's string concatenation would: a
// missing parameter is the literal "null".
func javaString(q params, k string) string {
	if v, ok := q[k]; ok {
		return v
	}
	return "null"
}
