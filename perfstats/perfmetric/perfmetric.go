// Package perfmetric names SoloPi's performance series: the budget
// metrics of run --perf-budget (cpu, memory, fps, ...), the item that
// records each and its English name beside SoloPi's own (Chinese or
// English, as KEY_USE_LANGUAGE chose). It is a table, under both the
// statistics (perfstats) and the reports that show them.
package perfmetric

import "strings"

// Def is one budget metric: the SoloPi item that records it and how
// its series is recognised (the source, and SoloPi's name in Chinese or
// English, exact or as a prefix when SoloPi appends the process).
type Def struct {
	Key, Item, English string
	// Floor: the metric's natural limit is a floor (higher is better).
	Floor  bool
	source string
	zh, en string
	prefix bool
}

// defs are SoloPi's built-in series (docs/file-formats.md).
var defs = []Def{
	{Key: "cpu", Item: "CPU", English: "app CPU usage", source: "CPU", zh: "应用进程-", en: "App Process-", prefix: true},
	{Key: "cpu_global", Item: "CPU", English: "device CPU usage", source: "CPU", zh: "全局占用", en: "Global Usage"},
	{Key: "memory", Item: "Memory", English: "app memory (PSS)", source: "Memory", zh: "PSS-", en: "PSS-", prefix: true},
	{Key: "memory_private_dirty", Item: "Memory", English: "app private dirty memory", source: "Memory", zh: "PrivateDirty-", en: "PrivateDirty-", prefix: true},
	{Key: "memory_global", Item: "Memory", English: "device memory in use", source: "Memory", zh: "全局占用", en: "Global Usage"},
	{Key: "fps", Item: "FPS", English: "frame rate", source: "FPS", zh: "帧率", en: "Frame Rate", Floor: true},
	{Key: "jank_count", Item: "FPS", English: "jank count", source: "FPS", zh: "延迟次数", en: "Jank Count"},
	{Key: "jank_max", Item: "FPS", English: "longest jank", source: "FPS", zh: "最长延迟时间", en: "Max Jank Time"},
	{Key: "jank_ratio", Item: "FPS", English: "jank ratio", source: "FPS", zh: "延迟占比", en: "Jank Ratio"},
	{Key: "battery_current", Item: "Battery", English: "battery current", source: "Battery", zh: "实时电流", en: "Real-time Current"},
	{Key: "battery_power", Item: "Battery", English: "battery power", source: "Battery", zh: "实时功率", en: "Real-time Power"},
	{Key: "network_down", Item: "Network", English: "device download speed", source: "Network", zh: "全局下行速率", en: "Global Downlink Speed"},
	{Key: "network_up", Item: "Network", English: "device upload speed", source: "Network", zh: "全局上行速率", en: "Global Uplink Speed"},
	{Key: "response_time", Item: "Response", English: "response time", source: "Response", zh: "响应耗时", en: "Response Time"},
	{Key: "refresh_time", Item: "Response", English: "refresh time", source: "Response", zh: "刷新耗时", en: "Refresh Time"},
	{Key: "threads", Item: "Status", English: "app thread count", source: "ThreadCount", zh: "应用进程-", en: "App Process-", prefix: true},
	{Key: "vm_rss", Item: "Status", English: "app resident memory", source: "VmRSS", zh: "应用进程-", en: "App Process-", prefix: true},
	{Key: "temperature", Item: "Temperature", English: "CPU temperature", source: "Temperature", zh: "CPU温度", en: "CPU Temperature"},
}

// Matches reports whether a recorded series (SoloPi's name and source)
// is this metric.
func (d *Def) Matches(name, source string) bool {
	if source != d.source {
		return false
	}
	if d.prefix {
		return strings.HasPrefix(name, d.zh) || strings.HasPrefix(name, d.en)
	}
	return name == d.zh || name == d.en
}

// Of names a recorded series (SoloPi's name and source) as a budget
// metric: its key and English name; ok false for a series no budget names.
func Of(name, source string) (key, english string, ok bool) {
	for i := range defs {
		if d := &defs[i]; d.Matches(name, source) {
			return d.Key, d.English, true
		}
	}
	return "", "", false
}

// Lookup is the metric named key (lower case), nil for none.
func Lookup(key string) *Def {
	for i := range defs {
		if defs[i].Key == key {
			return &defs[i]
		}
	}
	return nil
}

// Keys are the metrics' names, in the table's order.
func Keys() []string {
	keys := make([]string, len(defs))
	for i, d := range defs {
		keys[i] = d.Key
	}
	return keys
}
