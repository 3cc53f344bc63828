package perf

// Performance items, their recorded series, deterministic sample values and
// the CSV files a stopped recording leaves behind
// (docs/file-formats.md#performance-csv-files).

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/solopi-dev/solopi/sim/soloapp/core"
)

// perfItem is one built-in display item (docs/device-protocol.md#session-types).
type perfItem struct {
	key, en, zh string
	permissions []string
	trigger     string
}

// perfItems returns the eight built-ins sorted by key.
func perfItems() []perfItem {
	return []perfItem{
		{key: "Battery", en: "Battery", zh: "电池", permissions: []string{}, trigger: "清零"},
		{key: "CPU", en: "CPU", zh: "CPU", permissions: []string{"adb"}},
		{key: "FPS", en: "Frame Rate", zh: "帧率", permissions: []string{"adb", "toast:${com.alipay.hulu.shared:string/toast_message__turn_on_gfx_info}"}},
		{key: "Memory", en: "Memory", zh: "内存", permissions: []string{"adb"}},
		{key: "Network", en: "Network", zh: "网络", permissions: []string{"adb"}, trigger: "清零"},
		{key: "Response", en: "Response Time", zh: "响应耗时", permissions: []string{"android.settings.ACCESSIBILITY_SETTINGS"}},
		{key: "Status", en: "Process Status", zh: "进程状态", permissions: []string{"adb"}},
		{key: "Temperature", en: "Temperature(BETA)", zh: "温度(BETA)", permissions: []string{"adb"}},
	}
}

// englishLocked reports whether KEY_USE_LANGUAGE selects English (2); 0
// ("follow the system") is taken as a Chinese system, like the phones
// SoloPi's GBK default was written for.
func (a *Perf) englishLocked() bool { return a.IntSetting(core.KeyUseLanguage) == 2 }

func (it perfItem) name(english bool) string {
	if english {
		return it.en
	}
	return it.zh
}

// lookupItem resolves a requested key or display name (either language).
func lookupItem(s string) (perfItem, bool) {
	for _, it := range perfItems() {
		if s == it.key || s == it.en || s == it.zh {
			return it, true
		}
	}
	return perfItem{}, false
}

// perfSeries is one RecordPattern: a CSV file per series.
type perfSeries struct {
	name, unit, source string
	lo, hi             float64 // plausible value range
}

// seriesFor lists what an item records. Per-process series exist only with
// a target application; the source is the item key (or the /proc field for
// Status), which keeps same-named series of different items apart.
func seriesFor(key, target string, english bool) []perfSeries {
	zh := func(cn, en string) string {
		if english {
			return en
		}
		return cn
	}
	proc := target
	var out []perfSeries
	add := func(name, unit, source string, lo, hi float64) {
		out = append(out, perfSeries{name: name, unit: unit, source: source, lo: lo, hi: hi})
	}
	switch key {
	case "Battery":
		add(zh("实时电流", "Real-time Current"), "mA", key, 120, 480)
		add(zh("平均电流", "Average Current"), "mA", key, 200, 320)
		add(zh("实时功率", "Real-time Power"), "mW", key, 450, 1800)
		add(zh("平均功率", "Average Power"), "mW", key, 750, 1200)
	case "CPU":
		add(zh("全局占用", "Global Usage"), "%", key, 8, 65)
		if proc != "" {
			add(zh("应用进程-", "App Process-")+proc, "%", key, 1, 35)
		}
	case "FPS":
		add(zh("帧率", "Frame Rate"), zh("帧", "fps"), key, 48, 60)
		add(zh("延迟次数", "Jank Count"), zh("次", "times"), key, 0, 4)
		add(zh("最长延迟时间", "Max Jank Time"), "ms", key, 16, 120)
		add(zh("延迟占比", "Jank Ratio"), "%", key, 0, 8)
	case "Memory":
		add(zh("全局占用", "Global Usage"), "MB", key, 2800, 3600)
		if proc != "" {
			pid := pidOf(proc)
			add("PSS-"+pid, "MB", key, 90, 260)
			add("PrivateDirty-"+pid, "MB", key, 40, 140)
		}
	case "Network":
		add(zh("累计全局下行流量", "Total Global Downlink"), "KB", key, 0, 0)
		add(zh("累计全局上行流量", "Total Global Uplink"), "KB", key, 0, 0)
		add(zh("全局下行速率", "Global Downlink Speed"), "KB/S", key, 0, 900)
		add(zh("全局上行速率", "Global Uplink Speed"), "KB/S", key, 0, 120)
		if proc != "" {
			add(zh("进程下行速率-", "Process Downlink Speed-")+proc, "KB/S", key, 0, 600)
			add(zh("进程上行速率-", "Process Uplink Speed-")+proc, "KB/S", key, 0, 80)
		}
	case "Response":
		add(zh("响应耗时", "Response Time"), "ms", key, 80, 600)
		add(zh("刷新耗时", "Refresh Time"), "ms", key, 16, 200)
	case "Status":
		if proc != "" {
			name := zh("应用进程-", "App Process-") + proc
			add(name, "MB", "VmSize", 4000, 4400)
			add(name, "MB", "VmRSS", 150, 320)
			add(name, zh("个", "count"), "ThreadCount", 40, 90)
		}
	case "Temperature":
		add(zh("CPU温度", "CPU Temperature"), zh("度", "C"), key, 36, 48)
	}
	return out
}

// pidOf is a stable fake pid for a package.
func pidOf(pkg string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(pkg))
	return strconv.Itoa(10000 + int(h.Sum32()%20000))
}

// sampleValue is the series' deterministic value at device time ms: a smooth
// wave inside the series range, phase-shifted per series. Cumulative
// counters (range 0..0) grow linearly from the start.
func sampleValue(s perfSeries, startMs, atMs int64) float64 {
	if s.hi == 0 {
		return math.Round(float64(atMs-startMs)/1000*37.5*10) / 10
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(s.name + "\x00" + s.source))
	phase := float64(h.Sum32()%628) / 100
	t := float64(atMs) / 1000
	f := (math.Sin(t/3+phase) + 1) / 2
	return math.Round((s.lo+(s.hi-s.lo)*f)*10) / 10
}

// javaFloat renders a float the way Java's Float.toString does for the
// magnitudes SoloPi records (always with a fractional part).
func javaFloat(v float64) string {
	s := strconv.FormatFloat(float64(float32(v)), 'f', -1, 32)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// csvFileName is the recorded file name
// (docs/file-formats.md#performance-csv-files): the name truncated to 24
// characters and sanitized, the sanitized source, 16 hex digits of
// sha256(name\0source\0unit\0start\0end), start and end.
func csvFileName(s perfSeries, startMs, endMs int64) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%d\x00%d", s.name, s.source, s.unit, startMs, endMs)))
	name := []rune(s.name)
	if len(name) > 24 {
		name = name[:24]
	}
	return fmt.Sprintf("%s_%s_%s_%d_%d.csv", sanitizeCSVPart(string(name)), sanitizeCSVPart(s.source),
		hex.EncodeToString(sum[:8]), startMs, endMs)
}

func sanitizeCSVPart(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < 0x20 || r == 0x7F {
			return '_'
		}
		return r
	}, s)
}

// csvContent is one series' file text: header, then one row per sample
// (`time,value,extra,(time-start)/1000f`), sampled every second.
func csvContent(s perfSeries, startMs, endMs int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "RecordTime,%s(%s),extra,SimpleTime\n", s.name, s.unit)
	for t := startMs; t <= endMs; t += 1000 {
		fmt.Fprintf(&b, "%d,%s,,%s\n", t, javaFloat(sampleValue(s, startMs, t)), javaFloat(float64(t-startMs)/1000))
	}
	return b.String()
}

// gbkTable holds the GBK code of every non-ASCII character SoloPi's
// built-in series and item names use. The simulator has no full GBK
// codec (golang.org/x/text is not available); these are the standard
// GB2312/GBK two-byte codes.
var gbkTable = map[rune]uint16{
	'上': 0xC9CF, '下': 0xCFC2, '个': 0xB8F6, '全': 0xC8AB, '内': 0xC4DA, '刷': 0xCBA2, '功': 0xB9A6,
	'占': 0xD5BC, '响': 0xCFEC, '均': 0xBEF9, '存': 0xB4E6, '实': 0xCAB5, '局': 0xBED6, '帧': 0xD6A1,
	'平': 0xC6BD, '应': 0xD3A6, '度': 0xB6C8, '延': 0xD1D3, '态': 0xCCAC, '数': 0xCAFD, '新': 0xD0C2,
	'时': 0xCAB1, '最': 0xD7EE, '次': 0xB4CE, '比': 0xB1C8, '池': 0xB3D8, '流': 0xC1F7, '清': 0xC7E5,
	'温': 0xCEC2, '状': 0xD7B4, '率': 0xC2CA, '用': 0xD3C3, '电': 0xB5E7, '程': 0xB3CC, '累': 0xC0DB,
	'络': 0xC2E7, '网': 0xCDF8, '耗': 0xBAC4, '行': 0xD0D0, '计': 0xBCC6, '进': 0xBDF8, '迟': 0xB3D9,
	'速': 0xCBD9, '量': 0xC1BF, '长': 0xB3A4, '间': 0xBCE4, '零': 0xC1E3,
}

// encodeCharset encodes text in a KEY_OUTPUT_CHARSET charset the way a
// Java OutputStreamWriter does: unmappable characters become '?'. GB2312
// and GB18030 share GBK's codes for every character in gbkTable; BIG5 is
// approximated by ASCII plus '?'.
func encodeCharset(text, charset string) []byte {
	switch strings.ToUpper(charset) {
	case "UTF-8":
		return []byte(text)
	case "UTF-16":
		// Java's "UTF-16" encoder writes a big-endian BOM first.
		out := []byte{0xFE, 0xFF}
		for _, u := range utf16.Encode([]rune(text)) {
			out = append(out, byte(u>>8), byte(u))
		}
		return out
	case "ISO-8859-1":
		out := make([]byte, 0, len(text))
		for _, r := range text {
			if r < 0x100 {
				out = append(out, byte(r))
			} else {
				out = append(out, '?')
			}
		}
		return out
	case "GBK", "GB2312", "GB18030":
		out := make([]byte, 0, len(text))
		for _, r := range text {
			switch c, found := gbkTable[r]; {
			case r < 0x80:
				out = append(out, byte(r))
			case found:
				out = append(out, byte(c>>8), byte(c))
			default:
				out = append(out, '?')
			}
		}
		return out
	}
	out := make([]byte, 0, len(text))
	for _, r := range text {
		if r < 0x80 {
			out = append(out, byte(r))
		} else {
			out = append(out, '?')
		}
	}
	return out
}

// DecodeCharset is the inverse for previews (history getPerformance).
func DecodeCharset(data []byte, charset string) string {
	switch strings.ToUpper(charset) {
	case "GBK", "GB2312", "GB18030":
		rev := make(map[uint16]rune, len(gbkTable))
		for r, c := range gbkTable {
			rev[c] = r
		}
		var b strings.Builder
		for i := 0; i < len(data); i++ {
			if data[i] < 0x80 || i+1 >= len(data) {
				if data[i] < 0x80 {
					b.WriteByte(data[i])
				} else {
					b.WriteRune('\uFFFD')
				}
				continue
			}
			if r, found := rev[uint16(data[i])<<8|uint16(data[i+1])]; found {
				b.WriteRune(r)
			} else {
				b.WriteRune('\uFFFD')
			}
			i++
		}
		return b.String()
	case "ISO-8859-1":
		rs := make([]rune, len(data))
		for i, c := range data {
			rs[i] = rune(c)
		}
		return string(rs)
	case "UTF-16":
		if len(data) >= 2 && data[0] == 0xFE && data[1] == 0xFF {
			data = data[2:]
		}
		u := make([]uint16, len(data)/2)
		for i := range u {
			u[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
		}
		return string(utf16.Decode(u))
	}
	return strings.ToValidUTF8(string(data), "\uFFFD")
}
