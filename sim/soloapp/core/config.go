package core

import (
	"strconv"
	"strings"

	"github.com/solopi-dev/solopi/canonjson"
	"github.com/solopi-dev/solopi/protocol"
)

// Setting keys the device side reads itself.
const (
	KeyOutputCharset      = "KEY_OUTPUT_CHARSET"
	KeyUseLanguage        = "KEY_USE_LANGUAGE"
	KeyRestartAppOnPlay   = "KEY_RESTART_APP_ON_PLAY"
	KeyDisplaySystemApp   = "KEY_DISPLAY_SYSTEM_APP"
	KeyReplayAutoStart    = "KEY_REPLAY_AUTO_START"
	KeyMaxWaitTime        = "KEY_MAX_WAIT_TIME"
	KeyScreenFactorRotate = "KEY_SCREEN_FACTOR_ROTATION"
	KeyScreenRotation     = "KEY_SCREEN_ROTATION"
	KeyAESKey             = "KEY_AES_KEY"
	KeyControlPort        = "KEY_CONTROL_PORT"
	keyPatchURL           = "KEY_PATCH_URL"
)

// configSpec is one allowlisted key (docs/device-protocol.md#config).
type configSpec struct {
	Key, typ, desc string
	def            any // bool, int64 or string
	Writable       bool
	Sensitive      bool
	min, max       *int64
}

func rng(lo, hi int64) (*int64, *int64) { return &lo, &hi }

// ConfigSpecs returns the 25 keys in list order. A function, not a
// package variable, so no caller can mutate another's table.
func ConfigSpecs() []configSpec {
	s := func(key, typ string, def any, writable, sensitive bool, desc string) configSpec {
		return configSpec{Key: key, typ: typ, def: def, Writable: writable, Sensitive: sensitive, desc: desc}
	}
	r := func(c configSpec, lo, hi int64) configSpec { c.min, c.max = rng(lo, hi); return c }
	return []configSpec{
		s("KEY_PERFORMANCE_UPLOAD", "string", "", false, false, "性能数据上传地址"),
		s("KEY_RECORD_SCREEN_UPLOAD", "string", "", false, false, "响应耗时录屏上传地址"),
		s(keyPatchURL, "string", "https://raw.githubusercontent.com/alipay/SoloPi/master/<abi>.json", false, false, "插件源地址"),
		s(KeyOutputCharset, "string", "GBK", true, false, "导出文件编码"),
		r(s(KeyUseLanguage, "int", int64(0), true, false, "界面语言：0 跟随系统，1 中文，2 English"), 0, 2),
		s("KEY_ALLOW_REPLAY_DIFFERENT_APP", "boolean", false, true, false, "允许跨应用回放"),
		s(KeyRestartAppOnPlay, "boolean", true, true, false, "回放前重启目标应用"),
		s(KeyDisplaySystemApp, "boolean", false, true, false, "目标应用列表显示系统应用"),
		s(KeyReplayAutoStart, "boolean", false, true, false, "进入回放后自动开始"),
		s("KEY_RECORD_COVER_MODE", "boolean", false, true, false, "录制覆盖模式"),
		s("KEY_SKIP_ACCESSIBILITY", "boolean", true, true, false, "跳过自动开启辅助功能"),
		r(s(KeyMaxWaitTime, "long", int64(10000), true, false, "页面节点最长等待毫秒数"), 1, 600000),
		r(s("KEY_MAX_SCROLL_FIND_COUNT", "int", int64(2), true, false, "滑动查找节点的最大次数"), 0, 100),
		r(s("KEY_AUTO_CLEAR_FILES_DAYS", "int", int64(3), true, false, "自动清理文件天数，-1 表示关闭"), -1, 3650),
		r(s("KEY_SCREENSHOT_RESOLUTION", "int", int64(720), true, false, "截图短边分辨率"), 1, 4320),
		s("KEY_HIGHLIGHT_REPLAY_NODE", "boolean", true, true, false, "回放时高亮目标节点"),
		s("KEY_CHECK_UPDATE", "boolean", true, true, false, "启动时检查更新"),
		s("KEY_ADB_SERVER", "string", "localhost:5555", false, false, "SoloPi 内部 ADB 地址"),
		s("KEY_HIDE_LOG", "boolean", true, true, false, "日志隐藏节点敏感信息"),
		r(s(KeyScreenFactorRotate, "int", int64(0), true, false, "默认屏幕方向索引：0/1/2/3（对应 0/90/180/270 度）"), 0, 3),
		s(KeyScreenRotation, "boolean", false, true, false, "交换屏幕坐标轴"),
		s("KEY_GLOBAL_SETTINGS", "json", "{}", false, true, "全局参数 JSON 对象（敏感，仅 App UI）"),
		s(KeyAESKey, "string", protocol.DefaultPackage, false, true, "用例参数加密密钥（修改会迁移历史用例）"),
		s("KEY_BASE_DIR", "string", "", false, false, "SoloPi 数据根目录（修改会切换存储目录）"),
		r(s(KeyControlPort, "int", int64(23342), false, false, "本地控制服务端口（修改会中断当前控制会话）"), 5000, 65535),
	}
}

func ConfigSpecByKey(key string) (configSpec, bool) {
	for _, s := range ConfigSpecs() {
		if s.Key == key {
			return s, true
		}
	}
	return configSpec{}, false
}

// supportedCharsets are the charsets the simulated JVM knows
// (Charset.isSupported), compared case-insensitively.
var supportedCharsets = []string{"GBK", "UTF-8", "UTF-16", "ISO-8859-1", "US-ASCII", "GB2312", "GB18030", "BIG5"}

// Parse normalizes a wire value for this key. It returns the typed value or
// the device's error message.
func (s configSpec) Parse(v string) (any, string) {
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
		n, ok := JavaParseLong(v)
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
		if err := canonjson.Unmarshal([]byte(v), &m); err != nil || m == nil {
			return nil, "JSON config requires an object"
		}
		return string(Encode(m, true)), ""
	default:
		if len([]rune(v)) > 4096 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7F }) {
			return nil, "String config is too long or contains control characters"
		}
		if s.Key == KeyOutputCharset {
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

// JavaParseLong is Long.parseLong: optional sign, ASCII decimal digits only.
func JavaParseLong(s string) (int64, bool) {
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
func (a *App) defaultValue(s configSpec) any {
	if s.Key == keyPatchURL {
		return strings.Replace(s.def.(string), "<abi>", a.Cfg.Device.SupportedAbis[0], 1)
	}
	return s.def
}

// settingLocked reads a preference with the spec's type; an unexpected
// stored type reads as the default.
func (a *App) settingLocked(key string) any {
	s, found := ConfigSpecByKey(key)
	if !found {
		return nil
	}
	v, present := a.Settings[key]
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

func (a *App) BoolSetting(key string) bool {
	b, _ := a.settingLocked(key).(bool)
	return b
}

func (a *App) IntSetting(key string) int64 {
	n, _ := a.settingLocked(key).(int64)
	return n
}

func (a *App) StringSetting(key string) string {
	s, _ := a.settingLocked(key).(string)
	return s
}

// SpecObj is the spec object in wire order; withValue adds redacted/value.
func (a *App) SpecObj(s configSpec, withValue bool) Obj {
	o := NewObj("key", s.Key, "type", s.typ, "description", s.desc, "default", a.defaultValue(s),
		"writable", s.Writable, "sensitive", s.Sensitive)
	if s.min != nil {
		o.Set("min", *s.min)
		o.Set("max", *s.max)
	}
	if withValue {
		o.Set("redacted", s.Sensitive)
		if !s.Sensitive {
			o.Set("value", a.settingLocked(s.Key))
		}
	}
	return o
}

// JavaString renders a parameter as Java's string concatenation would: a
// missing parameter is the literal "null".
func JavaString(q Params, k string) string {
	if v, ok := q[k]; ok {
		return v
	}
	return "null"
}
